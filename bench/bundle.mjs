/* global fetch */
// Configuration bundle benchmark (needs `npm run build` first): export and import of 50,000 nodes, 5,000 folders and
// 10,000 thresholds.
//
// Starts `node dist/core/main.js` as a real process on a fresh database (DATABASE_URL, else an embedded PostgreSQL),
// seeds the inventory straight in PostgreSQL (100 sites × 49 racks = 4,900 + 100 folders, 50,000 nodes filed in the
// racks, 10,000 node thresholds), then
//   1. times GET /api/v1/config/bundle, the response streamed to a file as the client reads it;
//   2. boots a second kernel on another fresh database and times POST /api/v1/config/bundle/import of that file
//      (merge mode, one transaction), the body streamed from the file.
// The kernel's resident memory is sampled every 20 ms during each request (peak and the level before it), so the
// figures show what the operation itself costs. Prints
//   bundle_rows                      nodes/folders/thresholds carried
//   bundle_bytes                     size of the bundle
//   bundle_export_ms                 wall-clock time of the export, first byte to last as the client sees it
//   bundle_export_rss_mib            kernel RSS before → peak during the export
//   bundle_import_ms                 wall-clock time of the import request
//   bundle_import_rss_mib            kernel RSS before → peak during the import
//   bundle_reexport_equal            the second deployment's export equals the first (but exported_at and notes)
import { createReadStream, createWriteStream, existsSync, readFileSync, statSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, bootKernel, load, MAIN, print, seedInventory } from "./lib/kernel.mjs";

const NODES = 50000;
const SITES = 100;
const RACKS = 49;
const THRESHOLDS = 10000;

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first.`);
  process.exit(1);
}

const token = randomBytes(24).toString("hex");
const store = benchStore("bundle");

/** Samples the process's RSS (MiB) every 20 ms while `fn` runs: {result, before, peak}. */
async function withRss(pid, fn) {
  const rss = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  };
  const before = rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rss())), 20);
  try {
    const result = await fn();
    peak = Math.max(peak, rss());
    return { result, before, peak };
  } finally {
    clearInterval(timer);
  }
}

const mib = (x) => x.toFixed(0);

async function main() {
  const urlA = await store.database();
  const a = await bootKernel({ DATABASE_URL: urlA, NMS_DATA_DIR: join(store.dataDir, "a"), NMS_BOOTSTRAP_TOKEN: token });
  const db = new pg.Client({ connectionString: urlA });
  await db.connect();
  // Folders as the other benches make them; nodes spread over the racks with one array lookup each (the shared
  // seedInventory's per-node subquery is quadratic at this size).
  await seedInventory(db, { sites: SITES, racks: RACKS, nodes: 0 });
  await db.query(
    `WITH racks AS (SELECT array_agg(id ORDER BY name) AS ids FROM inventory.node_groups WHERE parent_id IS NOT NULL)
     INSERT INTO inventory.nodes (name, address, group_id)
     SELECT 'node-' || lpad(n::text, 5, '0'), ('10.' || (n / 256) || '.' || (n % 256) || '.1')::inet, racks.ids[1 + n % ${SITES * RACKS}]
       FROM generate_series(1, ${NODES}) n, racks`,
  );
  await db.query(
    `INSERT INTO alerts.thresholds (metric, scope_level, direction, warning, critical, warning_above, critical_above, scope_ids)
     SELECT 'cpu_util', 'node', 'above', 80, 95, 80, 95, ARRAY[id::text] FROM inventory.nodes ORDER BY id LIMIT ${THRESHOLDS}`,
  );
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM inventory.nodes)::int AS nodes, (SELECT count(*) FROM inventory.node_groups)::int AS folders,
            (SELECT count(*) FROM alerts.thresholds)::int AS thresholds`,
  );
  await db.end();
  print("bundle_rows", `${rows[0].nodes} nodes / ${rows[0].folders} folders / ${rows[0].thresholds} thresholds`);

  const file = join(store.dataDir, "bundle.json");
  const exp = await withRss(a.child.pid, async () => {
    const t0 = performance.now();
    const res = await fetch(`${a.url}/api/v1/config/bundle`, { headers: { Authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`export answered ${res.status}: ${await res.text()}`);
    await pipeline(Readable.fromWeb(res.body), createWriteStream(file));
    return performance.now() - t0;
  });
  print("bundle_bytes", statSync(file).size);
  print("bundle_export_ms", exp.result.toFixed(0));
  print("bundle_export_rss_mib", `${mib(exp.before)} -> ${mib(exp.peak)}`);
  const first = JSON.parse(readFileSync(file, "utf8"));
  await a.stop();

  const urlB = await store.database();
  const b = await bootKernel({ DATABASE_URL: urlB, NMS_DATA_DIR: join(store.dataDir, "b"), NMS_BOOTSTRAP_TOKEN: token });
  const imp = await withRss(b.child.pid, async () => {
    const t0 = performance.now();
    const res = await fetch(`${b.url}/api/v1/config/bundle/import`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: Readable.toWeb(createReadStream(file)),
      duplex: "half",
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`import answered ${res.status}: ${text.slice(0, 500)}`);
    return { ms: performance.now() - t0, outcome: JSON.parse(text) };
  });
  print("bundle_import_ms", imp.result.ms.toFixed(0));
  print("bundle_import_rss_mib", `${mib(imp.before)} -> ${mib(imp.peak)}`);
  const t = imp.result.outcome.tables;
  print("bundle_import_created", `nodes ${t.nodes.created}, node_groups ${t.node_groups.created}, thresholds ${t.thresholds.created}`);

  const res = await fetch(`${b.url}/api/v1/config/bundle`, { headers: { Authorization: `Bearer ${token}` } });
  const second = await res.json();
  const strip = ({ exported_at: _a, notes: _n, ...rest }) => JSON.stringify(rest);
  print("bundle_reexport_equal", strip(first) === strip(second));
  await b.stop();
  print("load", load());
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => store.cleanup());
