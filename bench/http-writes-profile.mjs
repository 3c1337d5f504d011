/* global fetch */
// What PostgreSQL spends per write of bench/http-load.mjs's mix (`node bench/http-writes-profile.mjs`; needs
// `npm run build` first). Issue 29: the writes dominated the database's CPU under the mix.
//
// Starts an embedded PostgreSQL with pg_stat_statements preloaded, seeds the http-load data (BENCH_NODES, default
// 3000; BENCH_HISTORY_ROWS, default 200 000), boots the built kernel on it (every plugin, no poller), then for each
// class of BENCH_CLASSES (default: node_create_delete, threshold_create_delete, mute_bulk, poller_flush; also
// read_nodes, read_alert_history, read_interface_top) runs BENCH_ITERATIONS (default 200) sequential requests, waits
// until the bus fan-out has settled (no active backend besides this one for 1 s), and prints per request: statements,
// PostgreSQL execution ms (pg_stat_statements; BENCH_TRACK_PLANNING=1 adds planning), PostgreSQL CPU ms (the server's
// processes, /proc), round-trip ms; then the statements that cost most (BENCH_TOP, default 12; BENCH_ALL=1 the rest).
// poller_flush: see pollerFlush below. BENCH_HOLD=1 keeps the seeded database and kernel up until SIGINT.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { bootKernel, load, MAIN, print, QUIET_KERNEL_ENV, ROOT } from "./lib/kernel.mjs";
import { seedHttpLoad } from "./lib/http-seed.mjs";
import { descendants, procCpuSecs, sleep } from "./lib/flows-peers.mjs";

const NODES = Number(process.env.BENCH_NODES ?? 3000);
const HISTORY = Number(process.env.BENCH_HISTORY_ROWS ?? 200_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const TOP = Number(process.env.BENCH_TOP ?? 12);

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first.`);
  process.exit(1);
}

const postgresPids = () =>
  descendants(process.pid).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, "utf8").trim() === "postgres";
    } catch {
      return false;
    }
  });
const pgCpu = () => postgresPids().reduce((s, p) => s + procCpuSecs(p), 0);

async function main() {
  print("writes_profile_load", load());
  const { EmbeddedServer } = await import(join(ROOT, "dist/core/store/EmbeddedServer.js"));
  const { JsonLogger } = await import(join(ROOT, "dist/core/logging/Logger.js"));
  const serverDir = mkdtempSync(join(tmpdir(), "nms-bench-writes-pg-"));
  const dataDir = mkdtempSync(join(tmpdir(), "nms-bench-writes-"));
  let server = new EmbeddedServer(serverDir, new JsonLogger("warn", "bench-pg", () => undefined));
  let kernel = null;
  try {
    // pg_stat_statements must be preloaded: set it, restart the server on the same folder.
    let admin = (await server.start()).url;
    let c = new pg.Client({ connectionString: admin });
    await c.connect();
    await c.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
    await c.query(`ALTER SYSTEM SET pg_stat_statements.track = '${process.env.BENCH_TRACK_ALL ? "all" : "top"}'`);
    await c.query(`ALTER SYSTEM SET pg_stat_statements.track_planning = ${process.env.BENCH_TRACK_PLANNING ? "on" : "off"}`);
    await c.end();
    await server.stop();
    server = new EmbeddedServer(serverDir, new JsonLogger("warn", "bench-pg", () => undefined));
    admin = (await server.start()).url;
    c = new pg.Client({ connectionString: admin });
    await c.connect();
    const name = `nms_bench_${randomBytes(4).toString("hex")}`;
    await c.query(`CREATE DATABASE ${name}`);
    await c.end();
    const url = new URL(admin);
    url.pathname = `/${name}`;
    const dbUrl = url.toString();

    const token = randomBytes(24).toString("hex");
    kernel = await bootKernel({ NMS_DATA_DIR: join(dataDir, "kernel"), NMS_DATABASE_URL: dbUrl, NMS_BOOTSTRAP_TOKEN: token, ...QUIET_KERNEL_ENV });
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    await db.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await seedHttpLoad(db, { nodes: NODES, history: HISTORY });
    const nodeIds = (await db.query("SELECT id FROM inventory.nodes ORDER BY name")).rows.map((r) => r.id);
    const pick = () => nodeIds[Math.floor(Math.random() * nodeIds.length)];
    const auth = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const call = async (method, path, body) => {
      const r = await fetch(`${kernel.url}/api/v1${path}`, { method, headers: auth, body: body ? JSON.stringify(body) : undefined });
      const text = await r.text();
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
      return text ? JSON.parse(text) : null;
    };
    let seq = 0;
    const classes = {
      node_create_delete: async () => {
        const n = ++seq;
        const made = await call("POST", "/nodes", { name: `prof-${n}`, address: `10.${200 + ((n >> 16) % 50)}.${(n >> 8) & 255}.${n & 255}` });
        await call("DELETE", `/nodes/${made.id}`);
      },
      threshold_create_delete: async () => {
        const made = await call("POST", "/thresholds", {
          metric: "cpu_util",
          scope_level: "node",
          scope_ids: [pick()],
          direction: "above",
          warning: 80,
          critical: 95,
        });
        await call("DELETE", `/thresholds/${made.id}`);
      },
      // The mix's reads, for comparison (BENCH_CLASSES=read_nodes,…): what each costs the database per request.
      read_nodes: () => call("GET", "/nodes?limit=100"),
      read_alert_history: () => call("GET", "/alerts/history?limit=100"),
      read_interface_top: () => call("GET", "/metrics/interface-top?metric=throughput&limit=10"),
      mute_bulk: async () => {
        await call("POST", "/mutes/bulk", {
          node_ids: [pick()],
          metric_name: "cpu_util",
          reason: "http load bench",
          until: new Date(Date.now() + 3_600_000).toISOString(),
        });
      },
    };
    if (process.env.BENCH_HOLD) {
      // For EXPLAIN by hand: the seeded database and the kernel stay up until SIGINT.
      print("writes_profile_hold", `database=${dbUrl} kernel=${kernel.url} token=${token}`);
      await new Promise((resolve) => process.once("SIGINT", resolve));
    }
    const only = process.env.BENCH_CLASSES?.split(",") ?? ["node_create_delete", "threshold_create_delete", "mute_bulk", "poller_flush"];
    /** Waits until no other backend of this database is active for 1 s (the bus fan-out after the last write). */
    const settle = async () => {
      let quiet = 0;
      for (let i = 0; i < 300 && quiet < 10; i++) {
        const { rows } = await db.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state NOT IN ('idle')",
        );
        quiet = rows[0].n === 0 ? quiet + 1 : 0;
        await sleep(100);
      }
    };
    for (const [cls, once] of Object.entries(classes)) {
      if (!only.includes(cls)) continue;
      for (let i = 0; i < 20; i++) await once(); // warm-up (plans, caches)
      await settle();
      await db.query("SELECT pg_stat_statements_reset()");
      const cpu0 = pgCpu();
      const t0 = performance.now();
      for (let i = 0; i < ITERATIONS; i++) await once();
      const wall = performance.now() - t0;
      await settle();
      const cpu = pgCpu() - cpu0;
      // Left out: this client's own statements (the settle polls), and the background jobs' (agenda, inbox, delivery
      // leases, poller watch, report schedules, rule versions), which grow with the wall time, not with the writes.
      const { rows } = await db.query(
        `SELECT query, calls::float8 AS calls, total_exec_time + total_plan_time AS ms, rows::float8 AS rows, shared_blks_hit::float8 AS hit
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND query NOT LIKE '%pg_stat_activity%' AND query NOT LIKE '%pg_stat_statements%'
            AND query !~ '(nms_agenda_jobs|partition_inbox|"deliveries"|"pollers"|pg_locks|"schedules"|"rules"|^NOTIFY)'
          ORDER BY total_exec_time DESC`,
      );
      const calls = rows.reduce((s, r) => s + r.calls, 0);
      const ms = rows.reduce((s, r) => s + r.ms, 0);
      print(
        `writes_profile_${cls}`,
        `iterations=${ITERATIONS} statements_per_write=${(calls / ITERATIONS).toFixed(1)} pg_exec_ms_per_write=${(ms / ITERATIONS).toFixed(2)} ` +
          `pg_cpu_ms_per_write=${((cpu * 1000) / ITERATIONS).toFixed(2)} wall_ms_per_write=${(wall / ITERATIONS).toFixed(1)} load=${load()}`,
      );
      for (const r of rows.slice(0, TOP))
        console.log(
          `#  ${(r.calls / ITERATIONS).toFixed(2).padStart(6)} calls ${(r.ms / ITERATIONS).toFixed(3).padStart(8)} ms ${(r.hit / ITERATIONS).toFixed(0).padStart(7)} blks  ${r.query.replace(/\s+/g, " ").slice(0, 260)}`,
        );
      if (process.env.BENCH_ALL)
        for (const r of rows.slice(TOP))
          console.log(
            `#  ${(r.calls / ITERATIONS).toFixed(2).padStart(6)} calls ${(r.ms / ITERATIONS).toFixed(3).padStart(8)} ms  ${r.query.replace(/\s+/g, " ").slice(0, 160)}`,
          );
    }
    if (only.includes("poller_flush")) await pollerFlush(db);
    await db.end();
  } finally {
    await kernel?.stop().catch((e) => console.error(String(e).slice(0, 500)));
    await server.stop().catch(() => undefined);
    rmSync(serverDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The poller's write path (services/SampleSink.ts: one transaction per flush of up to 5,000 samples; its samples and
 * latest statements, as SampleRepository writes them): FLUSHES (default 40) flushes of the 9 interface metrics of
 * 8 interfaces of random nodes, alternately with latest's user triggers (latest_pairs, migration 0050) enabled and
 * disabled: the database's execution ms per flush of each, and the difference per latest row.
 */
async function pollerFlush(db) {
  const flushes = Number(process.env.BENCH_FLUSHES ?? 40);
  const metrics = [
    "if_in_bps",
    "if_out_bps",
    "if_util_in_pct",
    "if_util_out_pct",
    "if_in_errors_ps",
    "if_out_errors_ps",
    "if_in_discards_ps",
    "if_out_discards_ps",
    "if_oper_up",
  ];
  const nodes = (await db.query("SELECT id FROM inventory.nodes")).rows.map((r) => r.id);
  const perNode = metrics.length * 8;
  const nodesPerFlush = Math.floor(5000 / perNode);
  const times = { on: [], off: [] };
  await db.query("SELECT pg_stat_statements_reset()");
  for (let f = 0; f < flushes; f++) {
    const mode = f % 2 === 0 ? "on" : "off";
    const at = Date.now() + f; // newer than what latest holds: every row is updated
    const cols = [[], [], [], [], [], [], [], []];
    for (let n = 0; n < nodesPerFlush; n++) {
      const node = nodes[(f * nodesPerFlush + n) % nodes.length];
      for (let i = 1; i <= 8; i++)
        for (const m of metrics) {
          cols[0].push(node);
          cols[1].push(m);
          cols[2].push(i);
          cols[3].push(-1);
          cols[4].push(Math.random() * 1e9);
          cols[5].push(at);
          cols[6].push(`Gi0/${i}`);
          cols[7].push(null);
        }
    }
    await db.query("BEGIN");
    if (mode === "off") await db.query("ALTER TABLE polling.latest DISABLE TRIGGER USER");
    const t0 = performance.now();
    await db.query(
      `INSERT INTO polling.samples AS s (node_id, metric, ifindex, row_key, at, value)
       SELECT u.node_id, u.metric, u.ifindex, u.row_key, timestamptz 'epoch' + u.at_ms * interval '1 millisecond', u.value
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::bigint[], $6::float8[]) AS u(node_id, metric, ifindex, row_key, at_ms, value)
       ON CONFLICT (node_id, metric, ifindex, row_key, at) DO NOTHING`,
      [cols[0], cols[1], cols[2], cols[3], cols[5], cols[4]],
    );
    const t1 = performance.now();
    await db.query(
      `INSERT INTO polling.latest AS l (node_id, metric, ifindex, row_key, value, at, if_name, row_name)
       SELECT u.node_id, u.metric, u.ifindex, u.row_key, u.value, timestamptz 'epoch' + u.at_ms * interval '1 millisecond', u.if_name, u.row_name
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::float8[], $6::bigint[], $7::text[], $8::text[])
              AS u(node_id, metric, ifindex, row_key, value, at_ms, if_name, row_name)
       ON CONFLICT (node_id, metric, ifindex, row_key) DO UPDATE
          SET value = EXCLUDED.value, at = EXCLUDED.at, if_name = EXCLUDED.if_name, row_name = EXCLUDED.row_name
        WHERE l.at <= EXCLUDED.at`,
      cols,
    );
    const t2 = performance.now();
    if (mode === "off") await db.query("ALTER TABLE polling.latest ENABLE TRIGGER USER");
    // Triggers off leave latest_pairs behind: roll back both modes alike (the work is measured, not kept).
    await db.query("ROLLBACK");
    if (f >= 2) times[mode].push({ samples: t1 - t0, latest: t2 - t1, rows: cols[0].length });
  }
  const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const { rows: top } = await db.query(
    `SELECT calls::int AS calls, total_exec_time / calls AS ms, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 6`,
  );
  for (const r of top)
    console.log(`#  ${String(r.calls).padStart(4)} calls ${r.ms.toFixed(2).padStart(8)} ms/call  ${r.query.replace(/\s+/g, " ").slice(0, 200)}`);
  for (const mode of ["on", "off"]) {
    const t = times[mode];
    print(
      `writes_profile_poller_flush_triggers_${mode}`,
      `flushes=${t.length} rows_per_flush=${t[0].rows} samples_insert_ms_median=${med(t.map((x) => x.samples)).toFixed(1)} latest_upsert_ms_median=${med(t.map((x) => x.latest)).toFixed(1)}`,
    );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
