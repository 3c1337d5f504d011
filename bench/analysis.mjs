/* global fetch */
// Analysis benchmark (needs `npm run build` first): how long each analysis tool takes over a realistic store.
//
// Starts PostgreSQL (DATABASE_URL when set, else an embedded server in a temporary folder), makes a fresh database and
// starts `node dist/core/main.js` on it (built-in plugins, no embedded poller). Then, directly in PostgreSQL:
//   - 50 folders (10 sites × 5 racks, each site with a /22 in ip_ranges) and NODES nodes (default 500), IFS
//     interfaces each (default 20, 1 Gb/s);
//   - DAYS days (default 7) of samples every STEP_MIN minutes (default 60): if_in_bps and if_out_bps per interface
//     (a slow trend plus noise; one interface on a tenth of the nodes grows 48 Mb/s a day), if_in_errors_ps per interface, if_oper_up per interface and reachable per node
//     (a few flapping); then ANALYZE.
// Then it runs each tool with scope all through POST /api/v1/analysis/jobs and polls GET /analysis/jobs/{id}
// until it finishes. Prints
//   analysis_sample_rows, analysis_fill_ms, analysis_<tool>_ms (wall time from the POST to succeeded), analysis_<tool>_findings,
//   analysis_findings_page_p50_ms (GET /analysis/findings?limit=100, deep keyset pages), load (1/5/15)
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, bootKernel, load, MAIN, print, seedInventory } from "./lib/kernel.mjs";

const NODES = Number(process.env.BENCH_ANALYSIS_NODES ?? 500);
const IFS = Number(process.env.BENCH_ANALYSIS_IFS ?? 20);
const DAYS = Number(process.env.BENCH_ANALYSIS_DAYS ?? 7);
const STEP_MIN = Number(process.env.BENCH_ANALYSIS_STEP_MIN ?? 60);
const TOOLS = [
  ["capacity_forecast", { lookbackDays: DAYS }],
  ["error_hotspots", {}],
  ["flapping", {}],
  ["silent_nodes", {}],
  ["subnet_utilisation", { includeAll: true }],
];

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first.`);
  process.exit(1);
}

const token = randomBytes(24).toString("hex");
const { dataDir, database, cleanup } = benchStore("analysis");

async function fill(db) {
  await seedInventory(db, { sites: 10, racks: 5, nodes: NODES });
  await db.query(`UPDATE inventory.node_groups SET ip_ranges = ARRAY[('10.' || (row_number) || '.0.0/22')::cidr]
                    FROM (SELECT id AS gid, row_number() OVER (ORDER BY name) FROM inventory.node_groups WHERE parent_id IS NULL) s WHERE id = s.gid`);
  await db.query(`INSERT INTO polling.interfaces (node_id, ifindex, if_name, if_speed_bps)
                  SELECT n.id, i, 'Gi0/' || i, 1000000000 FROM inventory.nodes n, generate_series(1, ${IFS}) i`);
  const now = Date.now();
  const start = now - DAYS * 86_400_000;
  for (let d = Math.floor(start / 86_400_000); d <= Math.floor(now / 86_400_000); d++) {
    const from = new Date(d * 86_400_000);
    const name = `samples_${from.toISOString().slice(0, 10).replace(/-/g, "")}`;
    await db.query(
      `CREATE TABLE IF NOT EXISTS polling.${name} PARTITION OF polling.samples FOR VALUES FROM ('${from.toISOString()}') TO ('${new Date((d + 1) * 86_400_000).toISOString()}')`,
    );
  }
  const steps = Math.floor((DAYS * 1440) / STEP_MIN);
  const t0 = performance.now();
  // One day of steps per statement keeps each insert moderate.
  const perDay = Math.floor(1440 / STEP_MIN);
  for (let s0 = 0; s0 < steps; s0 += perDay) {
    const s1 = Math.min(steps, s0 + perDay) - 1;
    const at = `to_timestamp((${start} + s * ${STEP_MIN * 60000}) / 1000.0)`;
    await db.query(
      `INSERT INTO polling.samples (node_id, metric, ifindex, at, value)
       SELECT n.id, m.metric, i.i, ${at},
              CASE m.metric
                WHEN 'if_in_bps' THEN 1e8 + (hashtext(n.id::text || i.i) % 100) * 1e6 + random() * 1e7
                  + s * CASE WHEN i.i = 3 AND abs(hashtext(n.id::text)) % 10 = 0 THEN 2e6 ELSE (abs(hashtext(n.id::text)) % 50) * 1e3 END
                WHEN 'if_out_bps' THEN 5e7 + random() * 1e7
                WHEN 'if_in_errors_ps' THEN CASE WHEN i.i = 1 AND abs(hashtext(n.id::text)) % 20 = 0 THEN 5 ELSE random() * 0.1 END
                ELSE CASE WHEN i.i = 2 AND abs(hashtext(n.id::text)) % 25 = 0 THEN s % 2 ELSE 1 END END
         FROM inventory.nodes n, generate_series(1, ${IFS}) i(i), generate_series(${s0}, ${s1}) s,
              (VALUES ('if_in_bps'), ('if_out_bps'), ('if_in_errors_ps'), ('if_oper_up')) m(metric)`,
    );
    await db.query(
      `INSERT INTO polling.samples (node_id, metric, ifindex, at, value)
       SELECT n.id, 'reachable', -1, ${at}, CASE WHEN abs(hashtext(n.id::text)) % 50 = 0 THEN s % 2 ELSE 1 END
         FROM inventory.nodes n, generate_series(${s0}, ${s1}) s WHERE abs(hashtext(n.id::text)) % 40 <> 0`,
    );
  }
  await db.query("ANALYZE");
  print("analysis_fill_ms", Math.round(performance.now() - t0));
  print("analysis_sample_rows", (await db.query("SELECT count(*)::bigint AS n FROM polling.samples")).rows[0].n);
}

async function api(url, method, path, body) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

try {
  const url = await database();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const kernel = await bootKernel({
    NMS_DATA_DIR: join(dataDir, "kernel"),
    NMS_DATABASE_URL: url,
    NMS_BOOTSTRAP_TOKEN: token,
    NMS_LOG_LEVEL: "warn",
    NMS_JOBS_PROCESS_EVERY: "1 second",
    NMS__pluginConfig__polling__embeddedPoller: "false",
  });
  await fill(db);
  for (const [tool, params] of TOOLS) {
    const t0 = performance.now();
    const { id } = await api(kernel.url, "POST", "/analysis/jobs", { tool, scope_kind: "all", params });
    let job;
    for (;;) {
      job = await api(kernel.url, "GET", `/analysis/jobs/${id}`);
      if (job.status === "succeeded" || job.status === "failed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (job.status !== "succeeded") throw new Error(`${tool} failed`);
    print(`analysis_${tool}_ms`, Math.round(performance.now() - t0));
    print(`analysis_${tool}_findings`, job.counts.total);
  }
  // Keyset pages through all findings.
  const times = [];
  let query = "limit=100";
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    const page = await api(kernel.url, "GET", `/analysis/findings?${query}`);
    times.push(performance.now() - t0);
    if (page.length < 100) break;
    const last = page[page.length - 1];
    query = `limit=100&before=${encodeURIComponent(last.at)}&before_id=${last.id}`;
  }
  times.sort((a, b) => a - b);
  print("analysis_findings_page_p50_ms", times[Math.floor(times.length / 2)].toFixed(1));
  print("load", load());
  await db.end();
  await kernel.stop();
} finally {
  await cleanup();
}
