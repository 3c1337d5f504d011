/**
 * A syslog ingest thread that dies is restarted (plugins/events/ingest/IngestWorkers.ts): a parser thread killed
 * while the main thread still held its batches unstored, or in the middle of a TCP burst, comes back and every
 * message is stored exactly once; a worker thread killed comes back with its journal and its sockets on the same
 * ports (while it is down the other worker's sockets take the datagrams); a thread that throws is restarted as one
 * that is ended; drain() waits for a restart under way;
 * close() during a restart's delay resolves and restarts nothing. The restarts are counted (metric, one log line each).
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import type { Worker } from "node:worker_threads";
import pg from "pg";
import { rawQuery } from "../../../test/support/db.js";
import { listenerPort, udpSenders } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import type { IngestWorkers } from "../ingest/IngestWorkers.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";
import { ListenerService } from "../services/ListenerService.js";

async function startKernel(): Promise<TestKernel> {
  return startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: {
          syslog: { udp: 0, tcp: 0, tls: null, bindAddress: "127.0.0.1" },
          flushMs: 10,
          // One UDP socket per worker: the sockets on the port are counted below.
          ingest: { workers: 2, udpSocketsPerWorker: 1 },
        },
      },
    },
  });
}

/** Sends `lines` over `connections` TCP connections (line i on connection i % connections) and closes them. */
async function sendTcp(port: number, connections: number, lines: (i: number) => string, n: number): Promise<void> {
  const socks: Socket[] = await Promise.all(
    Array.from({ length: connections }, () => {
      const s = connect(port, "127.0.0.1");
      s.on("error", () => undefined);
      return new Promise<Socket>((resolve) => s.once("connect", () => resolve(s)));
    }),
  );
  const texts = socks.map(() => [] as string[]);
  for (let i = 0; i < n; i++) texts[i % connections].push(`${lines(i)}\n`);
  await Promise.all(socks.map((s, c) => new Promise<void>((resolve) => s.end(texts[c].join(""), () => resolve()))));
}

/** Count and distinct count of the stored messages LIKE `like`. */
async function stored(k: TestKernel, like: string): Promise<{ n: number; distinct: number }> {
  const [r] = await rawQuery<{ n: string; distinct: string }>(
    k.databaseUrl!,
    "SELECT count(*) AS n, count(DISTINCT message) AS distinct FROM events.events WHERE message LIKE $1",
    [like],
  );
  return { n: Number(r.n), distinct: Number(r.distinct) };
}

/** Sockets on `port` in /proc/net/<table> (for TCP: those listening, state 0A). */
function socketsOn(table: "udp" | "tcp", port: number): number {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return readFileSync(`/proc/net/${table}`, "utf8")
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[1]?.endsWith(hex) && (table === "udp" || f[3] === "0A")).length;
}

/** Resolves when the thread has ended (events.once would reject with the error that ended it). */
const exitOf = (w: Worker) => new Promise<void>((resolve) => w.once("exit", () => resolve()));

const restartLines = (k: TestKernel, thread: string) => k.logs.filter((l) => l.includes(`syslog ingest ${thread} thread died, restarting it`));

describe("a syslog ingest thread that dies", () => {
  let k: TestKernel;
  let ingest: IngestWorkers;
  let udp: number;
  let tcp: number;
  beforeAll(async () => {
    k = await startKernel();
    ingest = k.context("events").get(ListenerService).ingest!;
    udp = await listenerPort(k, "syslog.udp");
    tcp = await listenerPort(k, "syslog.tcp");
  });
  afterAll(() => k?.stop());

  const flush = () => k.context("events").get(EventPipeline).flush();

  it("a parser killed while its batches wait unstored comes back, and every message is stored once", async () => {
    // The store holds no writes: the parsers' batches wait in the main thread, unacknowledged, when parser 0 dies.
    const c = new pg.Client({ connectionString: k.databaseUrl! });
    await c.connect();
    await c.query("BEGIN");
    await c.query("LOCK TABLE events.events IN SHARE MODE");
    const n = 4000;
    let before = ingest.threads(0).parser;
    let w = 0;
    try {
      await sendTcp(tcp, 8, (i) => `<14>1 - h app - - - held ${i}`, n);
      // Every batch in the main thread's hands, none stored.
      const accepted = k.context("events").get(EventPipeline).stats().accepted;
      await until("handed over", async () => (k.context("events").get(EventPipeline).stats().accepted - accepted >= n ? true : null));
      await until("journaled, not stored", async () => (ingest.journalStats().backlog === n ? true : null));
      // The parser of the worker that took the most of the connections (so it has batches in the main thread).
      const tcpPerWorker = ingest.receivedPerWorker("syslog.tcp");
      w = tcpPerWorker[1] > tcpPerWorker[0] ? 1 : 0;
      before = ingest.threads(w).parser;
      await before.terminate();
      await new Promise((r) => setTimeout(r, 300));
      // The restart waits for the batches the main thread holds: no new parser yet.
      expect(ingest.threads(w).parser === before).toBe(true);
    } finally {
      await c.query("ROLLBACK");
      await c.end();
    }
    await until("all stored", async () => ((await stored(k, "held %")).n >= n ? true : null), 30_000);
    await until("restarted", async () => (ingest.threads(w).parser !== before && ingest.restarts().parser === 1 ? true : null));
    await until("the journals drained", async () => (ingest.journalStats().backlog === 0 ? true : null));
    await flush();
    expect(await stored(k, "held %")).toEqual({ n, distinct: n });
    // After the restart: UDP from many source ports (so both workers) and TCP reach the store.
    const socks = await udpSenders(16);
    for (let i = 0; i < 16; i++) await socks[i].send(udp, `<14>1 - h app - - - after-parser udp ${i}`);
    await sendTcp(tcp, 4, (i) => `<14>1 - h app - - - after-parser tcp ${i}`, 400);
    await flush();
    await until("after stored", async () => ((await stored(k, "after-parser %")).n >= 416 ? true : null));
    expect(await stored(k, "after-parser %")).toEqual({ n: 416, distinct: 416 });
    for (const s of socks) s.close();
    expect(restartLines(k, "parser")).toHaveLength(1);
    expect(restartLines(k, "parser")[0]).toContain("exit code 1");
    const metrics = await (await fetch(`${k.url}/metrics`)).text();
    expect(metrics).toMatch(/nms_events_ingest_restarts_total\{thread="parser"\} 1\b/);
    expect(metrics).toMatch(/nms_events_ingest_restarts_total\{thread="worker"\} 0\b/);
  }, 90_000);

  it("a parser killed in the middle of a TCP burst comes back, and every message is stored once", async () => {
    const n = 50_000;
    const restarts = ingest.restarts().parser;
    const lines = restartLines(k, "parser").length;
    const at = ingest.receivedPerWorker("syslog.tcp");
    const sending = sendTcp(tcp, 8, (i) => `<14>1 - h app - - - burst ${i}`, n);
    // Killed as soon as its worker reports the first of the burst (the worker's stats come every 100 ms).
    let w = -1;
    while (w < 0) {
      await new Promise((r) => setTimeout(r, 5));
      w = ingest.receivedPerWorker("syslog.tcp").findIndex((c, i) => c > at[i]);
    }
    const before = ingest.threads(w).parser;
    await before.terminate();
    await sending;
    await until("restarted", async () => (ingest.restarts().parser === restarts + 1 ? true : null));
    await until("all stored", async () => ((await stored(k, "burst %")).n >= n ? true : null), 30_000);
    await until("the journals drained", async () => (ingest.journalStats().backlog === 0 ? true : null));
    await flush();
    expect(await stored(k, "burst %")).toEqual({ n, distinct: n });
    expect(restartLines(k, "parser")).toHaveLength(lines + 1);
  }, 90_000);

  it("a worker killed comes back with its journal and its sockets on the same ports; meanwhile the other takes the datagrams", async () => {
    expect(socketsOn("udp", udp)).toBe(2);
    expect(socketsOn("tcp", tcp)).toBe(2);
    const old = ingest.threads(1);
    const received = () => ingest.receivedPerWorker("syslog.udp");
    const n = 8000;
    const sending = sendTcp(tcp, 8, (i) => `<14>1 - h app - - - worker-burst ${i}`, n);
    await until("under way", async () => ((await stored(k, "worker-burst %")).n > 0 ? true : null));
    await old.worker.terminate();
    // Worker 1's sockets went with it: the reuseport group is worker 0's alone until the restart (100 ms later).
    expect(socketsOn("udp", udp)).toBe(1);
    const atDeath = received();
    const socks = await udpSenders(16);
    for (let i = 0; i < 16; i++) await socks[i].send(udp, `<14>1 - h app - - - while-down ${i}`);
    await sending;
    await until("restarted", async () => (ingest.restarts().worker === 1 && socketsOn("udp", udp) === 2 && socketsOn("tcp", tcp) === 2 ? true : null));
    const t = ingest.threads(1);
    expect(t.worker).not.toBe(old.worker);
    expect(t.parser).not.toBe(old.parser);
    await flush();
    await until("the 16 stored", async () => ((await stored(k, "while-down %")).n === 16 ? true : null));
    // All sixteen went to worker 0 (or, past the restart, some to the new worker 1): none was lost.
    await until("counted", async () => (received()[0] + received()[1] - atDeath[0] - atDeath[1] >= 16 ? true : null));
    // What worker 1 journaled is stored once (what its TCP connections held unread when it died is lost with them).
    await until("the journals drained", async () => (ingest.journalStats().backlog === 0 ? true : null));
    await flush();
    const burst = await stored(k, "worker-burst %");
    expect(burst.n).toBe(burst.distinct);
    expect(burst.n).toBeGreaterThan(0);
    // The new worker 1 receives: sixteen more source ports land on both workers (2^-15 odds of one taking all).
    const before = received();
    for (let i = 0; i < 16; i++) await socks[i].send(udp, `<14>1 - h app - - - after-worker ${i}`);
    await sendTcp(tcp, 4, (i) => `<14>1 - h app - - - after-worker tcp ${i}`, 400);
    await flush();
    await until("after stored", async () => ((await stored(k, "after-worker %")).n >= 416 ? true : null));
    expect(await stored(k, "after-worker %")).toEqual({ n: 416, distinct: 416 });
    await until("both workers", async () => (received().every((c, i) => c > before[i]) ? true : null));
    // The counters go on from where the dead worker left them.
    expect(received()[1]).toBeGreaterThanOrEqual(atDeath[1]);
    for (const s of socks) s.close();
    expect(restartLines(k, "worker")).toHaveLength(1);
    const metrics = await (await fetch(`${k.url}/metrics`)).text();
    expect(metrics).toMatch(/nms_events_ingest_restarts_total\{thread="worker"\} 1\b/);
  }, 90_000);

  it("a parser that throws is restarted too; drain() while it is down resolves once it is back", async () => {
    const before = ingest.threads(0).parser;
    const restarts = ingest.restarts().parser;
    const socks = await udpSenders(8);
    // A state message it cannot read: the parser's handler throws (an uncaught exception ends the thread).
    const exited = exitOf(before);
    before.postMessage({ t: "state", rules: [null] });
    await exited;
    for (let i = 0; i < 8; i++) await socks[i].send(udp, `<14>1 - h app - - - drained ${i}`);
    await ingest.drain();
    expect(ingest.restarts().parser).toBe(restarts + 1);
    expect(ingest.threads(0).parser).not.toBe(before);
    await flush();
    await until("stored", async () => ((await stored(k, "drained %")).n === 8 ? true : null));
    expect(restartLines(k, "parser").at(-1)).toContain("TypeError");
    for (const s of socks) s.close();
  }, 30_000);
});

describe("close() while a thread is down", () => {
  it("resolves, and restarts nothing", async () => {
    const k = await startKernel();
    const ingest = k.context("events").get(ListenerService).ingest!;
    const parser = ingest.threads(1).parser;
    const worker = ingest.threads(0).worker;
    // The worker throws (a message for a journal it does not have), the parser is ended.
    const exited = exitOf(worker);
    worker.postMessage({ t: "resume", partition: 99, ranges: [] });
    await Promise.all([parser.terminate(), exited]);
    // Both within their 100 ms restart delay: stopping the service ends it.
    const started = Date.now();
    await k.stop();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ingest.restarts()).toEqual({ worker: 1, parser: 1 });
    expect(k.logs.filter((l) => l.includes("restart failed"))).toEqual([]);
    expect(k.logs.filter((l) => l.includes("syslog ingest") && l.includes("thread died"))).toHaveLength(2);
  }, 60_000);
});
