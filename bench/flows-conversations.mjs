/* global fetch */
// GET /flow/conversations latency over 24 h of minute rollups (`npm run bench:flows-conversations`; needs `npm run build` first).
//
// Starts PostgreSQL (DATABASE_URL when set, else an embedded server in a temporary folder), makes a fresh database on
// it and starts `node dist/core/main.js` on that database as a child process (built-in plugins, no embedded poller, no
// flow listener: the store is filled directly). Then, directly in PostgreSQL:
//   - 10 site folders × 5 racks and EXPORTERS (default 500) nodes, one per exporter address (10.200.x.y), spread over
//     the racks;
//   - the minute rollups of the last 24 h: for every exporter and minute, PER_MINUTE (default 10) rows, written with
//     INSERT … SELECT FROM generate_series in batches of one hour. Each exporter has a pool of 200 conversations
//     (an inside host 10.<e>.x.y among 100, an outside host 198.18-19.x.y among 4000, protocol 6/17/1 60/30/10 %, a
//     destination port among 443, 80, 22, 53, 123 …, reported AS numbers); each minute PER_MINUTE of them are active,
//     rotating, with a new source port each minute, and heavy-tailed bytes and packets. node_id and folder_path are
//     the exporter's node's, as the collector writes them. The daily partitions are made first; then ANALYZE.
// Then it times GET /api/v1/flow/conversations over HTTP (wall-clock as the client sees it), REPS sequential requests
// per query shape (but at least MIN_REPS, default 3, once a shape's requests have taken SHAPE_MAX_SECS, default 20), as admin and as a viewer scoped to one
// site folder (a tenth of the exporters), and EXPLAIN (ANALYZE, BUFFERS)s the slowest shape's SQL (the same statement
// the flows repository runs) so that the report says where the time goes.
// Prints flows_conversations_rows, _fill_secs, _table_mb, per shape flows_conversations_<shape>_p50_ms / _p99_ms /
// _rows, and `# plan …` lines.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, bootKernel, load, MAIN, print, seedInventory, QUIET_KERNEL_ENV } from "./lib/kernel.mjs";

const EXPORTERS = Number(process.env.BENCH_EXPORTERS ?? 500);
const PER_MINUTE = Number(process.env.BENCH_CONVERSATIONS_PER_MINUTE ?? 10);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 1440);
const REPS = Number(process.env.BENCH_REPS ?? 30);
const SHAPE_MAX_SECS = Number(process.env.BENCH_SHAPE_MAX_SECS ?? 20);
const MIN_REPS = Number(process.env.BENCH_MIN_REPS ?? 3);
const POOL = 200;
const SITES = 10;
const RACKS = 5;

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first (npm run bench:flows-conversations does).`);
  process.exit(1);
}

const token = randomBytes(24).toString("hex");
const { dataDir, database, cleanup } = benchStore("flowconv");

/** The plan nodes that ran, with their times, and the spill / worker / timing lines (not the buffers of every node). */
const planLines = (rows) =>
  rows
    .map((r) => r["QUERY PLAN"])
    .filter((l) => (/actual time/.test(l) && !/never executed/.test(l)) || /Batches|Workers|Sort Method|Disk|Execution Time|Filter:/.test(l));

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Inventory and minute rollups, directly in PostgreSQL. Returns {rows, fillSecs, endMinuteMs}. */
async function fill(db) {
  await seedInventory(db, {
    sites: SITES,
    racks: RACKS,
    nodes: EXPORTERS,
    prefix: "exporter-",
    pad: 4,
    address: "('10.200.' || (n / 256) || '.' || (n % 256))::inet",
  });
  // e = 0 … EXPORTERS-1 → the node (address 10.200.x.y of n = e + 1) with its folder path.
  await db.query(
    `CREATE TABLE public.bench_exporters AS
     SELECT (row_number() OVER (ORDER BY d.address) - 1)::int AS e, d.address, d.id AS node_id, d.folder_path
       FROM inventory.node_directory d WHERE d.address << '10.200.0.0/16'::inet`,
  );
  await db.query("CREATE UNIQUE INDEX ON public.bench_exporters (e)");
  const endMinuteMs = Math.floor(Date.now() / 60000) * 60000;
  const startMs = endMinuteMs - MINUTES * 60000;
  // The daily partitions of the range (the plugin makes today's and the next two at start).
  for (let day = Math.floor(startMs / 86_400_000) * 86_400_000; day <= endMinuteMs; day += 86_400_000) {
    const name = `rollup_1m_${new Date(day).toISOString().slice(0, 10).replace(/-/g, "")}`;
    await db.query(
      `CREATE TABLE IF NOT EXISTS flows.${name} PARTITION OF flows.rollup_1m FOR VALUES FROM ('${new Date(day).toISOString()}') TO ('${new Date(day + 86_400_000).toISOString()}')`,
    );
  }
  const t0 = performance.now();
  let rows = 0;
  for (let m0 = 0; m0 < MINUTES; m0 += 60) {
    const m1 = Math.min(MINUTES, m0 + 60) - 1;
    // Minute m (0 = oldest), exporter e, slot c: conversation k = (c * 10 + m) % POOL of that exporter (rotating), and
    // every field derived from (e, k) with cheap hashes, so a conversation keeps its hosts, protocol and port.
    const { rowCount } = await db.query(
      `INSERT INTO flows.rollup_1m (at, exporter, node_id, folder_path, src, dst, proto, src_port, dst_port, src_as, dst_as, bytes, packets, flows)
       SELECT to_timestamp(($1::bigint + m * 60000) / 1000.0),
              x.address, x.node_id, x.folder_path,
              ('10.' || (x.e % 250) || '.' || ((k * 7) % 100 / 50) || '.' || (1 + (k * 7) % 50))::inet,
              ('198.' || (18 + h % 2) || '.' || (h / 2 % 16) || '.' || (1 + h / 32 % 125))::inet,
              CASE WHEN k % 10 < 6 THEN 6 WHEN k % 10 < 9 THEN 17 ELSE 1 END,
              1024 + (m * 37 + c) % 60000,
              CASE WHEN k % 10 = 9 THEN 2048 ELSE (ARRAY[443, 80, 22, 53, 123, 25, 993, 8080, 3389, 161])[1 + (h / 7) % 10] END,
              CASE WHEN x.e % 4 = 0 THEN 0 ELSE 64512 + x.e END,
              13335 + h % 300,
              pk * (60 + (h * 13 + m) % 1400), pk, 1 + (m + c) % 3
         FROM generate_series($2::int, $3::int) m
        CROSS JOIN public.bench_exporters x
        CROSS JOIN generate_series(0, ${PER_MINUTE - 1}) c
        CROSS JOIN LATERAL (SELECT (c * 10 + m) % ${POOL} AS k) kk
        CROSS JOIN LATERAL (SELECT ((x.e * 7919 + k * 104729) % 4000) AS h,
                                   1 + floor(power(((x.e * 31 + k * 17 + m * 13) % 1000) / 1000.0, 4) * 20000)::bigint AS pk) hh`,
      [startMs, m0, m1],
    );
    rows += rowCount;
    process.stderr.write(`[flows-conversations] ${rows} rows at ${((performance.now() - t0) / 1000).toFixed(0)} s, load ${load()}\n`);
  }
  const fillSecs = (performance.now() - t0) / 1000;
  await db.query("ANALYZE flows.rollup_1m");
  return { rows, fillSecs, endMinuteMs };
}

async function main() {
  print("flows_conversations_machine", `${cpus().length}x ${cpus()[0]?.model ?? "?"}; load ${load()}`);
  const dbUrl = await database();
  const kernel = await bootKernel({
    NMS_DATA_DIR: join(dataDir, "kernel"),
    NMS_DATABASE_URL: dbUrl,
    NMS_BOOTSTRAP_TOKEN: token,
    ...QUIET_KERNEL_ENV,
  });
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const { rows, fillSecs, endMinuteMs } = await fill(db);
    const size = await db.query(
      `SELECT sum(pg_total_relation_size(c.oid))::float8 AS bytes FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'flows.rollup_1m'::regclass`,
    );
    print("flows_conversations_rows", rows);
    print("flows_conversations_exporters", EXPORTERS);
    print("flows_conversations_distinct_pairs", (await db.query("SELECT count(*)::int AS n FROM (SELECT DISTINCT src, dst FROM flows.rollup_1m) p")).rows[0].n);
    print("flows_conversations_fill_secs", fillSecs.toFixed(0));
    print("flows_conversations_fill_rows_per_s", Math.round(rows / fillSecs));
    print("flows_conversations_table_mb", Math.round(size.rows[0].bytes / 1048576));

    const site = (await db.query("SELECT id FROM inventory.node_groups WHERE parent_id IS NULL ORDER BY name LIMIT 1")).rows[0].id;
    const res = await fetch(`${kernel.url}/api/v1/tokens`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "bench-site-viewer", role: "viewer", scope: { folders: [site] } }),
    });
    if (!res.ok) throw new Error(`POST /tokens answered ${res.status}: ${await res.text()}`);
    const scoped = (await res.json()).token;
    // A busy outside host and AS of the data, for the peer and asn filters.
    const top = (await db.query("SELECT host(dst) AS dst, dst_as::int AS asn FROM flows.rollup_1m GROUP BY dst, dst_as ORDER BY sum(bytes) DESC LIMIT 1"))
      .rows[0];

    const to = Math.floor(endMinuteMs / 1000) + 60;
    const day = `from=${to - 86400}&to=${to}`;
    const shapes = [
      ["default_1h", "", token],
      ["day_limit100", day, token],
      ["day_limit10", `${day}&limit=10`, token],
      ["day_limit1000", `${day}&limit=1000`, token],
      ["day_proto_udp", `${day}&proto=17`, token],
      ["day_port_443", `${day}&port=443`, token],
      ["day_peer", `${day}&peer=${top.dst}`, token],
      ["day_asn", `${day}&asn=${top.asn}`, token],
      ["day_dir_src", `${day}&dir=src`, token],
      ["day_scoped_site", day, scoped],
      ["day_scoped_site_port_53", `${day}&port=53`, scoped],
      ["hour_scoped_site", "", scoped],
    ];
    const timings = {};
    for (const [name, qs, tok] of shapes) {
      const times = [];
      let n = 0;
      const t0 = performance.now();
      for (let i = 0; i < REPS; i++) {
        const s = performance.now();
        const r = await fetch(`${kernel.url}/api/v1/flow/conversations${qs ? `?${qs}` : ""}`, { headers: { Authorization: `Bearer ${tok}` } });
        const body = await r.json();
        times.push(performance.now() - s);
        if (r.status !== 200) throw new Error(`${name}: ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
        n = body.length;
        if ((performance.now() - t0) / 1000 > SHAPE_MAX_SECS && times.length >= MIN_REPS) break;
      }
      timings[name] = percentile(times, 50);
      print(`flows_conversations_${name}_p50_ms`, percentile(times, 50).toFixed(1));
      print(`flows_conversations_${name}_p99_ms`, percentile(times, 99).toFixed(1));
      print(`flows_conversations_${name}_rows`, n);
      print(`flows_conversations_${name}_requests`, `${times.length} load=${load()}`);
    }

    // Where the time goes: the repository's statement for the 24 h shape (no filter, limit 100), run in PostgreSQL.
    const plan = await db.query(
      `EXPLAIN (ANALYZE, BUFFERS)
       WITH pairs AS (
         SELECT r.src, r.dst, max(r.src_as) AS src_as, max(r.dst_as) AS dst_as, sum(r.bytes) AS bytes, sum(r.packets) AS packets, sum(r.flows) AS flows
           FROM flows.rollup_1m r WHERE r.at >= to_timestamp($1) AND r.at < to_timestamp($2) GROUP BY r.src, r.dst
       ), g AS (
         SELECT p.*, coalesce(nullif(p.src_as, 0), (SELECT ap.asn FROM flows.asn_prefixes ap WHERE ap.prefix >>= p.src ORDER BY masklen(ap.prefix) DESC LIMIT 1), 0) AS src_asn,
                     coalesce(nullif(p.dst_as, 0), (SELECT ap.asn FROM flows.asn_prefixes ap WHERE ap.prefix >>= p.dst ORDER BY masklen(ap.prefix) DESC LIMIT 1), 0) AS dst_asn
           FROM pairs p
       )
       SELECT host(g.src), host(g.dst), g.src_asn, g.dst_asn, sn.name, dn.name, g.bytes, g.packets, g.flows
         FROM g LEFT JOIN flows.asn_names sn ON sn.asn = g.src_asn LEFT JOIN flows.asn_names dn ON dn.asn = g.dst_asn
        ORDER BY g.bytes DESC, g.packets DESC, g.src, g.dst LIMIT 100`,
      [to - 86400, to],
    );
    for (const line of planLines(plan.rows)) print("# plan day_limit100", line);
    const planHour = await db.query(
      `EXPLAIN (ANALYZE, BUFFERS)
       SELECT r.src, r.dst, max(r.src_as), max(r.dst_as), sum(r.bytes) AS bytes, sum(r.packets), sum(r.flows) FROM flows.rollup_1m r
        WHERE r.at >= to_timestamp($1) AND r.at < to_timestamp($2) GROUP BY r.src, r.dst ORDER BY bytes DESC LIMIT 100`,
      [to - 3600, to],
    );
    for (const line of planLines(planHour.rows)) print("# plan default_1h (pairs part)", line);
    const planScoped = await db.query(
      `EXPLAIN (ANALYZE, BUFFERS)
       SELECT r.src, r.dst, sum(r.bytes) AS bytes FROM flows.rollup_1m r
        WHERE r.at >= to_timestamp($1) AND r.at < to_timestamp($2) AND r.folder_path && $3::uuid[] AND r.dst_port = ANY ('{53}'::int4[])
        GROUP BY r.src, r.dst ORDER BY 3 DESC LIMIT 100`,
      [to - 86400, to, [site]],
    );
    for (const line of planLines(planScoped.rows)) print("# plan day_scoped_site_port_53 (pairs part)", line);
    print("flows_conversations_load_after", load());
  } finally {
    await db.end();
    await kernel.stop().catch((e) => console.error(e.message));
    await cleanup();
  }
}

await main().catch(async (err) => {
  console.error(err);
  await cleanup();
  process.exit(1);
});
process.exit(0);
