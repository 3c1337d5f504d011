/* global fetch */
// Discovery-import benchmark (`npm run bench:inventory-import`; needs `npm run build` first).
//
// Starts `node dist/core/main.js` as a real process (embedded PostgreSQL, built-in plugins, a free
// loopback port, a fresh data dir), creates a tree of 500 folders through the API (20 sites with a
// /16 each, 24 sub-folders per site with a /24 each, two sub-folders per site sharing one more /24),
// then times POST /api/v1/discovery/import of 4096 nodes with file_by_prefix=true: 3 runs, each on
// fresh addresses (the nodes of earlier runs stay), wall-clock time of the HTTP request as the
// client sees it. Prints
//   inventory_import_4096_ms     median of the 3 runs
//   inventory_import_samples_ms  every run
//   inventory_import_filed       the filed counts of a run (the same mix each run)
// and stops the kernel.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { bootKernel, killKernels, MAIN } from "./lib/kernel.mjs";

const RUNS = 3;
const NODES = 4096;
const SITES = 20;
const SUBS = 24;

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first (npm run bench:inventory-import does).`);
  process.exit(1);
}

const token = randomBytes(24).toString("hex");
const dataDir = mkdtempSync(join(tmpdir(), "nms-bench-import-"));
const cleanup = () => {
  killKernels();
  rmSync(dataDir, { recursive: true, force: true });
};
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const print = (key, value) => console.log(`${key}=${value}`);

/** Starts the kernel on this bench's data dir; resolves with {url, stop} at the ready line. */
function boot() {
  return bootKernel({ NMS_DATA_DIR: dataDir, NMS_BOOTSTRAP_TOKEN: token });
}

async function api(url, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** Runs fn over items with at most `limit` in flight. */
async function pool(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/**
 * 500 folders: site s holds 10.s.0.0/16; its sub-folder j holds 10.s.j.0/24; sub-folders 22 and 23
 * also both hold 10.s.100.0/24. So 10.s.j.x is "chosen" (the /24 beats the /16), 10.s.50.x
 * "matched" (only the site), 10.s.100.x "ambiguous" (two /24s tie) and 10.200.x.x "unmatched".
 */
async function createTree(url) {
  const sites = await pool(
    Array.from({ length: SITES }, (_, s) => s),
    8,
    async (s) => (await api(url, "POST", "/api/v1/node-groups", { name: `site-${s}`, group_type: "site", ip_ranges: [`10.${s}.0.0/16`] })).id,
  );
  const subs = [];
  for (let s = 0; s < SITES; s++) {
    for (let j = 0; j < SUBS; j++) {
      const ranges = [`10.${s}.${j}.0/24`];
      if (j >= SUBS - 2) ranges.push(`10.${s}.100.0/24`);
      subs.push({ name: `site-${s}-floor-${j}`, parent_id: sites[s], ip_ranges: ranges });
    }
  }
  await pool(subs, 8, (body) => api(url, "POST", "/api/v1/node-groups", body));
  return sites.length + subs.length;
}

/** 4096 rows for run r (addresses no other run uses): 6/10 chosen, 2/10 matched, 1/10 ambiguous, 1/10 unmatched. */
function rows(r) {
  const counters = [0, 0, 0, 0];
  const out = [];
  for (let i = 0; i < NODES; i++) {
    const kind = i % 10 < 6 ? 0 : i % 10 < 8 ? 1 : i % 10 < 9 ? 2 : 3;
    const c = counters[kind]++;
    let address;
    if (kind === 0) address = `10.${c % SITES}.${Math.floor(c / SITES) % SUBS}.${1 + Math.floor(c / (SITES * SUBS)) + r * 20}`;
    else if (kind === 1) address = `10.${c % SITES}.${50 + r}.${1 + Math.floor(c / SITES)}`;
    else if (kind === 2) address = `10.${c % SITES}.100.${1 + Math.floor(c / SITES) + r * 30}`;
    else address = `10.${200 + r}.${Math.floor(c / 250)}.${1 + (c % 250)}`;
    out.push({ name: `dev-${r}-${i}`, address, vendor: "bench", model: null });
  }
  return out;
}

try {
  console.log(
    `# node ${process.version}, ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}, ${new Date().toISOString()}`,
  );
  const k = await boot();
  const t0 = performance.now();
  const folders = await createTree(k.url);
  print("inventory_folders", folders);
  print("inventory_folders_create_ms", Math.round(performance.now() - t0));

  const samples = [];
  let filed = null;
  for (let r = 0; r < RUNS; r++) {
    const body = { file_by_prefix: true, nodes: rows(r) };
    const started = performance.now();
    const result = await api(k.url, "POST", "/api/v1/discovery/import", body);
    samples.push(performance.now() - started);
    if (result.created !== NODES || result.skipped_existing !== 0) throw new Error(`run ${r}: unexpected result ${JSON.stringify(result)}`);
    filed = result.filed;
  }
  print("inventory_import_4096_ms", Math.round(median(samples)));
  print("inventory_import_samples_ms", samples.map((s) => Math.round(s)).join(","));
  print("inventory_import_filed", `matched:${filed.matched},chosen:${filed.chosen},ambiguous:${filed.ambiguous},unmatched:${filed.unmatched}`);
  await k.stop();
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
} finally {
  cleanup();
}
