/**
 * The tee against real receivers: rsyslogd listening over UDP, TCP (octet counting) and TLS (its gtls driver, a
 * test certificate), fed by our own syslog listener. Verbatim relays equal the bytes sent; re-rendered ones are
 * RFC 5424; filters and the rate limit (within 5 %) are counted; a TCP receiver killed mid-stream is reconnected
 * to, and every message is accounted for exactly: delivered, or counted as lost.
 */
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { startRsyslogReceiver, stopAllSyslogPeers, udpSender, type RsyslogReceiver } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";

type Row = Record<string, unknown>;

let k: TestKernel;
let syslogUdp: number;
const receivers: Record<"udp" | "tcp" | "tls", RsyslogReceiver | null> = { udp: null, tcp: null, tls: null };

async function createDestination(body: Row): Promise<string> {
  const res = await k.request("POST", "/forwarding/destinations", { body: { source_kind: "syslog", ...body } });
  if (res.status !== 201) throw new Error(`create destination: ${res.status} ${JSON.stringify(res.body)}`);
  await k.context("forwarding").get(ForwardingTee).reload();
  return (res.body as { id: string }).id;
}

async function status(id: string): Promise<Row> {
  const res = await k.request("GET", `/forwarding/destinations/${id}/status`);
  expect(res.status).toBe(200);
  return res.body as Row;
}

async function remove(id: string): Promise<void> {
  expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBeLessThan(300);
  await k.context("forwarding").get(ForwardingTee).reload();
}

/**
 * Sends the lines to our syslog UDP listener from one socket (one sender: the ingest workers keep one sender's order,
 * not the order of several), a few at a time (loopback UDP, no pacing needed at this volume).
 */
async function send(lines: (string | Buffer)[]): Promise<void> {
  const sender = await udpSender();
  try {
    for (const line of lines) await sender.send(syslogUdp, line);
  } finally {
    sender.close();
  }
}

beforeAll(async () => {
  [receivers.udp, receivers.tcp, receivers.tls] = await Promise.all([
    startRsyslogReceiver({ protocol: "udp" }),
    startRsyslogReceiver({ protocol: "tcp" }),
    startRsyslogReceiver({ protocol: "tls" }),
  ]);
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: null },
        // A small queue, so the TCP outage below overflows it.
        forwarding: { reconnectMinMs: 100, reconnectMaxMs: 400, queueSize: 20 },
      },
    },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  syslogUdp = listeners.listeners.find((l) => l.name === "syslog.udp")!.port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
  await stopAllSyslogPeers();
});

describe("verbatim relay", () => {
  it.each(["udp", "tcp", "tls"] as const)("over %s, rsyslog receives exactly the bytes sent", async (protocol) => {
    const rx = receivers[protocol]!;
    const id = await createDestination({
      name: `verbatim-${protocol}`,
      dest_kind: `syslog_${protocol}`,
      target: `127.0.0.1:${rx.port}`,
      ...(protocol === "tls" ? { ca_cert: rx.certPem } : {}),
    });
    const tag = `v-${protocol}-${Date.now()}`;
    const lines = [
      `<34>1 2026-11-24T09:00:00.123Z core-sw1 sshd 812 ID47 [exampleSDID@32473 iut="3" eventSource="App\\]x"] ${tag} 5424 grüße ✓`,
      `<13>Nov 24 09:00:01 edge-rtr2 kernel: ${tag} bsd line`,
      `<189>123: *Mar  1 00:00:12.345: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down ${tag}`,
      `<14>${tag} only a pri`,
    ];
    await send(lines);
    const got = await until(`${protocol} receiver has ${lines.length} lines`, async () => {
      const mine = rx.messages().filter((m) => m.includes(tag));
      return mine.length >= lines.length ? mine : null;
    });
    expect(got).toEqual(lines);
    // Over UDP the ingest workers' reader threads relay (the fast path) and report their counts every 250 ms.
    const s = await until("the relay counted", async () => {
      const st = await status(id);
      return st.forwarded === lines.length ? st : null;
    });
    expect(s).toMatchObject({ forwarded: lines.length, send_errors: 0, dropped_filter: 0, dropped_queue: 0 });
    expect(s.connection).toBe(protocol === "udp" ? "ready" : "connected");
    await remove(id);
  });
});

describe("re-rendered relay", () => {
  it("sends RFC 5424 built from the parsed fields, keeping structured data and the sender's time", async () => {
    const rx = receivers.udp!;
    const id = await createDestination({ name: "rendered", dest_kind: "syslog_udp", target: `127.0.0.1:${rx.port}`, verbatim: false });
    const tag = `r-${Date.now()}`;
    await send([`<165>1 2026-11-24T09:10:00.500Z host-a app 42 MID [a@1 x="q\\"uote"] ${tag} one`, `<13>Nov 24 09:00:01 edge-rtr2 kernel: ${tag} two`]);
    const got = await until("rendered lines", async () => {
      const mine = rx.messages().filter((m) => m.includes(tag));
      return mine.length >= 2 ? mine : null;
    });
    expect(got[0]).toBe(`<165>1 2026-11-24T09:10:00.500Z host-a app 42 MID [a@1 x="q\\"uote"] ${tag} one`);
    // RFC 3164 has no year and no structured data: the parsed time (this year, UTC) and NILVALUEs.
    expect(got[1]).toMatch(new RegExp(`^<13>1 \\d{4}-11-24T\\d\\d:00:01\\.000Z edge-rtr2 kernel - - - ${tag} two$`));
    await remove(id);
  });
});

describe("filters and rate limit", () => {
  it("forwards only what the filter passes and counts the rest", async () => {
    const rx = receivers.udp!;
    const id = await createDestination({
      name: "filtered",
      dest_kind: "syslog_udp",
      target: `127.0.0.1:${rx.port}`,
      filter: {
        mode: "all",
        conditions: [
          { field: "app_name", op: "eq", value: "sshd" },
          { field: "severity", op: "lte", value: "4" },
        ],
      },
    });
    const tag = `f-${Date.now()}`;
    await send([
      `<36>1 2026-11-24T09:00:00Z h sshd - - - ${tag} pass warning`,
      `<38>1 2026-11-24T09:00:00Z h sshd - - - ${tag} fail info`,
      `<36>1 2026-11-24T09:00:00Z h cron - - - ${tag} fail app`,
      `<33>1 2026-11-24T09:00:00Z h sshd - - - ${tag} pass alert`,
    ]);
    await until("filter counted", async () => ((await status(id)).dropped_filter === 2 ? true : null));
    const got = await until("filtered lines", async () => {
      const mine = rx.messages().filter((m) => m.includes(tag));
      return mine.length >= 2 ? mine : null;
    });
    expect(got.map((m) => m.slice(m.indexOf(tag)))).toEqual([`${tag} pass warning`, `${tag} pass alert`]);
    expect(await status(id)).toMatchObject({ forwarded: 2, dropped_filter: 2 });
    await remove(id);
  });

  it("holds the rate limit within 5 %: one second's worth at once, then the rate; the rest is counted", async () => {
    const rx = receivers.udp!;
    const rate = 200;
    const id = await createDestination({ name: "limited", dest_kind: "syslog_udp", target: `127.0.0.1:${rx.port}`, rate_limit_per_sec: rate });
    const tee = k.context("forwarding").get(ForwardingTee);
    const tag = `rl-${Date.now()}`;
    // 4 s at three times the limit, paced in small steps so the demand never falls below it.
    const demand = 3 * rate;
    const started = performance.now();
    let sent = 0;
    for (let now = 0; now < 4000; now = performance.now() - started) {
      const lines: string[] = [];
      for (const due = Math.ceil((now / 1000) * demand); sent < due; sent++) lines.push(`<14>1 - h app - - - ${tag} ${sent}`);
      await send(lines);
      await new Promise((r) => setTimeout(r, 5));
    }
    const sendSecs = (performance.now() - started) / 1000;
    // Read this replica's counters until every message is counted; the moment they are bounds the bucket's window.
    let s = tee.status(id);
    let windowSecs = sendSecs;
    for (const deadline = performance.now() + 10_000; s.forwarded + s.dropped_rate_limit < sent && performance.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 5));
      s = tee.status(id);
      windowSecs = (performance.now() - started) / 1000;
    }
    // The bucket holds one second's worth (`rate`) when the stream starts, then refills at `rate`: exactly, what
    // passes by time t is at most rate + rate × t, and at least that while the demand stays above the rate.
    const capacity = rate;
    const detail = JSON.stringify({ sent, forwarded: s.forwarded, sendSecs, windowSecs });
    expect({ detail, over: s.forwarded <= capacity + rate * windowSecs * 1.05 }).toEqual({ detail, over: true });
    expect({ detail, under: s.forwarded >= capacity + rate * sendSecs * 0.95 - 2 }).toEqual({ detail, under: true });
    expect(s.forwarded + s.dropped_rate_limit).toBe(sent);
    await until(
      "rsyslog has the forwarded ones",
      async () => (rx.messages().filter((m) => m.includes(tag)).length === s.forwarded ? true : null),
      25_000,
      () => `rsyslog has ${rx.messages().filter((m) => m.includes(tag)).length} of ${s.forwarded} (${detail})`,
    );
    await remove(id);
  });
});

describe("a TCP receiver killed mid-stream", () => {
  it("reconnects when it is back, delivers what was queued, and counts what was lost", async () => {
    let rx = receivers.tcp!;
    const port = rx.port;
    const id = await createDestination({ name: "tcp-restart", dest_kind: "syslog_tcp", target: `127.0.0.1:${port}` });
    const tag = `k-${Date.now()}`;
    await send(Array.from({ length: 20 }, (_, i) => `<14>1 - h app - - - ${tag} before ${i}`));
    await until("first part delivered", async () => (rx.messages().filter((m) => m.includes(`${tag} before`)).length === 20 ? true : null));
    await rx.stop();
    const down = await until("disconnect seen", async () => {
      const st = await status(id);
      return st.connection !== "connected" ? st : null;
    });
    // Reconnects are refused while the receiver is down: connection errors, which lose no message.
    await until("a reconnect refused", async () => ((await status(id)).last_error_class === "connect_refused" ? true : null));
    const delta = (after: Row, key: string) => (after[key] as number) - (down[key] as number);
    // 30 messages into a queue of 20: the 10 oldest are pushed out, and counted.
    await send(Array.from({ length: 30 }, (_, i) => `<14>1 - h app - - - ${tag} during ${i}`));
    const queued = await until("all 30 taken by the tee", async () => {
      const st = await status(id);
      return (st.queued as number) + delta(st, "dropped_queue") === 30 ? st : null;
    });
    expect(queued.connection).not.toBe("connected");
    expect(queued).toMatchObject({ queued: 20 });
    rx = receivers.tcp = await startRsyslogReceiver({ protocol: "tcp", port });
    const s = await until("reconnected and drained", async () => {
      const st = await status(id);
      return st.connection === "connected" && st.queued === 0 && delta(st, "forwarded") === 20 ? st : null;
    });
    const during = await until("queued part delivered", async () => {
      const mine = rx.messages().filter((m) => m.includes(`${tag} during`));
      return mine.length >= 20 ? mine : null;
    });
    // Exact accounting: every message sent during the outage was delivered or counted as lost, none silently, none
    // twice; the refused reconnects are in connection_errors, not among the lost messages.
    expect(during.length + delta(s, "send_errors") + delta(s, "dropped_queue")).toBe(30);
    expect(during).toHaveLength(20);
    expect(during.map((m) => m.slice(m.indexOf("during")))).toEqual(Array.from({ length: 20 }, (_, i) => `during ${i + 10}`));
    expect({ forwarded: delta(s, "forwarded"), send_errors: delta(s, "send_errors"), dropped_queue: delta(s, "dropped_queue") }).toEqual({
      forwarded: 20,
      send_errors: 0,
      dropped_queue: 10,
    });
    expect(s.connection_errors as number).toBeGreaterThan(0);
    await remove(id);
  }, 60_000);
});
