/**
 * Reconnect backoff of stream destinations (pluginConfig.forwarding reconnectMinMs 50, reconnectMaxMs 400): the
 * waits between connection attempts double from reconnectMinMs and stay at reconnectMaxMs, and a connection that
 * succeeds starts the doubling afresh.
 *
 * - syslog_tcp to a closed port: each refused connect is one connection_error; the times they are counted are the
 *   attempt times. When a receiver opens the port, the next attempt connects and the queued message is delivered.
 * - syslog_tls to a TCP server that accepts and closes at once (the handshake never completes): the far end itself
 *   sees each attempt.
 */
import { createServer, type Server, type Socket } from "node:net";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { freeTcpPort, sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";

type Row = Record<string, unknown>;

const MIN = 100;
const MAX = 800;
/**
 * Slack for a loaded test machine (the whole suite on two cores): a wait may run late by LATE; a gap may also look
 * EARLY short when the sample of the attempt before it ran late. Still tight enough to tell doubling from none (the third
 * wait would be 100 against 400), a cap from none (1600 against 800), and a backoff reset from none (800 against 100).
 */
const LATE = 400;
const EARLY = 100;

let k: TestKernel;
let syslogPort: number;

const tee = () => k.context("forwarding").get(ForwardingTee);

async function createDestination(body: Row): Promise<string> {
  const res = await k.request("POST", "/forwarding/destinations", { body: { source_kind: "syslog", ...body } });
  if (res.status !== 201) throw new Error(`create destination: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

/** The samplers running (stopped after each test, failed or not). */
const watchers = new Set<NodeJS.Timeout>();
afterEach(() => {
  for (const t of watchers) clearInterval(t);
  watchers.clear();
});

/** Waits until `done()` holds or `ms` passed (the assertions after it say what was missing). */
async function waitFor(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

/** Samples a destination's connection_errors every 2 ms and keeps the time (and the last error class) of each increment. */
function watchErrors(id: string): { times: number[]; classes: (string | null)[]; stop(): void } {
  const times: number[] = [];
  const classes: (string | null)[] = [];
  let seen = tee().status(id).connection_errors;
  const timer = setInterval(() => {
    const s = tee().status(id);
    for (; seen < s.connection_errors; seen++) {
      times.push(performance.now());
      classes.push(s.last_error_class);
    }
  }, 2);
  watchers.add(timer);
  return { times, classes, stop: () => clearInterval(timer) };
}

/** The waits a doubling backoff from MIN capped at MAX gives after each failed attempt. */
const expectedGaps = (n: number) => Array.from({ length: n }, (_, i) => Math.min(MIN * 2 ** i, MAX));

const gapsOf = (times: number[]) => times.slice(1).map((t, i) => Math.round(t - times[i]));

/** Each gap is at least its expected wait (less a sampling hair) and at most that plus timer slack. */
function checkGaps(gaps: number[]): void {
  const want = expectedGaps(gaps.length);
  const bad = gaps.map((g, i) => ({ i, gap: g, want: want[i] })).filter(({ gap, want: w }) => gap < w - EARLY || gap > w + LATE);
  expect({ gaps, bad }).toEqual({ gaps, bad: [] });
}

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: null },
        forwarding: { reconnectMinMs: MIN, reconnectMaxMs: MAX },
      },
    },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  syslogPort = listeners.listeners.find((l) => l.name === "syslog.udp")!.port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
});

it("syslog_tcp to a closed port: attempts get further apart, doubling from reconnectMinMs, bounded by reconnectMaxMs; it connects once the port opens", async () => {
  const port = await freeTcpPort();
  const body = { name: "backoff-tcp", source_kind: "syslog", dest_kind: "syslog_tcp", target: `127.0.0.1:${port}` };
  // Created disabled, so the watch starts before the sender exists (it connects at once when the tee starts it).
  const id = await createDestination({ ...body, enabled: false });
  await tee().reload();
  const watch = watchErrors(id);
  expect((await k.request("PUT", `/forwarding/destinations/${id}`, { body: { ...body, enabled: true } })).status).toBe(200);
  await tee().reload();
  const line = `<14>1 2026-11-25T03:00:00.000Z backoff-host app - - - queued-${Date.now()}`;
  await sendUdp(syslogPort, line);
  // Attempts at 0, 100, 300, 700, 1500, 2300, 3100, 3900, 4700, 5500 ms: ten in ~5.5 s (with no ceiling: seven in 12 s;
  // without backoff: dozens).
  await waitFor(() => watch.times.length >= 10, 12_000);
  watch.stop();
  const gaps = gapsOf(watch.times.slice(0, 10));
  expect({ attempts: Math.min(watch.times.length, 10), gaps }).toEqual({ attempts: 10, gaps });
  checkGaps(gaps);
  // Growing: the first waits double; bounded: the later ones are all reconnectMaxMs.
  expect(gaps.slice(0, 4).every((g, i) => i === 0 || g > gaps[i - 1])).toBe(true);
  expect(Math.max(...gaps)).toBeLessThanOrEqual(MAX + LATE);
  const s = (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row;
  expect(s).toMatchObject({ forwarded: 0, send_errors: 0, dropped_queue: 0, queued: 1, last_error_class: "connect_refused" });
  expect(s.connection_errors).toBeGreaterThanOrEqual(10);

  // The receiver comes up on the port: the next attempt (within reconnectMaxMs) connects and delivers the queued frame.
  const got: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((sock) => {
    sockets.add(sock);
    sock.on("data", (b: Buffer) => got.push(b));
    sock.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
  const upAt = performance.now();
  const frame = `${Buffer.byteLength(line)} ${line}`;
  await until("the queued frame arrived", async () => Buffer.concat(got).toString("utf8") === frame, 5_000);
  expect(performance.now() - upAt).toBeLessThanOrEqual(MAX + LATE + 250);
  expect(tee().status(id)).toMatchObject({ forwarded: 1, queued: 0, connection: "connected" });

  // A connection that succeeded starts the backoff afresh: after the receiver goes away, the waits double from MIN again.
  // (The loss of the connection may count as an error itself, a reset: only the refused connects are attempts.)
  const again = watchErrors(id);
  const closedAt = performance.now();
  for (const sock of sockets) sock.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  const refused = () => again.times.filter((_, i) => again.classes[i] === "connect_refused");
  await waitFor(() => refused().length >= 4, 6_000);
  again.stop();
  const after = gapsOf([closedAt, ...refused().slice(0, 4)]);
  expect({ attempts: after.length, gaps: after }).toEqual({ attempts: 4, gaps: after });
  checkGaps(after);

  expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBe(204);
  await tee().reload();
}, 60_000);

it("syslog_tls whose handshakes fail: the far end sees the attempts further apart, up to reconnectMaxMs", async () => {
  // A TCP server that is no TLS collector: it accepts and closes at once, so no handshake completes.
  const attempts: number[] = [];
  const server: Server = createServer((sock) => {
    attempts.push(performance.now());
    sock.on("error", () => undefined);
    sock.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  try {
    const id = await createDestination({ name: "backoff-tls", dest_kind: "syslog_tls", target: `127.0.0.1:${port}` });
    await tee().reload();
    // Attempts at 0, 100, 300, 700, 1500, 2300, 3100, 3900 ms.
    await waitFor(() => attempts.length >= 8, 10_000);
    const gaps = gapsOf(attempts.slice(0, 8));
    expect({ attempts: Math.min(attempts.length, 8), gaps }).toEqual({ attempts: 8, gaps });
    checkGaps(gaps);
    const s = (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row;
    expect(s.connection_errors).toBeGreaterThanOrEqual(7);
    expect(s).toMatchObject({ forwarded: 0, send_errors: 0 });
    expect(["reset", "tls"]).toContain(s.last_error_class);
    expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBe(204);
    await tee().reload();
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}, 60_000);
