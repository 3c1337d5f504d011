/* global fetch */
// Reports benchmark (needs `npm run build` first): one report over 30 days of 500 nodes × 20 interfaces.
//
// Starts PostgreSQL (DATABASE_URL when set, else an embedded server in a temporary folder), makes a fresh database and
// starts `node dist/core/main.js` on it (built-in plugins, no embedded poller, retention long enough for the data).
// Then, directly in PostgreSQL (a benchmark fixture, as the tests' fixtures are):
//   - 50 folders (10 sites × 5 racks), 500 nodes with vendors, 20 interfaces each (polling.interfaces);
//   - samples every STEP minutes (BENCH_REPORT_STEP_MIN, default 60) for 30 days: if_in_bps and if_out_bps per
//     interface, reachable per node, if_in_errors_ps per interface every 4 steps;
//   - 100 000 alert history rows (fires and clears, acks on 10 % of the incidents), 300 000 events, and hour flow
//     rollups (500 exporters × 720 hours × 4 pairs); then ANALYZE.
// Then it creates a definition with every built-in section (range_days 30), runs it once through the API
// (POST /reports/definitions/{id}/run) and waits for it. Prints
//   report_samples_rows, report_fill_ms, report_<kind>[_<n>]_ms (each section, as the run recorded it),
//   report_total_ms (queued → finished, rendering HTML, CSV and PDF included), report_pdf_bytes, report_csv_bytes,
//   report_html_bytes, report_kernel_peak_rss_mb (VmHWM of the kernel process), report_load (1/5/15 min load).
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, bootKernel, load, MAIN, print, seedInventory } from "./lib/kernel.mjs";

const DAYS = 30;
const NODES = 500;
const IFACES = 20;
const STEP_MIN = Number(process.env.BENCH_REPORT_STEP_MIN ?? 60);
const DAY_MS = 86_400_000;

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first.`);
  process.exit(1);
}

const token = randomBytes(24).toString("hex");
const { dataDir, database, cleanup } = benchStore("reports");

/** Day partitions `<table>_YYYYMMDD` (the plugins' own naming) for the days of the range. */
async function partitions(db, table, days) {
  for (const day of days) {
    const name = `${table}_${new Date(day).toISOString().slice(0, 10).replace(/-/g, "")}`;
    await db.query(
      `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF ${table} FOR VALUES FROM ('${new Date(day).toISOString()}') TO ('${new Date(day + DAY_MS).toISOString()}')`,
    );
  }
}

async function fill(db) {
  const t0 = performance.now();
  await seedInventory(db, { sites: 10, racks: 5, nodes: NODES });
  await db.query(`UPDATE inventory.nodes SET vendor = (ARRAY['Cisco','Juniper','Arista','MikroTik'])[1 + abs(hashtext(name)) % 4]`);
  await db.query(`CREATE TEMP TABLE bn AS SELECT (row_number() OVER (ORDER BY id) - 1)::int AS i, id FROM inventory.nodes`);
  await db.query(
    `INSERT INTO polling.interfaces (node_id, ifindex, if_name, if_speed_bps, oper_up)
     SELECT n.id, f, 'Gi0/' || f, 1000000000, true FROM bn n, generate_series(1, ${IFACES}) f`,
  );
  const end = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  const start = end - (DAYS + 1) * DAY_MS;
  const days = Array.from({ length: DAYS + 1 }, (_, i) => start + i * DAY_MS);
  await partitions(db, "polling.samples", days);
  await partitions(db, "events.events", days);
  await partitions(db, "flows.rollup_1h", days);
  const perDay = (24 * 60) / STEP_MIN;
  for (const [i, day] of days.entries()) {
    // Interface throughput and errors, and node liveness, every STEP minutes of the day (only the past).
    await db.query(
      `INSERT INTO polling.samples (node_id, metric, ifindex, row_key, at, value)
       SELECT n.id, m.metric, f, -1, t, CASE m.metric WHEN 'if_in_bps' THEN 1e6 * (1 + (hashint4(n.i * 31 + f) & 1023)) * (1.2 + sin(extract(epoch FROM t) / 7200))
                                                    ELSE 5e5 * (1 + (hashint4(n.i * 17 + f) & 1023)) END
         FROM bn n, generate_series(1, ${IFACES}) f, (VALUES ('if_in_bps'), ('if_out_bps')) m(metric),
              generate_series(to_timestamp($1 / 1000.0), to_timestamp(($1 + ${DAY_MS} - 1) / 1000.0), interval '${STEP_MIN} minutes') t
        WHERE t < now()`,
      [day],
    );
    await db.query(
      `INSERT INTO polling.samples (node_id, metric, ifindex, row_key, at, value)
       SELECT n.id, 'if_in_errors_ps', f, -1, t, (hashint4(n.i * 7 + f + extract(epoch FROM t)::int) & 15) / 10.0
         FROM bn n, generate_series(1, ${IFACES}) f,
              generate_series(to_timestamp($1 / 1000.0), to_timestamp(($1 + ${DAY_MS} - 1) / 1000.0), interval '${STEP_MIN * 4} minutes') t
        WHERE t < now()`,
      [day],
    );
    await db.query(
      `INSERT INTO polling.samples (node_id, metric, ifindex, row_key, at, value)
       SELECT n.id, 'reachable', -1, -1, t, CASE WHEN (hashint4(n.i + extract(epoch FROM t)::int) & 255) = 0 THEN 0 ELSE 1 END
         FROM bn n, generate_series(to_timestamp($1 / 1000.0), to_timestamp(($1 + ${DAY_MS} - 1) / 1000.0), interval '${STEP_MIN} minutes') t
        WHERE t < now()`,
      [day],
    );
    process.stderr.write(`\rsamples: day ${i + 1} / ${days.length} (${Math.round((performance.now() - t0) / 1000)} s, ${perDay} steps a day)   `);
  }
  process.stderr.write("\n");
  // Alert history: fires and their clears 10 minutes later, over the range; acks on 10 % of incidents.
  await db.query(
    `INSERT INTO alerts.history (recorded_at, at_unix_ms, incident_key, check_id, metric, node_id, resolved, severity, state, subject_kind, title)
     SELECT to_timestamp(at / 1000.0), at, n.id || ':' || c, c, 'if_in_bps', n.id, r, s, CASE WHEN r OR s = 'info' THEN 'ok' ELSE s END, 'node', 'bench'
       FROM generate_series(1, 50000) g
       CROSS JOIN LATERAL (SELECT (hashint4(g) & 2147483647) % ${NODES} AS ni,
                                  ('00000000-0000-4000-8000-' || lpad(((g % 50))::text, 12, '0'))::uuid AS c,
                                  (ARRAY['info','warning','critical'])[1 + g % 3] AS s,
                                  $1::bigint + (g::bigint * ${Math.floor((DAYS * DAY_MS) / 50000)}) AS base) x
       JOIN bn n ON n.i = x.ni
       CROSS JOIN LATERAL (VALUES (false, x.base), (true, x.base + 600000)) v(r, at)`,
    [start + DAY_MS],
  );
  await db.query(
    `INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by, acked_at)
     SELECT DISTINCT ON (incident_key, severity) incident_key, severity, node_id, 'bench', to_timestamp(at_unix_ms / 1000.0 + 120)
       FROM alerts.history WHERE NOT resolved AND abs(hashtext(incident_key)) % 10 = 0 ORDER BY incident_key, severity, at_unix_ms DESC`,
  );
  // Events: 300 000 over the range, attributed to nodes, mixed kinds and outcomes.
  await db.query(
    `INSERT INTO events.events (id, received_at, kind, transport, listener, node_id, folder_path, message, action)
     SELECT gen_random_uuid(), to_timestamp(($1::bigint + g::bigint * ${Math.floor((DAYS * DAY_MS) / 300000)}) / 1000.0),
            (ARRAY['syslog','trap'])[1 + g % 2], 'udp', 'bench', d.id, d.folder_path, 'bench event ' || g,
            (ARRAY['stored','matched','unmatched'])[1 + g % 3]
       FROM generate_series(1, 300000) g JOIN bn n ON n.i = g % ${NODES} JOIN inventory.node_directory d ON d.id = n.id`,
    [start + DAY_MS],
  );
  // Hour flow rollups: each node exports 4 pairs per hour.
  await db.query(
    `INSERT INTO flows.rollup_1h (at, exporter, node_id, folder_path, src, dst, proto, src_port, dst_port, src_as, dst_as, bytes, packets, flows)
     SELECT h, ('10.200.' || (n.i / 256) || '.' || (n.i % 256))::inet, d.id, d.folder_path,
            ('192.0.' || (p * 50 + n.i % 50) || '.' || (n.i % 250 + 1))::inet, ('198.51.100.' || (p + 1))::inet, 6, 40000 + p, 443,
            64500 + (n.i % 20), 64600 + p, 1000000 + (hashint4(n.i * 4 + p) & 1048575), 1000, 10
       FROM bn n JOIN inventory.node_directory d ON d.id = n.id, generate_series(0, 3) p,
            generate_series(to_timestamp($1 / 1000.0), now() - interval '1 hour', interval '1 hour') h`,
    [start + DAY_MS],
  );
  await db.query("ANALYZE polling.samples; ANALYZE alerts.history; ANALYZE alerts.acks; ANALYZE events.events; ANALYZE flows.rollup_1h");
  return performance.now() - t0;
}

const FULL = {
  range_days: DAYS,
  sections: [
    { kind: "availability", group_by: "node" },
    { kind: "availability", group_by: "folder" },
    { kind: "top_interfaces", measure: "throughput", limit: 20 },
    { kind: "top_interfaces", measure: "errors", limit: 20 },
    { kind: "alert_summary" },
    { kind: "event_summary" },
    { kind: "flow_top" },
    { kind: "inventory" },
  ],
};

async function api(url, method, path, body) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
}

let kernel;
try {
  const url = await database();
  kernel = await bootKernel({
    NMS_DATA_DIR: join(dataDir, "kernel"),
    NMS_DATABASE_URL: url,
    NMS_BOOTSTRAP_TOKEN: token,
    NMS_LOG_LEVEL: "warn",
    NMS__pluginConfig__polling__embeddedPoller: "false",
    NMS__pluginConfig__polling__retentionDays: "60",
    NMS__pluginConfig__events__retentionDays: "60",
    NMS__pluginConfig__events__syslog__udp: "null",
    NMS__pluginConfig__events__syslog__tcp: "null",
    NMS__pluginConfig__events__syslog__tls: "null",
    NMS__pluginConfig__events__traps__udp: "null",
    NMS__pluginConfig__flows__udp: "null",
  });
  const db = new pg.Client({ connectionString: url });
  db.on("error", () => undefined); // the server stopping at cleanup ends this connection
  await db.connect();
  const fillMs = await fill(db);
  const { rows } = await db.query("SELECT count(*)::int AS n FROM polling.samples");
  print("report_samples_rows", rows[0].n);
  print("report_fill_ms", Math.round(fillMs));
  const { id: def } = await api(kernel.url, "POST", "/reports/definitions", { name: "Bench: 30 days", spec: FULL });
  const t0 = performance.now();
  const { id: run } = await api(kernel.url, "POST", `/reports/definitions/${def}/run`, {});
  let detail;
  for (;;) {
    detail = await api(kernel.url, "GET", `/reports/runs/${run}`);
    if (detail.status === "succeeded" || detail.status === "failed") break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const wallMs = performance.now() - t0;
  if (detail.status !== "succeeded") throw new Error(`run failed: ${detail.error}`);
  const seen = new Map();
  for (const s of detail.sections) {
    const n = (seen.get(s.kind) ?? 0) + 1;
    seen.set(s.kind, n);
    print(`report_${s.kind}${n > 1 ? `_${n}` : ""}_ms`, s.ms);
    if (s.error) print(`report_${s.kind}_error`, JSON.stringify(s.error));
  }
  print("report_total_ms", Date.parse(detail.finished_at) - Date.parse(detail.created_at));
  print("report_wall_ms", Math.round(wallMs));
  for (const o of detail.outputs) print(`report_${o.format}_bytes`, o.bytes);
  const status = readFileSync(`/proc/${kernel.child.pid}/status`, "utf8");
  print("report_kernel_peak_rss_mb", Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024));
  print("report_load", load());
  await db.end();
  await kernel.stop();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanup();
}
