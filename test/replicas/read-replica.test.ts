/**
 * Read replicas: the service on a primary with one real streaming replica (test/support/pgReplica.ts) in
 * DATABASE_READ_URL. The heavy read routes run on the replica (its pg_stat_activity shows the read pool, the metrics
 * count the reads there); a write is read back at once on its read-your-write route (the primary); with the replica's
 * replay paused a heavy list is stale only until the staleness bound passes, then it reads the primary; with the
 * replica stopped every route still answers from the primary, never 500.
 */
import { rmSync } from "node:fs";
import pg from "pg";
import { JsonLogger } from "../../core/logging/Logger.js";
import { ReadReplicas } from "../../core/store/ReadReplicas.js";
import { createDatabase } from "../../core/testing/index.js";
import { freePort } from "../../core/store/EmbeddedServer.js";
import { startReplicaPair, replayed, type ReplicaPair } from "../support/pgReplica.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";
import { until } from "../support/wait.js";

const TOKEN = "read-replica-token-0123456789abcdef";
const MAX_LAG_SECS = 4;
let pair: ReplicaPair;
let kernel: SpawnedKernel;
let primaryDb: string;
let replicaDb: string;
let replicaName: string;

/** The heavy read routes that go to ctx.store.read. */
const HEAVY = [
  "/alerts/history",
  "/alerts/calendar",
  "/events",
  "/events/stats?group_by=kind",
  "/flow/conversations",
  "/flow/top-as",
  "/reports/runs",
  "/analysis/findings",
];

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${kernel.url}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
  });
}

async function rows(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The service's metric lines named `name` with their labels, as label text → value. */
async function metric(name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${kernel.url}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(name + "{")) continue;
    out.set(line.slice(name.length, line.lastIndexOf(" ")), Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return out;
}

async function served(): Promise<{ replica: number; primary: number }> {
  const m = await metric("nms_db_read_queries_total");
  return { replica: m.get(`{served_by="${replicaName}"}`) ?? 0, primary: m.get('{served_by="primary"}') ?? 0 };
}

async function runIds(): Promise<string[]> {
  const res = await api("/reports/runs?limit=100");
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }[]).map((r) => r.id);
}

beforeAll(async () => {
  pair = await startReplicaPair();
  primaryDb = await createDatabase(pair.primaryUrl, "nms_rr");
  replicaDb = pair.onReplica(primaryDb);
  await replayed(replicaDb);
  const u = new URL(replicaDb);
  replicaName = `${u.hostname}:${u.port}${u.pathname}`;
  kernel = await spawnKernel({
    env: {
      DATABASE_URL: primaryDb,
      DATABASE_READ_URL: replicaDb,
      NMS_READ_MAX_LAG_SECS: String(MAX_LAG_SECS),
      NMS_READ_CHECK_INTERVAL_MS: "200",
      NMS_BUILTIN_PLUGINS: "true",
      NMS_BOOTSTRAP_TOKEN: TOKEN,
      NMS__pluginConfig__polling__embeddedPoller: "false",
    },
    timeoutMs: 60_000,
  });
}, 120_000);

afterAll(async () => {
  await kernel?.stop();
  if (kernel) rmSync(kernel.dataDir, { recursive: true, force: true });
  await pair?.close();
});

describe("read replicas", () => {
  it("serves the heavy read routes from the replica", async () => {
    await until(
      "the replica serving",
      async () => ((await metric("nms_db_read_replica_serving")).get(`{replica="${replicaName}"}`) === 1 ? true : null),
      10_000,
    );
    const before = await served();
    for (const path of HEAVY) {
      const res = await api(path);
      expect([path, res.status]).toEqual([path, 200]);
    }
    const after = await served();
    expect(after.replica - before.replica).toBeGreaterThanOrEqual(HEAVY.length);
    expect(after.primary).toBe(before.primary);
    // The replica's own view: the service's read pool is connected to it, on this database.
    const sessions = await rows(pair.replicaUrl, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'nms-core-read' AND datname = $1", [
      new URL(primaryDb).pathname.slice(1),
    ]);
    expect(sessions[0].n).toBeGreaterThan(0);
    const lag = (await metric("nms_db_read_replica_lag_seconds")).get(`{replica="${replicaName}"}`);
    expect(lag).toBeLessThan(MAX_LAG_SECS);
  });

  it("reads a write back on the primary at once, and a stale replica only within the bound", async () => {
    const def = await api("/reports/definitions", {
      method: "POST",
      body: JSON.stringify({ name: "replica check", spec: { sections: [{ kind: "inventory" }] } }),
    });
    expect(def.status).toBe(201);
    const { id: definitionId } = (await def.json()) as { id: string };
    await until(
      "the definition replayed",
      async () => ((await rows(replicaDb, "SELECT 1 FROM reports.definitions WHERE id = $1", [definitionId])).length ? true : null),
      10_000,
    );

    // Replay paused: the replica keeps answering, but misses everything committed from now on.
    await rows(replicaDb, "SELECT pg_wal_replay_pause()");
    const paused = Date.now();
    try {
      const run = await api(`/reports/definitions/${definitionId}/run`, { method: "POST", body: "{}" });
      expect(run.status).toBe(202);
      const { id: runId } = (await run.json()) as { id: string };
      // Read-your-write: the run by id is read on the primary.
      expect((await api(`/reports/runs/${runId}`)).status).toBe(200);
      // The list is a heavy read: within the bound the replica answers, without the run.
      const early = await served();
      expect(await runIds()).not.toContain(runId);
      expect(Date.now() - paused).toBeLessThan(MAX_LAG_SECS * 1000);
      expect((await served()).replica).toBe(early.replica + 1);
      // Past the bound the replica is skipped and the list (from the primary) has the run.
      await until("the list reading the primary", async () => ((await runIds()).includes(runId) ? true : null), (MAX_LAG_SECS + 5) * 1000);
      const staleFor = Date.now() - paused;
      expect(staleFor).toBeGreaterThanOrEqual(MAX_LAG_SECS * 1000 - 300);
      expect((await metric("nms_db_read_replica_serving")).get(`{replica="${replicaName}"}`)).toBe(0);
      expect((await metric("nms_db_read_replica_lag_seconds")).get(`{replica="${replicaName}"}`)).toBeGreaterThan(MAX_LAG_SECS);
      const late = await served();
      expect(late.primary).toBeGreaterThan(early.primary);
      process.stdout.write(`read replica: a paused replica served lists for ${staleFor} ms (bound ${MAX_LAG_SECS} s, check every 200 ms)\n`);
    } finally {
      await rows(replicaDb, "SELECT pg_wal_replay_resume()");
    }
    // Replay resumed: the replica catches up and serves again.
    await until(
      "the replica serving again",
      async () => ((await metric("nms_db_read_replica_serving")).get(`{replica="${replicaName}"}`) === 1 ? true : null),
      10_000,
    );
    const again = await served();
    expect((await api("/reports/runs")).status).toBe(200);
    expect((await served()).replica).toBe(again.replica + 1);
  }, 60_000);

  it("with several URLs, uses only the standbys that answer: not the primary named by mistake, not one that is down", async () => {
    const lines: string[] = [];
    const primary = new pg.Pool({ connectionString: primaryDb, max: 2 });
    const down = new URL(replicaDb);
    down.port = String(await freePort());
    const replicas = new ReadReplicas(
      primary,
      { urls: [primaryDb, replicaDb, down.toString()], maxLagSecs: 5, checkIntervalMs: 200 },
      new JsonLogger("warn", "test", (l) => lines.push(l)),
    );
    // The primary writes all along, as a live one does: the replica replays a moment behind every sample start() takes.
    let writing = true;
    const writer = (async () => {
      while (writing) await primary.query("SELECT txid_current()");
    })();
    try {
      await replicas.start().finally(() => (writing = false));
      await writer;
      const status = replicas.status();
      expect(status.map((r) => [r.name, r.serving])).toEqual([
        [`127.0.0.1:${new URL(primaryDb).port}${new URL(primaryDb).pathname}`, false],
        [replicaName, true],
        [`127.0.0.1:${down.port}${down.pathname}`, false],
      ]);
      expect(status[0].lagSecs).toBeNull();
      expect(status[2].lagSecs).toBeNull();
      expect(lines.join("\n")).toContain("is not a standby");
      // No password in what is logged or named.
      expect(lines.join("\n") + JSON.stringify(status)).not.toContain(decodeURIComponent(new URL(primaryDb).password));
      const where: string[] = [];
      replicas.onServed = (w) => where.push(w);
      for (let i = 0; i < 4; i++) {
        const { rows: r } = await replicas.query<{ standby: boolean }>("SELECT pg_is_in_recovery() AS standby");
        expect(r[0].standby).toBe(true);
      }
      expect(await replicas.tx(async (c) => (await c.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro")).rows[0].ro)).toBe("on");
      expect(where).toEqual(Array(5).fill(replicaName));
      // A time-limited read: the replica's timed sibling pool, the limit set at connect.
      const timed = await replicas.timedQuery<{ standby: boolean; t: string }>(
        300,
        "SELECT pg_is_in_recovery() AS standby, current_setting('statement_timeout') AS t",
      );
      expect(timed.rows[0]).toEqual({ standby: true, t: "300ms" });
      await expect(replicas.timedQuery(300, "SELECT pg_sleep(2)")).rejects.toMatchObject({ code: "57014" });
      // Served by the replica both times; the cancelled read is an answer (503 for the routes), not rerun on the primary.
      expect(where).toEqual(Array(6).fill(replicaName));
    } finally {
      await replicas.close();
      await primary.end();
    }
  });

  it("skips a replica that hangs (its check does not answer), and takes it back when it answers again", async () => {
    const serving = async () => (await metric("nms_db_read_replica_serving")).get(`{replica="${replicaName}"}`);
    pair.freezeReplica(true);
    try {
      const frozen = Date.now();
      await until("the hung replica out of rotation", async () => ((await serving()) === 0 ? true : null), 10_000);
      const outAfter = Date.now() - frozen;
      const before = await served();
      for (const path of HEAVY) {
        const res = await api(path);
        expect([path, res.status]).toEqual([path, 200]);
      }
      const after = await served();
      expect(after.replica).toBe(before.replica);
      expect(after.primary - before.primary).toBeGreaterThanOrEqual(HEAVY.length);
      process.stdout.write(`read replica: a hung replica was out of rotation ${outAfter} ms after it froze\n`);
    } finally {
      pair.freezeReplica(false);
    }
    await until("the replica back in rotation", async () => ((await serving()) === 1 ? true : null), 15_000);
  }, 40_000);

  it("falls back to the primary when the replica stops, never answering 500", async () => {
    await pair.stopReplica();
    const before = await served();
    // Right after the stop: the first reads may still pick the replica, fail there and be answered by the primary.
    for (let round = 0; round < 3; round++) {
      for (const path of HEAVY) {
        const res = await api(path);
        expect([path, res.status]).toEqual([path, 200]);
      }
    }
    const after = await served();
    expect(after.primary - before.primary).toBeGreaterThanOrEqual(3 * HEAVY.length);
    await until(
      "the replica out of rotation",
      async () => ((await metric("nms_db_read_replica_serving")).get(`{replica="${replicaName}"}`) === 0 ? true : null),
      5_000,
    );
  }, 30_000);
});
