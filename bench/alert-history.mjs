/* global fetch, URLSearchParams */
// Alert-history benchmark (`npm run bench:alert-history`; needs `npm run build` first).
//
// Starts PostgreSQL (DATABASE_URL when set, else an embedded server in a temporary folder), makes a fresh
// database on it and starts `node dist/core/main.js` on that database as a child process (built-in plugins,
// no embedded poller, a free loopback port). Then, directly in PostgreSQL:
//   - 50 folders (10 sites × 5 racks) and 2000 nodes;
//   - ROWS history rows (default 10 000 000; BENCH_HISTORY_ROWS to change), written with
//     INSERT … SELECT FROM generate_series in batches of BATCH rows: 90 days of history, 10 rows per flush
//     (each group of 10 shares recorded_at), severities info 20 % / warning 50 % / critical 30 %, fires and
//     clears alternating, 8 metrics plus liveness rows (no metric, 4 %) and pool rows (1 %);
//   - acks on 5 % of the incidents; then ANALYZE.
// Then it times GET /api/v1/alerts/history pages (limit 100) deep in the table: each request's `before` is a
// random point between 75 % and 85 % of the way down (newest first), with the cursor's before_id; REQUESTS
// sequential requests per scenario (a few scenarios take the first page instead, and a few use a viewer token
// restricted to one site), wall-clock time of the HTTP request as the client sees it. Prints
//   alert_history_rows, alert_history_fill_ms, alert_history_fill_rows_per_s, alert_history_table_mb,
//   alert_history_<scenario>_p50_ms / _p99_ms / _rows (rows of the last page); top_unfiltered is the first page (no cursor)
//   alert_history_node_directory_p50_ms (reading inventory.node_directory for one folder, directly in PostgreSQL)
// and stops the kernel (and the embedded server).
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, bootKernel, MAIN, seedInventory } from "./lib/kernel.mjs";

const ROWS = Number(process.env.BENCH_HISTORY_ROWS ?? 10_000_000);
const BATCH = Number(process.env.BENCH_HISTORY_BATCH ?? 500_000);
const REQUESTS = Number(process.env.BENCH_HISTORY_REQUESTS ?? 300);
const NODES = 2000;
const SITES = 10;
const RACKS = 5;
const SPAN_MS = 90 * 86_400_000;
const FLUSH = 10;

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first (npm run bench:alert-history does).`);
  process.exit(1);
}

const print = (key, value) => console.log(`${key}=${value}`);
const token = randomBytes(24).toString("hex");
const { dataDir, database, cleanup } = benchStore("history");

/** Starts the kernel on that database; resolves with {url, stop} at the ready line. */
function boot(databaseUrl) {
  return bootKernel({
    NMS_DATA_DIR: join(dataDir, "kernel"),
    NMS_DATABASE_URL: databaseUrl,
    NMS_BOOTSTRAP_TOKEN: token,
    NMS_LOG_LEVEL: "warn",
    NMS__pluginConfig__polling__embeddedPoller: "false",
  });
}

async function fill(db) {
  // Inventory through raw SQL: a benchmark fixture, as the tests do.
  await seedInventory(db, { sites: SITES, racks: RACKS, nodes: NODES });
  await db.query(`CREATE TEMP TABLE bench_nodes AS SELECT row_number() OVER (ORDER BY id) - 1 AS i, id FROM inventory.nodes`);
  await db.query("CREATE UNIQUE INDEX ON bench_nodes (i)");
  // 200 checks, one uuid each; incidents are node + check.
  await db.query("CREATE TEMP TABLE bench_checks AS SELECT i - 1 AS i, gen_random_uuid() AS id FROM generate_series(1, 200) i");
  await db.query("CREATE UNIQUE INDEX ON bench_checks (i)");

  const t0 = performance.now();
  const start = Date.now() - SPAN_MS;
  for (let from = 0; from < ROWS; from += BATCH) {
    const to = Math.min(ROWS, from + BATCH) - 1;
    // Row g: flush g / 10 at start + flush × step ms; incident g / 2 (a fire and its clear share it): node a hash of it,
    // check, severity and metric its remainders.
    await db.query(
      `INSERT INTO alerts.history (recorded_at, at_unix_ms, incident_key, check_id, direction, ifindex, if_name, metric, node_id,
                                   observed_value, threshold_value, resolved, row_key, row_name, severity, state, subject_kind, subject_name, title)
       SELECT to_timestamp(($1::bigint + (g / ${FLUSH}) * $2::float8) / 1000.0),
              ($1::bigint + (g / ${FLUSH}) * $2::float8)::bigint,
              CASE WHEN kind = 'pool' THEN 'pool:edge-' || (g % 4) || ':' || c.id ELSE n.id || ':' || c.id END,
              c.id,
              CASE WHEN metric IS NULL THEN NULL ELSE 'above' END,
              CASE WHEN metric LIKE 'if_%' THEN (g % 48)::int END,
              CASE WHEN metric LIKE 'if_%' THEN 'Gi0/' || (g % 48) END,
              metric,
              CASE WHEN kind = 'node' THEN n.id END,
              CASE WHEN metric IS NULL THEN NULL ELSE 50 + (g % 50) END,
              CASE WHEN metric IS NULL THEN NULL ELSE 90 END,
              g % 2 = 1,
              CASE WHEN metric = 'mem_used' THEN (g % 4)::int END,
              CASE WHEN metric = 'mem_used' THEN 'pool-' || (g % 4) END,
              sev,
              CASE WHEN g % 2 = 1 THEN 'ok' WHEN metric IS NULL THEN 'unreachable' ELSE CASE sev WHEN 'info' THEN 'ok' ELSE sev END END,
              kind,
              CASE WHEN kind = 'pool' THEN 'edge-' || (g % 4) END,
              CASE WHEN metric IS NULL THEN 'Unreachable' ELSE metric || ' above 90' END
         FROM generate_series($3::bigint, $4::bigint) g
         CROSS JOIN LATERAL (SELECT
              CASE WHEN g % 100 = 0 THEN 'pool' ELSE 'node' END AS kind,
              CASE WHEN (g / 2) % 10 < 2 THEN 'info' WHEN (g / 2) % 10 < 7 THEN 'warning' ELSE 'critical' END AS sev,
              CASE WHEN g % 100 = 0 OR (g / 2) % 25 = 0 THEN NULL
                   ELSE (ARRAY['cpu_util','mem_used','if_in_util','if_out_util','if_in_errors','temperature','disk_used','latency_ms'])[1 + ((g / 2) % 8)]
              END AS metric) x
         JOIN bench_nodes n ON n.i = (hashint8(g / 2)::bigint & 2147483647) % ${NODES}
         JOIN bench_checks c ON c.i = (g / 2) % 200`,
      [start, SPAN_MS / (ROWS / FLUSH), from, to],
    );
    process.stderr.write(`\rfilled ${to + 1} / ${ROWS} rows (${Math.round((performance.now() - t0) / 1000)} s)   `);
  }
  process.stderr.write("\n");
  const fillMs = performance.now() - t0;
  await db.query(
    `INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by, note)
     SELECT DISTINCT ON (incident_key, severity) incident_key, severity, node_id, 'bench', 'acked by the benchmark'
       FROM (SELECT incident_key, severity, node_id FROM alerts.history TABLESAMPLE SYSTEM (2)) s
      WHERE abs(hashtext(incident_key || severity)) % 20 = 0`,
  );
  await db.query("ANALYZE alerts.history; ANALYZE alerts.acks");
  return fillMs;
}

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function main() {
  const cores = cpus();
  print(
    "alert_history_machine",
    `${cores.length}x ${cores[0]?.model ?? "?"}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const databaseUrl = await database();
  const kernel = await boot(databaseUrl);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const fillMs = await fill(db);
    print("alert_history_rows", ROWS);
    print("alert_history_fill_ms", Math.round(fillMs));
    print("alert_history_fill_rows_per_s", Math.round(ROWS / (fillMs / 1000)));
    const size = await db.query("SELECT pg_total_relation_size('alerts.history') AS total, pg_relation_size('alerts.history') AS heap");
    print("alert_history_table_mb", `${Math.round(size.rows[0].total / 2 ** 20)} (heap ${Math.round(size.rows[0].heap / 2 ** 20)})`);

    // Cursors 75-85 % deep: the table is ordered newest first, so depth d is the row at offset d × ROWS.
    // Rows are evenly spread in time: the instant at depth d is end - d × span; before_id comes from that instant's rows.
    const { rows: bounds } = await db.query(
      "SELECT extract(epoch FROM min(recorded_at)) * 1000 AS lo, extract(epoch FROM max(recorded_at)) * 1000 AS hi FROM alerts.history",
    );
    const lo = Number(bounds[0].lo);
    const hi = Number(bounds[0].hi);
    const cursors = [];
    for (let i = 0; i < 64; i++) {
      const depth = 0.75 + Math.random() * 0.1;
      const { rows } = await db.query(
        `SELECT to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, id FROM alerts.history
          WHERE recorded_at <= to_timestamp($1 / 1000.0) ORDER BY recorded_at DESC, id DESC LIMIT 1`,
        [hi - depth * (hi - lo)],
      );
      cursors.push(rows[0]);
    }
    const { rows: picks } = await db.query(
      `SELECT (SELECT id FROM inventory.nodes ORDER BY name LIMIT 1 OFFSET 137) AS node,
              (SELECT name FROM inventory.nodes ORDER BY name LIMIT 1 OFFSET 137) AS node_name,
              (SELECT id FROM inventory.node_groups WHERE parent_id IS NULL ORDER BY name LIMIT 1) AS site,
              (SELECT id FROM inventory.node_groups WHERE parent_id IS NOT NULL ORDER BY name LIMIT 1) AS rack`,
    );
    const p = picks[0];
    // What the node filters pay once per request: reading the published directory (recursive folder paths, tags).
    const dir = [];
    for (let i = 0; i < 55; i++) {
      const t = performance.now();
      await db.query("SELECT id FROM inventory.node_directory WHERE $1::uuid = ANY (folder_path)", [p.site]);
      if (i >= 5) dir.push(performance.now() - t);
    }
    print("alert_history_node_directory_p50_ms", percentile(dir, 50).toFixed(1));

    const headers = { Authorization: `Bearer ${token}` };
    // A viewer restricted to one site (200 of the 2000 nodes), for the scoped scenarios.
    const created = await fetch(`${kernel.url}/api/v1/tokens`, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "bench-site-viewer", role: "viewer", scope: { folders: [p.site] } }),
    });
    if (created.status !== 201) throw new Error(`token create failed: ${created.status} ${await created.text()}`);
    const siteToken = (await created.json()).token;

    // [name, filters, deep (a cursor 75-85 % down; else the first page), token]
    const scenarios = [
      ["top_unfiltered", {}, false],
      ["deep_unfiltered", {}],
      ["deep_severity_critical", { severity: "critical" }],
      ["deep_severity_warning_critical_fires", { severity: "warning,critical", resolved: "false" }],
      ["deep_node_id", { node_id: p.node }],
      ["deep_node_id_severity_critical", { node_id: p.node, severity: "critical" }],
      ["deep_group_site_severity_critical", { group_id: p.site, severity: "critical" }],
      ["deep_group_rack", { group_id: p.rack }],
      ["deep_node_q", { node_q: p.node_name.slice(-4) }],
      ["deep_metric_cpu_state_critical", { metric: "cpu", state: "critical" }],
      ["deep_acked_true", { acked: "true" }],
      ["top_group_site", { group_id: p.site }, false],
      ["top_node_q", { node_q: p.node_name.slice(-4) }, false],
      ["top_scoped_site", {}, false, siteToken],
      ["deep_scoped_site", {}, true, siteToken],
      ["deep_scoped_site_severity_critical", { severity: "critical" }, true, siteToken],
    ];
    for (const [name, filter, deep = true, bearer = token] of scenarios) {
      const times = [];
      let last = 0;
      for (let i = 0; i < REQUESTS + 5; i++) {
        const c = cursors[i % cursors.length];
        const qs = new URLSearchParams({ ...filter, limit: "100", ...(deep ? { before: c.at, before_id: c.id } : {}) });
        const t = performance.now();
        const res = await fetch(`${kernel.url}/api/v1/alerts/history?${qs}`, { headers: { Authorization: `Bearer ${bearer}` } });
        const body = await res.json();
        const ms = performance.now() - t;
        if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(body)}`);
        last = body.length;
        if (i >= 5) times.push(ms); // the first 5 warm caches and plans
      }
      print(`alert_history_${name}_p50_ms`, percentile(times, 50).toFixed(1));
      print(`alert_history_${name}_p99_ms`, percentile(times, 99).toFixed(1));
      print(`alert_history_${name}_rows`, last);
    }
  } finally {
    await db.end();
    await kernel.stop();
    await cleanup();
  }
}

main().catch(async (err) => {
  console.error(err);
  await cleanup();
  process.exit(1);
});
