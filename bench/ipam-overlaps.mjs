/* global fetch */
// Subnet-overlap benchmark (needs `npm run build` first): GET /api/v1/subnet-overlaps at 100,000 IPAM prefixes.
//
// Starts PostgreSQL (DATABASE_URL when set, else an embedded server in a temporary folder), makes a fresh database and
// starts `node dist/core/main.js` on it (built-in plugins, no embedded poller, a free loopback port). Then, directly in
// PostgreSQL as the tests' fixtures do (the sync is what the plugin's tests cover; here only the overlap query is timed):
//   - one IPAM server (disabled: it never syncs) with SITES sites (default 500);
//   - PREFIXES prefixes (default 100,000; BENCH_IPAM_PREFIXES to change): each site holds a /18 container of
//     10.0.0.0/8 and /26 children inside it (NetBox-style nesting, so the join meets ~100k same-site pairs it must
//     drop); OVERLAP_PCT % of the children (default 1) are instead placed inside another site's container, which makes
//     the cross-site overlaps;
//   - FOLDERS folders (default 50) with their own ip_ranges, a few of them overlapping IPAM containers; then ANALYZE.
// It times REQUESTS sequential requests (default 50) per scenario, wall-clock as the client sees it:
//   first_page (limit 100), deep_page (limit 100, cursor from the middle), big_page (limit 1000), and PUT ack
// and prints ipam_overlap_prefixes, ipam_overlap_count, ipam_overlap_<scenario>_p50_ms / _p99_ms, ipam_overlap_load.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, bootKernel, load, MAIN, print } from "./lib/kernel.mjs";

const PREFIXES = Number(process.env.BENCH_IPAM_PREFIXES ?? 100_000);
const SITES = Number(process.env.BENCH_IPAM_SITES ?? 500);
const FOLDERS = Number(process.env.BENCH_IPAM_FOLDERS ?? 50);
const OVERLAP_PCT = Number(process.env.BENCH_IPAM_OVERLAP_PCT ?? 1);
const REQUESTS = Number(process.env.BENCH_IPAM_REQUESTS ?? 50);

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first.`);
  process.exit(1);
}

const token = randomBytes(24).toString("hex");
const { dataDir, database, cleanup } = benchStore("ipam");

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function fill(db) {
  const { rows } = await db.query(
    `INSERT INTO ipam.servers (name, base_url, enabled, token) VALUES ('bench', 'https://ipam.bench.invalid', false, 'sealed:v1:none') RETURNING id`,
  );
  const server = rows[0].id;
  await db.query(`INSERT INTO ipam.sites (server_id, site_id, name) SELECT $1, s::text, 'site-' || s FROM generate_series(0, $2 - 1) s`, [server, SITES]);
  const perSite = Math.ceil(PREFIXES / SITES);
  // Prefix n: site n % SITES; child c = n / SITES (0 is the /18 container). A child is /26 number c (of 256) inside the
  // /18 of its site, or (OVERLAP_PCT % of them, by a hash of n) inside the /18 of the next site.
  await db.query(
    `INSERT INTO ipam.prefixes (server_id, ipam_id, prefix, site_id)
     SELECT $1, n::text,
            CASE WHEN c = 0 THEN set_masklen(('10.0.0.0'::inet + (s::bigint << 14)), 18)::cidr
                 ELSE set_masklen(('10.0.0.0'::inet + ((CASE WHEN abs(hashint4(n)) % 10000 < $4 * 100 THEN (s + 1) % $3 ELSE s END)::bigint << 14)
                                   + ((c % 256)::bigint << 6)), 26)::cidr END,
            s::text
       FROM (SELECT n, n % $3 AS s, n / $3 AS c FROM generate_series(0, $2 - 1) n) x`,
    [server, PREFIXES, SITES, OVERLAP_PCT],
  );
  // Folders with their own ranges: most in 172.16/12 (no overlap), one in five on an IPAM container.
  await db.query(
    `INSERT INTO inventory.node_groups (name, ip_ranges)
     SELECT 'own-' || f, ARRAY[CASE WHEN f % 5 = 0 THEN set_masklen(('10.0.0.0'::inet + ((f * 7)::bigint << 14)), 20)::cidr
                                    ELSE set_masklen(('172.16.0.0'::inet + (f::bigint << 12)), 20)::cidr END]
       FROM generate_series(1, $1) f`,
    [FOLDERS],
  );
  await db.query("ANALYZE ipam.prefixes");
  await db.query("ANALYZE inventory.node_groups");
  return perSite;
}

async function timed(url, init = {}) {
  const t0 = performance.now();
  const res = await fetch(url, { ...init, headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...(init.headers ?? {}) } });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return { ms: performance.now() - t0, body, next: res.headers.get("x-next-cursor") };
}

async function scenario(name, fn) {
  const times = [];
  for (let i = 0; i < REQUESTS; i++) times.push(await fn(i));
  times.sort((a, b) => a - b);
  print(`ipam_overlap_${name}_p50_ms`, pct(times, 50).toFixed(1));
  print(`ipam_overlap_${name}_p99_ms`, pct(times, 99).toFixed(1));
}

try {
  const url = await database();
  const db = new pg.Client({ connectionString: url });
  const kernel = await bootKernel({
    NMS_DATA_DIR: join(dataDir, "kernel"),
    NMS_DATABASE_URL: url,
    NMS_BOOTSTRAP_TOKEN: token,
    NMS_LOG_LEVEL: "warn",
    NMS__pluginConfig__polling__embeddedPoller: "false",
  });
  await db.connect();
  const t0 = performance.now();
  await fill(db);
  print("ipam_overlap_fill_ms", (performance.now() - t0).toFixed(0));
  const { rows } = await db.query("SELECT count(*)::int AS n FROM ipam.prefixes");
  print("ipam_overlap_prefixes", rows[0].n);
  const api = `${kernel.url}/api/v1/subnet-overlaps`;

  // Count every overlap by walking the pages (and keep a cursor from the middle).
  let count = 0;
  let cursor = null;
  let middle = null;
  const keys = [];
  const walk0 = performance.now();
  for (;;) {
    const page = await timed(`${api}?limit=1000${cursor ? `&cursor=${cursor}` : ""}`);
    count += page.body.length;
    for (const o of page.body) if (keys.length < 1000) keys.push(o.key);
    if (!middle && count >= 500) middle = page.next;
    if (!page.next) break;
    cursor = page.next;
  }
  print("ipam_overlap_count", count);
  print("ipam_overlap_full_walk_ms", (performance.now() - walk0).toFixed(0));

  await scenario("first_page", async () => (await timed(`${api}?limit=100`)).ms);
  if (middle) await scenario("deep_page", async () => (await timed(`${api}?limit=100&cursor=${middle}`)).ms);
  await scenario("big_page", async () => (await timed(`${api}?limit=1000`)).ms);
  await scenario(
    "ack",
    async (i) => (await timed(`${api}/acks`, { method: "PUT", body: JSON.stringify({ key: keys[i % keys.length], note: `bench ${i}` }) })).ms,
  );
  print("ipam_overlap_load", load());
  await db.end();
  await kernel.stop();
} finally {
  await cleanup();
}
