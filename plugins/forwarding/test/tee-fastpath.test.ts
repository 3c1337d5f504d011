/**
 * The UDP fast path: a verbatim, unfiltered, unlimited syslog_udp destination to an address is relayed by the events
 * plugin's UDP listener from its reader thread, as datagrams arrive; what the TCP listener receives still goes through
 * the tee to the same destination; the counters add both. A destination with a filter (or a rate limit) leaves the
 * fast path: the tee filters and counts again.
 */
import { connect } from "node:net";
import { alertsPlugin } from "../../alerts/index.js";
import { SyslogMirror } from "../../events/contract.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { sendUdp, startRsyslogReceiver, stopAllSyslogPeers, type RsyslogReceiver } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";

type Row = Record<string, unknown>;

let k: TestKernel;
let rx: RsyslogReceiver;
let udpPort: number;
let tcpPort: number;

const tee = () => k.context("forwarding").get(ForwardingTee);
const mirror = () => k.context("events").get(SyslogMirror);
const status = async (id: string) => (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row;

function sendTcp(lines: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(tcpPort, "127.0.0.1", () => s.end(lines.map((l) => `${l}\n`).join("")));
    s.on("error", reject);
    s.on("close", () => resolve());
  });
}

beforeAll(async () => {
  rx = await startRsyslogReceiver({ protocol: "udp" });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: 0, tcp: 0, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: null },
      },
    },
  });
  const list = (await k.request("GET", "/listeners")).body as { listeners: Row[]; unbound: string[] };
  // The forwarding plugin's relay port is off unless configured: declared, not bound.
  expect(list.unbound).toContain("forwarding.relay.udp");
  const listeners = list.listeners;
  udpPort = listeners.find((l) => l.name === "syslog.udp")!.port as number;
  tcpPort = listeners.find((l) => l.name === "syslog.tcp")!.port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
  await stopAllSyslogPeers();
});

it("relays UDP datagrams from the reader thread and TCP messages through the tee, counting both", async () => {
  const res = await k.request("POST", "/forwarding/destinations", {
    body: { name: "fast", dest_kind: "syslog_udp", source_kind: "syslog", target: `127.0.0.1:${rx.port}` },
  });
  expect(res.status).toBe(201);
  const id = (res.body as { id: string }).id;
  await tee().reload();
  // The readers take the new target by message, a moment after the reload; a datagram that beats it goes through the tee
  // (the last test). Here all 30 must go from the readers: wait until a reader reports the target, and a little more.
  await until("the readers mirror it", async () => (mirror().counts().has(id) ? true : null));
  await new Promise((r) => setTimeout(r, 300));
  const tag = `fp-${Date.now()}`;
  const udp = Array.from({ length: 30 }, (_, i) => `<13>Nov 24 09:00:00 edge app: ${tag} udp ${i}`);
  const tcp = Array.from({ length: 5 }, (_, i) => `<13>Nov 24 09:00:00 edge app: ${tag} tcp ${i}`);
  for (const l of udp) await sendUdp(udpPort, l);
  await sendTcp(tcp);
  const got = await until("every message relayed", async () => {
    const mine = rx.messages().filter((m) => m.includes(tag));
    return mine.length >= 35 ? mine : null;
  });
  expect([...got].sort()).toEqual([...udp, ...tcp].sort());
  // Each exactly once: the tee skipped what the UDP listener's thread already relayed.
  await new Promise((r) => setTimeout(r, 500));
  expect(rx.messages().filter((m) => m.includes(tag))).toHaveLength(35);
  const s = await until("the counters", async () => {
    const st = await status(id);
    return st.forwarded === 35 ? st : null;
  });
  expect(s).toMatchObject({ send_errors: 0, dropped_filter: 0, connection: "ready" });
  // The 30 datagrams went out from the UDP listener's reader thread (the tee sent the 5 TCP ones).
  expect(mirror().counts().get(id)).toEqual({ sent: 30, errors: 0 });

  // A filter takes it off the fast path: the tee filters (and counts) again.
  const put = await k.request("PUT", `/forwarding/destinations/${id}`, {
    body: {
      name: "fast",
      dest_kind: "syslog_udp",
      source_kind: "syslog",
      target: `127.0.0.1:${rx.port}`,
      filter: { mode: "all", conditions: [{ field: "message", op: "contains", value: "keep" }] },
    },
  });
  expect(put.status).toBe(200);
  await tee().reload();
  const tag2 = `fp2-${Date.now()}`;
  for (const l of [`<13>Nov 24 09:00:00 edge app: ${tag2} keep`, `<13>Nov 24 09:00:00 edge app: ${tag2} drop`]) await sendUdp(udpPort, l);
  await until("the kept one", async () => (rx.messages().some((m) => m.includes(`${tag2} keep`)) ? true : null));
  const after = await until("the filtered one counted", async () => {
    const st = await status(id);
    return st.dropped_filter === 1 ? st : null;
  });
  expect(after.forwarded).toBe(36);
  expect(rx.messages().some((m) => m.includes(`${tag2} drop`))).toBe(false);
  expect(mirror().counts().get(id)).toEqual({ sent: 30, errors: 0 });
  expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBe(204);
});

it("relays each datagram exactly once while a destination joins and leaves the fast path under traffic", async () => {
  const filtered = {
    name: "switch",
    dest_kind: "syslog_udp",
    source_kind: "syslog",
    target: `127.0.0.1:${rx.port}`,
    // Every message passes (severity 0 to 7), but a filter keeps it on the tee.
    filter: { mode: "all", conditions: [{ field: "severity", op: "lte", value: "7" }] },
  };
  const plain = { ...filtered, filter: null };
  const res = await k.request("POST", "/forwarding/destinations", { body: plain });
  expect(res.status).toBe(201);
  const id = (res.body as { id: string }).id;
  await tee().reload();
  const tag = `sw-${Date.now()}`;
  const sent: string[] = [];
  let sending = true;
  // A datagram every ~2 ms from the moment the destination exists, through each change: those the readers read just
  // before or after a change must reach the collector once, by the reader or by the tee.
  const traffic = (async () => {
    for (let i = 0; sending; i++) {
      const line = `<13>Nov 30 01:00:00 edge app: ${tag} ${i}`;
      sent.push(line);
      await sendUdp(udpPort, line);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  for (const body of [filtered, plain, filtered, plain]) {
    await new Promise((r) => setTimeout(r, 150));
    expect((await k.request("PUT", `/forwarding/destinations/${id}`, { body })).status).toBe(200);
    await tee().reload();
  }
  await new Promise((r) => setTimeout(r, 150));
  sending = false;
  await traffic;
  await until(
    "every message relayed",
    async () => (rx.messages().filter((m) => m.includes(tag)).length >= sent.length ? true : null),
    25_000,
    () => {
      const got = new Set(rx.messages().filter((m) => m.includes(tag)));
      return `sent ${sent.length}, got ${got.size}, missing ${sent
        .map((l, i) => (got.has(l) ? -1 : i))
        .filter((i) => i >= 0)
        .join(",")}`;
    },
  );
  await new Promise((r) => setTimeout(r, 500));
  const got = rx.messages().filter((m) => m.includes(tag));
  expect(got.length).toBe(sent.length);
  expect([...got].sort()).toEqual([...sent].sort());
  expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBe(204);
});
