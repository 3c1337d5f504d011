/**
 * The flows ingest threads on a real kernel with two decoders: one exporter's datagrams (one source port, so one
 * socket) are decoded on both, with the templates and the options data (the sampling rate) reaching each; a store
 * that takes no writes costs journal, not flows; a reader thread that dies is restarted on the same port, a decoder with its journal (exactly once); and after SIGKILL of a running service the restarted one replays
 * its journals and counts every journaled datagram exactly once.
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createTestDatabase, rawQuery } from "../../../test/support/db.js";
import { dataSet, ip4, IPV4_FLOW_FIELDS, ipfixMessage, optionsTemplateSet, templateSet, u } from "../../../test/support/flowPeers.js";
import { spawnKernel } from "../../../test/support/spawnKernel.js";
import { listenerPort } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { inventoryPlugin, NodeAddresses } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { flowsPlugin } from "../index.js";
import { FlowCollector } from "../services/FlowCollector.js";

type Row = Record<string, unknown>;

/** Record i of a test: its own source address (10.<tag>.x.y), so every record is a rollup key of its own. */
function record(tag: number, i: number, bytes = 1000): Buffer {
  // Record i's own key up to 2^30 records: the address carries its low 16 bits, the source port the next ones (a fast
  // sender passes 65,536 records within a minute, and keys that repeated would look like records counted twice).
  const src = `10.${tag}.${(i >> 8) & 255}.${i & 255}`;
  return Buffer.concat([ip4(src), ip4("192.0.2.1"), u(1, 6), u(2, 40000 + ((i >> 16) & 0x3fff)), u(2, 443), u(8, bytes), u(8, 1), u(4, secs() - 1)]);
}

const secs = () => Math.floor(Date.now() / 1000);
const templates = (domain: number, extra: Buffer[] = []) =>
  ipfixMessage({ domain, exportSecs: secs() }, [templateSet(10, [{ id: 256, fields: IPV4_FLOW_FIELDS }]), ...extra]);
/** Data message `m` of a test: `per` records numbered from m * per. */
const data = (domain: number, tag: number, m: number, per: number) =>
  ipfixMessage({ domain, exportSecs: secs(), seq: m * per }, [
    dataSet(
      256,
      Array.from({ length: per }, (_, j) => record(tag, m * per + j)),
    ),
  ]);

async function socket(): Promise<UdpSocket> {
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  return s;
}
const send = (s: UdpSocket, port: number, b: Buffer) => new Promise<void>((res, rej) => s.send(b, port, "127.0.0.1", (e) => (e ? rej(e) : res())));

async function totals(databaseUrl: string, tag: number): Promise<{ rows: number; flows: number; bytes: number; maxFlows: number }> {
  const [r] = await rawQuery<{ rows: string; flows: string | null; bytes: string | null; max: string | null }>(
    databaseUrl,
    `SELECT count(*) AS rows, sum(flows) AS flows, sum(bytes) AS bytes, max(flows) AS max FROM flows.rollup_1m WHERE src << $1::cidr`,
    [`10.${tag}.0.0/16`],
  );
  return { rows: Number(r.rows), flows: Number(r.flows ?? 0), bytes: Number(r.bytes ?? 0), maxFlows: Number(r.max ?? 0) };
}

/**
 * Eight exporters (eight source ports: the kernel spreads them over every reader's socket), each its templates and ten
 * data messages of `per` records tagged `tag`; every record is stored once. The senders are returned (close them).
 */
async function eightExportersStoredOnce(
  port: number,
  domain: number,
  tag: number,
  per: number,
  flush: () => Promise<void>,
  databaseUrl: string,
): Promise<UdpSocket[]> {
  const socks = await Promise.all(Array.from({ length: 8 }, () => socket()));
  for (const [e, s] of socks.entries()) {
    await send(s, port, templates(domain + e));
    for (let m = 0; m < 10; m++) await send(s, port, data(domain + e, tag, e * 10 + m, per));
  }
  const t = await until(`the records tagged ${tag} stored`, async () => {
    await flush();
    const x = await totals(databaseUrl, tag);
    return x.flows >= 8 * 10 * per ? x : null;
  });
  expect(t).toMatchObject({ rows: 8 * 10 * per, flows: 8 * 10 * per, maxFlows: 1 });
  return socks;
}

/** A kernel whose flows listener (on a free port) runs two ingest readers and two decoders. */
async function twoDecoderKernel(): Promise<{ k: TestKernel; port: number }> {
  const k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, flowsPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: false }, flows: { udp: 0, bindAddress: "127.0.0.1", flushMs: 200, ingest: { workers: 2 } } } },
  });
  return { k, port: await listenerPort(k, "flows.udp") };
}

describe("two decoders", () => {
  let k: TestKernel;
  let port: number;
  const collector = () => k.context("flows").get(FlowCollector);
  beforeAll(async () => {
    ({ k, port } = await twoDecoderKernel());
    await k.request("POST", "/nodes", { body: { name: "exporter", address: "127.0.0.1" } });
    await k.context("inventory").get(NodeAddresses).reload();
  });
  afterAll(() => k?.stop());

  it("decodes one exporter on both, each with its templates and its sampling rate, every record once", async () => {
    const s = await socket();
    const before = collector().recordsPerDecoder();
    // The options template and its data (samplingInterval 10 for the domain) come with the data template, once.
    const options = [optionsTemplateSet(10, 400, [{ id: 149, length: 4 }], [{ id: 34, length: 4 }]), dataSet(400, [Buffer.concat([u(4, 21), u(4, 10)])])];
    await send(s, port, templates(21, options));
    const messages = 300;
    const per = 5;
    for (let m = 0; m < messages; m++) {
      await send(s, port, data(21, 21, m, per));
      if (m % 10 === 9) await new Promise((r) => setTimeout(r, 3));
    }
    s.close();
    const t = await until("every record stored", async () => {
      await collector().flush();
      const x = await totals(k.databaseUrl!, 21);
      return x.flows >= messages * per ? x : null;
    });
    expect(t).toEqual({ rows: messages * per, flows: messages * per, bytes: messages * per * 1000 * 10, maxFlows: 1 });
    // Both decoders took part.
    const after = collector().recordsPerDecoder();
    expect(after).toHaveLength(2);
    expect(after[0] - before[0]).toBeGreaterThan(0);
    expect(after[1] - before[1]).toBeGreaterThan(0);
    expect(after[0] - before[0] + (after[1] - before[1])).toBe(messages * per);
    // The rollups are filed under the exporter's node.
    const [n] = await rawQuery<{ n: string }>(k.databaseUrl!, "SELECT count(*) AS n FROM flows.rollup_1m WHERE src << '10.21.0.0/16' AND node_id IS NULL");
    expect(Number(n.n)).toBe(0);
  }, 60_000);

  it("holds what arrives while the store takes no writes, and stores all of it once when it does", async () => {
    const c = new pg.Client({ connectionString: k.databaseUrl! });
    await c.connect();
    await c.query("BEGIN");
    await c.query("LOCK TABLE flows.rollup_1m IN SHARE MODE");
    const s = await socket();
    const messages = 100;
    const per = 4;
    try {
      await send(s, port, templates(22));
      for (let m = 0; m < messages; m++) await send(s, port, data(22, 22, m, per));
      await until("decoded", async () => collector().stats().records >= messages * per);
      await new Promise((r) => setTimeout(r, 600));
      expect((await totals(k.databaseUrl!, 22)).flows).toBe(0);
    } finally {
      await c.query("ROLLBACK");
      await c.end();
      s.close();
    }
    await until("all stored", async () => (await totals(k.databaseUrl!, 22)).flows === messages * per, 20_000);
    await collector().flush();
    expect(await totals(k.databaseUrl!, 22)).toMatchObject({ rows: messages * per, flows: messages * per, maxFlows: 1 });
  }, 60_000);

  it("restarts a reader thread that dies, on the same port; what is sent after it is counted once", async () => {
    const ingest = collector().ingestThreads!;
    const old = ingest.readerThreads()[0];
    const received = collector().counters.received;
    await old.terminate();
    await until("restarted", async () => (ingest.restarts().reader === 1 && ingest.readerThreads()[0] !== old && readersOn(port) === 2 ? true : null));
    // Eight exporters (source ports): the kernel spreads them over both sockets, the new one's included.
    const per = 4;
    const socks = await eightExportersStoredOnce(port, 30, 23, per, () => collector().flush(), k.databaseUrl!);
    // The dead reader's count is kept.
    await until("counted", async () => collector().counters.received >= received + 88);
    for (const s of socks) s.close();
    expect(k.logs.filter((l) => l.includes("flows: ingest reader thread died, restarting it"))).toHaveLength(1);
    const metrics = await (await fetch(`${k.url}/metrics`)).text();
    expect(metrics).toMatch(/nms_flows_ingest_restarts_total\{thread="reader"\} 1\b/);
  }, 60_000);
});

describe("a decoder thread that dies", () => {
  let k: TestKernel;
  let port: number;
  const collector = () => k.context("flows").get(FlowCollector);
  beforeAll(async () => {
    ({ k, port } = await twoDecoderKernel());
  });
  afterAll(() => k?.stop());

  it("is restarted once its take in the store's hands is stored, and replays its journal: every record once", async () => {
    const ingest = collector().ingestThreads!;
    const c = new pg.Client({ connectionString: k.databaseUrl! });
    await c.connect();
    await c.query("BEGIN");
    await c.query("LOCK TABLE flows.rollup_1m IN SHARE MODE");
    const s = await socket();
    const messages = 100;
    const per = 4;
    const old = ingest.decoderThreads()[0];
    try {
      await send(s, port, templates(24));
      for (let m = 0; m < messages; m++) await send(s, port, data(24, 24, m, per));
      await until("decoded", async () => collector().stats().records >= messages * per);
      // A flush waits for the store with both decoders' takes; decoder 0 dies with what it aggregated since.
      await new Promise((r) => setTimeout(r, 600));
      await old.terminate();
      await new Promise((r) => setTimeout(r, 300));
      // Its replacement waits for that take to be stored (its journal ranges then in PostgreSQL).
      expect(ingest.decoderThreads()[0] === old).toBe(true);
      expect((await totals(k.databaseUrl!, 24)).flows).toBe(0);
    } finally {
      await c.query("ROLLBACK");
      await c.end();
    }
    await until("restarted", async () => ingest.restarts().decoder === 1 && ingest.decoderThreads()[0] !== old);
    await until("all stored", async () => {
      await collector().flush();
      return (await totals(k.databaseUrl!, 24)).flows >= messages * per;
    });
    await new Promise((r) => setTimeout(r, 500));
    await collector().flush();
    expect(await totals(k.databaseUrl!, 24)).toMatchObject({ rows: messages * per, flows: messages * per, maxFlows: 1 });
    // After: eight exporters over both readers and both decoders, each record once.
    const socks = await eightExportersStoredOnce(port, 40, 25, per, () => collector().flush(), k.databaseUrl!);
    for (const x of [s, ...socks]) x.close();
    expect(k.logs.filter((l) => l.includes("flows: ingest decoder thread died, restarting it"))).toHaveLength(1);
    const metrics = await (await fetch(`${k.url}/metrics`)).text();
    expect(metrics).toMatch(/nms_flows_ingest_restarts_total\{thread="decoder"\} 1\b/);
  }, 60_000);
});

/** UDP sockets bound to `port` (/proc/net/udp). */
function readersOn(port: number): number {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return readFileSync("/proc/net/udp", "utf8")
    .split("\n")
    .slice(1)
    .filter((l) => l.trim().split(/\s+/)[1]?.endsWith(hex)).length;
}

describe("a crash", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "nms-flows-crash-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("after SIGKILL during ingest, the restarted service counts every journaled datagram exactly once", async () => {
    const databaseUrl = await createTestDatabase();
    const token = "flows-crash-test-bootstrap-token-01234567";
    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: databaseUrl,
      NMS_BUILTIN_PLUGINS: "true",
      NMS__pluginConfig__polling__embeddedPoller: "false",
      NMS__pluginConfig__flows__udp: "0",
      NMS__pluginConfig__flows__bindAddress: "127.0.0.1",
      // Two seconds of datagrams at most are journaled and not yet stored at the kill: the replay has something to do.
      NMS__pluginConfig__flows__flushMs: "2000",
      NMS__pluginConfig__flows__ingest__workers: "2",
      NMS_BOOTSTRAP_TOKEN: token,
    };
    const first = await spawnKernel({ env, dataDir });
    const auth = { authorization: `Bearer ${token}` };
    const listeners = (await (await fetch(`${first.url}/api/v1/listeners`, { headers: auth })).json()) as { listeners: Row[] };
    const port = listeners.listeners.find((l) => l.name === "flows.udp")!.port as number;
    // 10 records a datagram, 50 datagrams every 10 ms (5,000 datagrams/s between the two sockets), until the kill.
    const socks = [await socket(), await socket()];
    for (const s of socks) await send(s, port, templates(23));
    let sent = 0;
    let stop = false;
    const sender = (async () => {
      while (!stop) {
        for (let j = 0; j < 50 && !stop; j++) {
          const m = sent++;
          await send(socks[m % 2], port, data(23, 23, m, 10)).catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await until(
      "ingest under way",
      async () => (await totals(databaseUrl, 23).catch(() => ({ flows: 0 }))).flows > 20_000,
      30_000,
      () => first.stderr().slice(-2000),
    );
    first.child.kill("SIGKILL");
    await first.exited;
    stop = true;
    await sender;
    const storedAtKill = (await totals(databaseUrl, 23)).flows;
    const second = await spawnKernel({ env: { ...env, NMS__pluginConfig__flows__flushMs: "200" }, dataDir });
    try {
      const t = await until("replayed", async () => ((await journalBacklog(second.url)) === 0 ? totals(databaseUrl, 23) : null), 60_000);
      // Each record its own key: a datagram counted twice would make a row of 2 flows.
      expect(t.maxFlows).toBe(1);
      expect(t.flows).toBe(t.rows);
      expect(t.flows).toBeGreaterThan(storedAtKill);
      expect(t.flows).toBeLessThanOrEqual(sent * 10);
      console.log(`SIGKILL during flow ingest: sent ${sent * 10} records, ${storedAtKill} stored at the kill, ${t.flows} after the replay, once each`);
    } finally {
      for (const s of socks) s.close();
      await second.stop();
    }
  }, 180_000);
});

/** The flows journals' backlog as GET /metrics reports it. */
async function journalBacklog(url: string): Promise<number | null> {
  const res = await fetch(`${url}/metrics`).catch(() => null);
  if (!res?.ok) return null;
  const m = /nms_flows_journal_backlog(?:\{[^}]*\})? (\d+)/.exec(await res.text());
  return m ? Number(m[1]) : null;
}
