/**
 * A real remote poller process (`node dist/core/cli/main.js poller ...`) against a child-process
 * core (dist, inventory + polling): killed with SIGKILL and restarted (gap recorded), the core
 * stopped while it runs (samples buffered on disk, then backfilled in order: none lost, none
 * doubled), and `nms poller deploy` without a Docker engine.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, rawQuery } from "../../../test/support/db.js";
import { ROOT, spawnKernel, type SpawnedKernel } from "../../../test/support/spawnKernel.js";
import type { Sample } from "../contract.js";
import type { LoopLogger } from "../poller/PollLoop.js";
import { shipments } from "../poller/RemotePoller.js";
import { SampleBuffer, type BufferedRecord } from "../poller/SampleBuffer.js";
import { emptyBatch, MAX_SAMPLES_PER_POST, type PollBatch } from "../poller/wire.js";
import { until } from "../../../test/support/wait.js";

const CLI = join(ROOT, "dist/core/cli/main.js");
const PLUGINS = [join(ROOT, "dist/plugins/inventory"), join(ROOT, "dist/plugins/polling")].join(",");
const BOOTSTRAP = "remote-poller-test-bootstrap-token-0123456789";

interface PollerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

let db: string;
let port: number;
let core: SpawnedKernel | null = null;
let poller: PollerProcess | null = null;
let token: string;
let bufferDir: string;
let work: string;
const nodes: Record<string, string> = {};

function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function startCore(): Promise<SpawnedKernel> {
  return spawnKernel({
    dataDir: join(work, "core-data"),
    env: {
      DATABASE_URL: db,
      NMS_PORT: String(port),
      NMS_PLUGINS: PLUGINS,
      NMS_BOOTSTRAP_TOKEN: BOOTSTRAP,
      NMS_JOBS_PROCESS_EVERY: "1 second",
      NMS_JOBS_LOCK_LIFETIME_MS: "2000",
      NMS_JOBS_DRAIN_MS: "2000",
      NMS__pluginConfig__polling__embeddedPoller: "false",
      NMS__pluginConfig__polling__heartbeatAllowanceSecs: "5",
      NMS__pluginConfig__polling__defaultIntervalSecs: "5",
    },
  });
}

function startPoller(): PollerProcess {
  const child = spawn(
    process.execPath,
    [
      CLI,
      "poller",
      "--pool",
      "remote",
      "--core",
      `http://127.0.0.1:${port}`,
      "--id",
      "rp-1",
      "--buffer-dir",
      bufferDir,
      "--refresh-secs",
      "2",
      "--log-level",
      "debug",
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NMS_POLLER_TOKEN: token,
        NMS_BUILTIN_PLUGINS: "false",
        NMS_PLUGINS: PLUGINS,
        NMS_DATA_DIR: work,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function kill(p: PollerProcess | null, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill(signal);
  await p.exited;
}

/** until() with the poller's recent output in the failure message. */
const waitFor = <T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 30000) =>
  until(what, fn, timeoutMs, () => `poller output:\n${poller?.output().slice(-4000) ?? ""}`);

const sql = <R extends Record<string, unknown>>(text: string, params: unknown[] = []) => rawQuery<R>(db, text, params);

/** Samples stored more than once for one (node, metric, ifindex, row, at). */
const doubles = () =>
  sql("SELECT node_id, metric, at, count(*)::int AS n FROM polling.samples GROUP BY node_id, metric, ifindex, row_key, at HAVING count(*) > 1");

/** Keys (node|metric|at ms) of every unacknowledged record in the poller's buffer, read from its files. */
function bufferedKeys(): Set<string> {
  const keys = new Set<string>();
  const ack = existsSync(join(bufferDir, "ack.json"))
    ? (JSON.parse(readFileSync(join(bufferDir, "ack.json"), "utf8")) as { segment: number; offset: number })
    : { segment: 0, offset: 0 };
  for (const name of readdirSync(bufferDir).sort()) {
    const m = /^seg-(\d{16})\.log$/.exec(name);
    if (!m || Number(m[1]) < ack.segment) continue;
    let data = readFileSync(join(bufferDir, name));
    if (Number(m[1]) === ack.segment) data = data.subarray(ack.offset);
    // Complete lines only: the poller may be writing the last one right now.
    const text = data.toString("utf8");
    for (const line of text.slice(0, text.lastIndexOf("\n") + 1).split("\n")) {
      if (!line) continue;
      for (const s of (JSON.parse(line) as { d: { samples: { node_id: string; metric: string; at_unix_ms: number }[] } }).d.samples) {
        keys.add(`${s.node_id}|${s.metric}|${s.at_unix_ms}`);
      }
    }
  }
  return keys;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "nms-remote-poller-"));
  bufferDir = join(work, "buffer");
  mkdirSync(join(work, "core-data"));
  db = await createTestDatabase();
  port = await freeTcpPort();
  core = await startCore();
  const made = spawnSync(process.execPath, [CLI, "tokens", "create", "--name", "poller-rp-1", "--role", "admin"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: db, NMS_BUILTIN_PLUGINS: "false" },
    encoding: "utf8",
  });
  token = /token: (\S+)/.exec(made.stdout)?.[1] ?? "";
  expect(token).toMatch(/^nmst_/);
  for (const [name, address] of [
    ["remote-a", "127.0.0.1"],
    ["remote-b", "127.0.0.2"],
  ]) {
    const res = await fetch(`${core.url}/api/v1/nodes`, {
      method: "POST",
      headers: { authorization: `Bearer ${BOOTSTRAP}`, "content-type": "application/json" },
      body: JSON.stringify({ name, address, pool: "remote" }),
    });
    expect(res.status).toBe(201);
    nodes[name] = ((await res.json()) as { id: string }).id;
  }
}, 60000);

afterAll(async () => {
  await kill(poller);
  await core?.stop();
  rmSync(work, { recursive: true, force: true });
});

it("a poller killed with SIGKILL and restarted: its gap is recorded and polling resumes", async () => {
  poller = startPoller();
  await waitFor("samples of both nodes from the poller", async () => {
    const r = await sql<{ n: number }>("SELECT count(DISTINCT node_id)::int AS n FROM polling.latest WHERE metric = 'reachable'");
    return r[0].n === 2;
  });
  const [before] = await sql<{ pool: string; kind: string; online: boolean; telemetry: unknown }>(
    "SELECT pool, kind, online, telemetry FROM polling.pollers WHERE id = 'rp-1'",
  );
  expect(before).toMatchObject({ pool: "remote", kind: "remote", online: true });
  await waitFor("telemetry reported", async () => (await sql("SELECT 1 FROM polling.pollers WHERE id = 'rp-1' AND telemetry IS NOT NULL")).length > 0);

  await kill(poller);
  const [{ seen }] = await sql<{ seen: string }>("SELECT last_seen_at::text AS seen FROM polling.pollers WHERE id = 'rp-1'");
  // Silent past the 5 s allowance: the watch job marks it offline.
  await waitFor("rp-1 offline", async () => (await sql<{ online: boolean }>("SELECT online FROM polling.pollers WHERE id = 'rp-1'"))[0].online === false);

  poller = startPoller();
  const [gap] = await waitFor("the gap recorded", async () =>
    sql<{ pool: string; started: string; secs: number; listeners: string[] }>(
      "SELECT pool, started_at::text AS started, extract(epoch FROM ended_at - started_at)::float8 AS secs, listeners FROM polling.monitoring_gaps WHERE poller_id = 'rp-1'",
    ).then((r) => (r.length ? r : null)),
  );
  expect(gap).toMatchObject({ pool: "remote", started: seen, listeners: [] });
  expect(gap.secs).toBeGreaterThanOrEqual(5);
  const since = Date.now();
  await waitFor(
    "polling resumed",
    async () => (await sql("SELECT 1 FROM polling.latest WHERE metric = 'reachable' AND at > to_timestamp($1 / 1000.0)", [since])).length > 0,
  );
  expect(await doubles()).toEqual([]);
  const hosts = await fetch(`${core!.url}/api/v1/system/hosts`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await hosts.json()) as { hosts: { instance: string; role: string; online: boolean; pool: string | null }[] };
  expect(body.hosts.map((h) => [h.instance, h.role, h.pool, h.online])).toEqual([
    ["core", "core", null, true],
    ["rp-1", "poller", "remote", true],
  ]);
}, 60000);

it("the core stopped while the poller runs: samples are buffered on disk, then backfilled in order, none lost or doubled", async () => {
  await waitFor("the buffer drained", async () => bufferedKeys().size === 0);
  await core!.stop();
  const stoppedAt = Date.now();
  // Two poll cycles (5 s) measured with no core to send them to; the poller is also killed once on the way.
  await waitFor("records buffered", async () => bufferedKeys().size > 0);
  await new Promise((r) => setTimeout(r, 6000));
  await kill(poller);
  const afterKill = bufferedKeys();
  poller = startPoller();
  // The restarted poller keeps what was buffered and adds its own cycles (its start from dist can take a while on a
  // loaded machine: wait for it rather than a fixed time).
  const buffered = await waitFor(
    "the restarted poller buffers more",
    async () => {
      const keys = bufferedKeys();
      return keys.size > afterKill.size ? keys : null;
    },
    30000,
  );
  for (const key of afterKill) expect(buffered.has(key)).toBe(true);

  core = await startCore();
  const restartedAt = Date.now();
  await waitFor("the buffer backfilled", async () => bufferedKeys().size === 0, 30000);

  // Every buffered sample is stored, exactly once.
  const stored = new Set(
    (await sql<{ k: string }>("SELECT node_id || '|' || metric || '|' || (extract(epoch FROM at) * 1000)::bigint AS k FROM polling.samples")).map((r) => r.k),
  );
  const missing = [...buffered].filter((key) => !stored.has(key));
  expect(missing).toEqual([]);
  expect(await doubles()).toEqual([]);
  // The outage is covered by measurements, at the poll interval, for both nodes.
  const during = await sql<{ node_id: string; n: number }>(
    "SELECT node_id, count(*)::int AS n FROM polling.samples WHERE metric = 'reachable' AND at > to_timestamp($1 / 1000.0) AND at < to_timestamp($2 / 1000.0) GROUP BY node_id",
    [stoppedAt, restartedAt],
  );
  expect(during).toHaveLength(2);
  for (const row of during) expect(row.n).toBeGreaterThanOrEqual(2);
  // In order: of one node's series, a sample measured later was stored in the same or a later transaction.
  const series = await sql<{ at: string; tx: string }>(
    "SELECT (extract(epoch FROM at) * 1000)::bigint AS at, xmin::text AS tx FROM polling.samples WHERE node_id = $1 AND metric = 'reachable' AND at > to_timestamp($2 / 1000.0) ORDER BY xmin::text::bigint, at",
    [nodes["remote-a"], stoppedAt],
  );
  const ats = series.map((r) => Number(r.at));
  expect(ats).toEqual([...ats].sort((a, b) => a - b));
  // The time the core could not hear the poller is a monitoring gap (passive data would have been lost).
  await waitFor("the outage's gap", async () => (await sql("SELECT 1 FROM polling.monitoring_gaps WHERE poller_id = 'rp-1'")).length === 2);
  expect(poller!.output()).toContain("buffered samples from an earlier run will be backfilled");
}, 60000);

it("answers `nms poller deploy` with a clear one-line error and exit code 2 when no Docker engine answers", async () => {
  const closed = await freeTcpPort();
  for (const host of [`unix://${join(work, "no-docker.sock")}`, `tcp://127.0.0.1:${closed}`]) {
    const r = spawnSync(process.execPath, [CLI, "poller", "deploy", "--pool", "edge", "--core", "http://127.0.0.1:9", "--token", "t"], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NMS_DOCKER_HOST: host,
        NMS_BUILTIN_PLUGINS: "false",
        NMS_PLUGINS: PLUGINS,
      },
      encoding: "utf8",
      timeout: 20000,
    });
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`nms poller deploy: no Docker Engine answers at ${host}`);
    expect(lines[0]).toContain("NMS_DOCKER_HOST");
  }
  const usage = spawnSync(process.execPath, [CLI, "poller", "--core", "http://127.0.0.1:9"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NMS_BUILTIN_PLUGINS: "false", NMS_PLUGINS: PLUGINS },
    encoding: "utf8",
  });
  expect(usage.status).toBe(2);
  expect(usage.stderr).toContain("--pool is required");
});

describe("store-and-forward buffer", () => {
  const warnings: string[] = [];
  const log: LoopLogger = { debug: () => undefined, info: () => undefined, warn: (m) => void warnings.push(m), error: (m) => void warnings.push(m) };
  const NODE = "0b7c6a52-3b8e-4f7d-9a41-2c5e8b7d9f10";

  function batch(i: number, count = 1): PollBatch {
    const samples: Sample[] = Array.from({ length: count }, (_, j) => ({
      node_id: NODE,
      metric: "rtt_ms",
      value: i,
      at_unix_ms: 1_700_000_000_000 + i * 1000 + j,
      ifindex: null,
      if_name: null,
      row: null,
      row_name: null,
      pool: "p",
      poller_id: "x",
      backfill: false,
    }));
    return { ...emptyBatch(false), samples };
  }
  const values = (recs: BufferedRecord[]) => recs.map((r) => r.batch.samples[0].value);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "nms-buffer-"));
    warnings.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("gives records back in order from the acknowledged position, across segments and restarts", async () => {
    const buf = new SampleBuffer({ dir, maxBytes: 10 * 1024 * 1024, log });
    await buf.open();
    for (let i = 0; i < 5; i++) await buf.append(batch(i), false);
    let recs = await buf.read(1024 * 1024);
    expect(values(recs)).toEqual([0, 1, 2, 3, 4]);
    expect(recs.every((r) => !r.backfill)).toBe(true);
    await buf.acknowledge(recs[1].end);
    expect(values(await buf.read(1024 * 1024))).toEqual([2, 3, 4]);
    await buf.close();

    // A new process: what was not acknowledged comes back, as backfill, followed by what it appends.
    const again = new SampleBuffer({ dir, maxBytes: 10 * 1024 * 1024, log });
    await again.open();
    await again.append(batch(5), true);
    recs = await again.read(1024 * 1024);
    expect(values(recs)).toEqual([2, 3, 4, 5]);
    expect(recs.map((r) => r.backfill)).toEqual([true, true, true, true]);
    await again.acknowledge(recs[recs.length - 1].end);
    expect(await again.read(1024 * 1024)).toEqual([]);
    expect(again.hasUnsent()).toBe(false);
    await again.close();
    // Consumed segments of the earlier run are gone.
    expect(readdirSync(dir).filter((n) => n.startsWith("seg-"))).toHaveLength(1);
  });

  it("cuts a torn last line (a crash mid-write) and keeps every complete record", async () => {
    const buf = new SampleBuffer({ dir, maxBytes: 10 * 1024 * 1024, log });
    await buf.open();
    for (let i = 0; i < 3; i++) await buf.append(batch(i), false);
    await buf.close();
    const seg = readdirSync(dir).find((n) => n.startsWith("seg-"))!;
    appendFileSync(join(dir, seg), '{"t":1,"b":false,"d":{"samples":[{"node_');
    const again = new SampleBuffer({ dir, maxBytes: 10 * 1024 * 1024, log });
    await again.open();
    expect(values(await again.read(1024 * 1024))).toEqual([0, 1, 2]);
    expect(warnings.join(" ")).toContain("torn tail");
    await again.close();
  });

  it("stays within its bound by dropping the oldest segments, and says how many records went", async () => {
    const maxBytes = 256 * 1024;
    const buf = new SampleBuffer({ dir, maxBytes, log });
    await buf.open();
    for (let i = 0; i < 200; i++) await buf.append(batch(i, 10), false);
    const stats = buf.stats();
    expect(stats.bytes).toBeLessThanOrEqual(maxBytes);
    expect(stats.droppedRecords).toBeGreaterThan(0);
    expect(warnings.join(" ")).toContain("oldest samples dropped");
    const recs = await buf.read(10 * 1024 * 1024);
    // The newest survive, still in order, and the dropped ones are exactly the oldest.
    expect(values(recs)).toEqual(Array.from({ length: recs.length }, (_, i) => 200 - recs.length + i));
    expect(recs.length + stats.droppedRecords).toBe(200);
    await buf.close();
  });

  it("ships consecutive records by backfill flag, old and earlier-run records as backfill, a huge poll in parts", () => {
    const now = Date.now();
    const rec = (i: number, over: Partial<BufferedRecord> = {}, count = 1): BufferedRecord => ({
      batch: batch(i, count),
      appended_at: now,
      backfill: false,
      end: { segment: 1, offset: i },
      ...over,
    });
    const out = shipments([rec(0, { backfill: true }), rec(1, { appended_at: now - 60_000 }), rec(2), rec(3), rec(4, {}, MAX_SAMPLES_PER_POST + 10)], now);
    expect(out.map((s) => [s.body.backfill, s.body.samples.length, s.records.map((r) => r.end.offset)])).toEqual([
      [true, 2, [0, 1]],
      [false, 2, [2, 3]],
      [false, MAX_SAMPLES_PER_POST, []],
      [false, 10, [4]],
    ]);
  });
});
