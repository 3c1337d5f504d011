/* global fetch */
// IPAM benchmark (needs `npm run build` first): the sync of 100,000 prefixes, then GET /api/v1/subnet-overlaps on them.
//
// Starts PostgreSQL (DATABASE_URL when set, else an embedded server in a temporary folder), makes a fresh database and
// starts `node dist/core/main.js` on it (built-in plugins, no embedded poller, a free loopback port), and a NetBox-like
// HTTPS server of its own on loopback (self-signed certificate, given as the server's ca_cert_pem; pages of 1000) with:
//   - SITES sites (default 500);
//   - PREFIXES prefixes (default 100,000; BENCH_IPAM_PREFIXES to change): each site holds a /18 container of
//     10.0.0.0/8 and /26 children inside it (NetBox-style nesting, so the self-join meets ~100k same-site pairs it
//     must drop); OVERLAP_PCT % of the children (default 1) sit inside the next site's container instead, which makes
//     the cross-site overlaps.
// FOLDERS folders (default 50) get their own ip_ranges straight in PostgreSQL (a fixture), one in five on an IPAM container.
// It adds the server (POST /ipam/servers), runs one sync (POST /ipam/servers/{id}/sync) and waits for its end: prints
// ipam_sync_ms (request to the status showing it ended: pages, storing, the overlap-pair recompute) and
// ipam_sync_rss_growth_mb (the kernel's peak resident memory above where it started), then a second sync of the same
// data (ipam_resync_unchanged_ms: nothing written, no recompute). Then it walks every overlap page
// (ipam_overlap_count, ipam_overlap_full_walk_ms) and times REQUESTS sequential requests (default 50) per scenario,
// wall-clock as the client sees it: first_page (limit 100), deep_page (limit 100, cursor from the middle), big_page
// (limit 1000), ack (PUT /subnet-overlaps/acks); prints ipam_overlap_<scenario>_p50_ms / _p99_ms and the load.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:https";
import { tmpdir } from "node:os";
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

/** Resident memory of the kernel process, bytes (Linux /proc). */
async function kernelRss(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** The IPAM's data: SITES sites, PREFIXES prefixes as described above. */
function ipamData() {
  const sites = Array.from({ length: SITES }, (_, s) => ({ id: s + 1, name: `site-${s}`, slug: `site-${s}` }));
  const v4 = (n) => `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  const base = 10 << 24;
  const prefixes = [];
  for (let n = 0; n < PREFIXES; n++) {
    const s = n % SITES;
    const c = Math.floor(n / SITES);
    const hash = Math.imul(n + 1, 2654435761) >>> 0;
    const t = c > 0 && hash % 10000 < OVERLAP_PCT * 100 ? (s + 1) % SITES : s;
    const prefix = c === 0 ? `${v4(base + (s << 14))}/18` : `${v4(base + (t << 14) + ((c % 256) << 6))}/26`;
    prefixes.push({ id: n + 1, prefix, site: { id: s + 1, name: `site-${s}`, slug: `site-${s}` }, custom_fields: {} });
  }
  return { sites, prefixes };
}

/** A NetBox-like HTTPS server (token auth, limit/offset pages, absolute next links) with a self-signed certificate. */
async function startIpam(data, ipamToken) {
  const dir = mkdtempSync(join(tmpdir(), "nms-bench-ipam-cert-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  const cert = { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  rmSync(dir, { recursive: true, force: true });
  let origin = "";
  const server = createServer(cert, (req, res) => {
    const url = new URL(req.url, origin);
    const items = url.pathname === "/api/dcim/sites/" ? data.sites : url.pathname === "/api/ipam/prefixes/" ? data.prefixes : null;
    res.setHeader("content-type", "application/json");
    if (req.headers.authorization !== `Token ${ipamToken}`) return void res.writeHead(401).end('{"detail":"Invalid token."}');
    if (!items) return void res.writeHead(404).end('{"detail":"Not found."}');
    const limit = Math.min(1000, Number(url.searchParams.get("limit")) || 50);
    const offset = Number(url.searchParams.get("offset")) || 0;
    const next = offset + limit < items.length ? `${origin}${url.pathname}?limit=${limit}&offset=${offset + limit}` : null;
    res.end(JSON.stringify({ count: items.length, next, previous: null, results: items.slice(offset, offset + limit) }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `https://127.0.0.1:${server.address().port}`;
  return { url: origin, ca: cert.cert, close: () => new Promise((resolve) => server.close(resolve)) };
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
  const ipamToken = randomBytes(16).toString("hex");
  const ipam = await startIpam(ipamData(), ipamToken);
  // Folders with their own ranges: most in 172.16/12 (no overlap), one in five on an IPAM container.
  await db.query(
    `INSERT INTO inventory.node_groups (name, ip_ranges)
     SELECT 'own-' || f, ARRAY[CASE WHEN f % 5 = 0 THEN set_masklen(('10.0.0.0'::inet + ((f * 7)::bigint << 14)), 20)::cidr
                                    ELSE set_masklen(('172.16.0.0'::inet + (f::bigint << 12)), 20)::cidr END]
       FROM generate_series(1, $1) f`,
    [FOLDERS],
  );
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const created = await fetch(`${kernel.url}/api/v1/ipam/servers`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: "bench", base_url: ipam.url, token: ipamToken, ca_cert_pem: ipam.ca, enabled: false }),
  });
  const { id } = await created.json();
  const rss0 = await kernelRss(kernel.child.pid);
  const t0 = performance.now();
  await fetch(`${kernel.url}/api/v1/ipam/servers/${id}/sync`, { method: "POST", headers });
  let st;
  let peak = rss0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    peak = Math.max(peak, await kernelRss(kernel.child.pid));
    st = (await (await fetch(`${kernel.url}/api/v1/ipam/servers/${id}`, { headers })).json()).status;
    if (st.last_sync_at) break;
    if (performance.now() - t0 > 900_000) throw new Error("the sync did not end within 15 minutes");
  }
  if (st.last_error_class) throw new Error(`sync failed: ${st.last_error_class}`);
  print("ipam_sync_prefixes", st.prefix_count);
  print("ipam_sync_ms", (performance.now() - t0).toFixed(0));
  print("ipam_sync_rss_growth_mb", ((peak - rss0) / 1048576).toFixed(0));
  // A second sync of the same data: nothing changed, so no prefix is written and the pairs are not recomputed.
  const before = st.last_sync_at;
  const t1 = performance.now();
  await fetch(`${kernel.url}/api/v1/ipam/servers/${id}/sync`, { method: "POST", headers });
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    st = (await (await fetch(`${kernel.url}/api/v1/ipam/servers/${id}`, { headers })).json()).status;
    if (st.last_sync_at !== before) break;
    if (performance.now() - t1 > 900_000) throw new Error("the second sync did not end within 15 minutes");
  }
  if (st.last_error_class) throw new Error(`second sync failed: ${st.last_error_class}`);
  print("ipam_resync_unchanged_ms", (performance.now() - t1).toFixed(0));
  await ipam.close();
  await db.query("ANALYZE ipam.prefixes");
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
