/**
 * The tee and its senders without a kernel, against local sockets: the pool a tee receives for (the filter's `pool`
 * field, and which pool destinations it runs), a sender kept across a change that does not touch how it sends, the
 * TCP queue's storage bounded through an outage, and what close() leaves unsent counted.
 */
import { createSocket, type Socket as DgramSocket } from "node:dgram";
import { createServer, type AddressInfo } from "node:net";
import { EventBus } from "../../../core/index.js";
import type { Inbound } from "../../events/contract.js";
import type { FlowRecord, ReceivedDatagram } from "../../flows/contract.js";
import type { ForwardingConfig } from "../context.js";
import { runnable } from "../lib/runtime.js";
import type { Filter, PoolDestinationWire, RuntimeDestination } from "../lib/types.js";
import { StreamSender } from "../senders/senders.js";
import { WarehouseSender } from "../senders/warehouseSender.js";
import { CORE_POOL, Tee, flowSubjectOf, zeroCounters, type DestinationSource } from "../services/Tee.js";
import { until } from "../../../test/support/wait.js";

const config: ForwardingConfig = {
  maxDestinations: 100,
  queueSize: 10,
  reconnectMinMs: 50,
  reconnectMaxMs: 200,
  reloadMs: 3_600_000,
  udpFastPath: false,
  relay: { udp: null, bindAddress: "0.0.0.0", sockets: null, receiveBufferBytes: 33554432, spread: "datagram" },
  warehouse: {
    projectId: "p",
    dataset: "nms",
    syslogTable: "syslog_events",
    trapTable: "trap_events",
    flowTable: "flow_records",
    batchRows: 500,
    flushMs: 10,
    metadataTokenUrl: "http://127.0.0.1:1/token",
    scope: "s",
  },
};
const log = { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined, child: () => log };

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function destination(over: Partial<PoolDestinationWire> & { id: string; port: number }): RuntimeDestination {
  const wire: PoolDestinationWire = {
    name: over.id,
    dest_kind: "syslog_udp",
    source_kind: "syslog",
    host: "127.0.0.1",
    pool: null,
    rate_limit_per_sec: null,
    verbatim: true,
    ca_cert: null,
    community_sealed: null,
    service_account_sealed: null,
    filter: null,
    version: "1",
    ...over,
  };
  return runnable(wire, { unseal: (s) => s });
}

const poolIs = (pool: string): Filter => ({ mode: "all", conditions: [{ field: "pool", op: "eq", value: pool }] });

function syslog(text: string): Inbound {
  const bytes = Buffer.from(`<13>Nov 24 10:00:00 host app: ${text}`);
  return {
    kind: "syslog",
    transport: "udp",
    listener: "syslog.udp",
    source_ip: "192.0.2.7",
    received_at_ms: Date.now(),
    syslog: null,
    trap: null,
    raw: bytes.toString(),
    bytes,
    malformed: false,
  } as unknown as Inbound;
}

/** A source whose destinations the test sets. */
class FixedSource implements DestinationSource {
  constructor(public destinations: RuntimeDestination[]) {}
  async runtimeDestinations() {
    return this.destinations;
  }
  onChange() {}
}

const sinks: DgramSocket[] = [];
const tees: Tee[] = [];

/** A UDP receiver collecting what it gets. */
async function udpSink(): Promise<{ port: number; got: string[] }> {
  const socket = createSocket("udp4");
  sinks.push(socket);
  const got: string[] = [];
  socket.on("message", (m) => got.push(m.toString()));
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", r));
  return { port: socket.address().port, got };
}

async function startTee(pool: string, destinations: RuntimeDestination[]): Promise<{ tee: Tee; bus: EventBus; source: FixedSource }> {
  const bus = new EventBus(log as never);
  const tee = new Tee({ config, log, bus, pool });
  tees.push(tee);
  const source = new FixedSource(destinations);
  await tee.start(source);
  return { tee, bus, source };
}

afterEach(async () => {
  for (const t of tees.splice(0)) await t.stop();
  for (const s of sinks.splice(0)) s.close();
});

describe("the pool a tee receives for", () => {
  it.each([
    ["a remote poller's tee", "edge"],
    ["the core's tee", CORE_POOL],
  ])("%s puts its pool in the filter subject: `pool eq` its pool forwards, another pool drops", async (_, pool) => {
    const rx = await udpSink();
    const mine = destination({ id: "mine", port: rx.port, filter: poolIs(pool) });
    const other = destination({ id: "other", port: rx.port, filter: poolIs("elsewhere") });
    const { tee, bus } = await startTee(pool, [mine, other]);
    await bus.emit("events.received", { events: [syslog("one"), syslog("two")] });
    await until("both forwarded", async () => (rx.got.length >= 2 ? true : null));
    expect(tee.status("mine")).toMatchObject({ forwarded: 2, dropped_filter: 0 });
    expect(tee.status("other")).toMatchObject({ forwarded: 0, dropped_filter: 2 });
    expect(rx.got.map((l) => l.slice(l.lastIndexOf(" ") + 1))).toEqual(["one", "two"]);
  });

  it("a flow record's subject carries the pool too", () => {
    const d = { exporter: "192.0.2.1", received_at_ms: 0, bytes: Buffer.alloc(0), records: [] } as ReceivedDatagram;
    const rec = { src: "10.0.0.1", dst: "10.0.0.2", proto: 6, src_port: 1, dst_port: 2, src_as: 0, dst_as: 0 } as unknown as FlowRecord;
    expect(flowSubjectOf(d, rec, "edge").pool).toBe("edge");
    expect(destination({ id: "f", port: 1, source_kind: "flow", dest_kind: "flow_udp", filter: poolIs("edge") }).filter(flowSubjectOf(d, rec, "edge"))).toBe(
      true,
    );
  });

  it("a tee runs the destinations without a pool and its own pool's; another pool's stay idle", async () => {
    const rx = await udpSink();
    const { tee, bus } = await startTee(CORE_POOL, [
      destination({ id: "every", port: rx.port }),
      destination({ id: "own", port: rx.port, pool: CORE_POOL }),
      destination({ id: "edge", port: rx.port, pool: "edge" }),
    ]);
    await bus.emit("events.received", { events: [syslog("x")] });
    await until("two copies", async () => (rx.got.length >= 2 ? true : null));
    expect(tee.status("every").forwarded).toBe(1);
    expect(tee.status("own").forwarded).toBe(1);
    expect(tee.status("edge")).toMatchObject({ forwarded: 0, connection: "idle" });
  });
});

describe("a destination changed", () => {
  it("keeps its sender (and its queue) when only the name, filter or rate limit changed; a new target gets a new one", async () => {
    const port = await closedPort();
    const first = destination({ id: "d", port, dest_kind: "syslog_tcp" });
    const { tee, bus, source } = await startTee("edge", [first]);
    const sender = tee.running.get("d")!.sender;
    await bus.emit("events.received", { events: [syslog("a"), syslog("b"), syslog("c")] });
    expect(tee.status("d").queued).toBe(3);
    source.destinations = [destination({ id: "d", port, dest_kind: "syslog_tcp", name: "renamed", rate_limit_per_sec: 5, version: "2" })];
    await tee.reload();
    expect(tee.running.get("d")!.sender).toBe(sender);
    expect(tee.status("d")).toMatchObject({ queued: 3, dropped_queue: 0 });
    // A new port is a new connection: the old sender closes, and what it still held is counted, not lost silently.
    source.destinations = [destination({ id: "d", port: await closedPort(), dest_kind: "syslog_tcp", version: "3" })];
    await tee.reload();
    expect(tee.running.get("d")!.sender).not.toBe(sender);
    expect(tee.status("d")).toMatchObject({ queued: 0, dropped_queue: 3 });
  });
});

describe("the TCP sender", () => {
  it("holds O(queueSize) slots however many messages an outage drops, and counts every one", async () => {
    const counters = zeroCounters();
    const queueSize = 100;
    const s = new StreamSender(false, { host: "127.0.0.1", port: await closedPort(), caCert: null }, counters, {
      queueSize,
      reconnectMinMs: 50,
      reconnectMaxMs: 200,
    });
    const n = 100_000;
    for (let i = 0; i < n; i++) s.send(Buffer.from(`message ${i}`));
    expect(counters).toMatchObject({ queued: queueSize, dropped_queue: n - queueSize, forwarded: 0, send_errors: 0 });
    expect(s.storedSlots).toBeLessThanOrEqual(2 * queueSize + 1024);
    await s.close();
  });

  it("counts refused connects as connection errors, never as lost messages; close() counts what it leaves queued", async () => {
    const counters = zeroCounters();
    const s = new StreamSender(false, { host: "127.0.0.1", port: await closedPort(), caCert: null }, counters, {
      queueSize: 10,
      reconnectMinMs: 10,
      reconnectMaxMs: 20,
    });
    for (let i = 0; i < 5; i++) s.send(Buffer.from(`m ${i}`));
    await until("a few refused connects", async () => (counters.connection_errors >= 3 ? true : null));
    expect(counters).toMatchObject({ send_errors: 0, queued: 5, last_error_class: "connect_refused" });
    await s.close();
    expect(counters).toMatchObject({ queued: 0, dropped_queue: 5, forwarded: 0, send_errors: 0 });
    // Every message in exactly one counter.
    expect(counters.forwarded + counters.send_errors + counters.dropped_queue + counters.queued).toBe(5);
  });

  it("delivers to a receiver: every message in exactly one counter", async () => {
    const got: Buffer[] = [];
    const server = createServer((c) => c.on("data", (b) => got.push(b)));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const counters = zeroCounters();
    const s = new StreamSender(false, { host: "127.0.0.1", port: (server.address() as AddressInfo).port, caCert: null }, counters, {
      queueSize: 10,
      reconnectMinMs: 10,
      reconnectMaxMs: 20,
    });
    for (let i = 0; i < 25; i++) s.send(Buffer.from(`m ${i}`));
    await until("connected and sent", async () => (counters.forwarded === 10 ? true : null));
    expect(counters).toMatchObject({ dropped_queue: 15, queued: 0, send_errors: 0, connection_errors: 0 });
    await s.close();
    server.close();
  });
});

describe("the warehouse sender", () => {
  it("close() counts the rows it could not send as dropped_queue and zeroes queued", async () => {
    const counters = zeroCounters();
    const w = new WarehouseSender(
      {
        host: "127.0.0.1",
        port: await closedPort(),
        caCert: null,
        serviceAccountJson: null,
        projectId: "p",
        dataset: "nms",
        table: "t",
        batchRows: 500,
        flushMs: 10,
        queueSize: 100,
        retryMinMs: 1000,
        retryMaxMs: 2000,
        // Nothing answers: the token cannot be had, the rows stay queued and the sender backs off.
        metadataTokenUrl: `http://127.0.0.1:${await closedPort()}/token`,
        scope: "s",
      },
      counters,
    );
    for (let i = 0; i < 4; i++) w.send({ i });
    await until("a failed request", async () => (counters.connection_errors > 0 ? true : null));
    expect(counters).toMatchObject({ queued: 4, send_errors: 0, dropped_queue: 0 });
    await w.close();
    expect(counters).toMatchObject({ queued: 0, dropped_queue: 4, forwarded: 0, send_errors: 0 });
  });
});
