// What a folder change costs now that inventory.folder_index keeps every folder's path (migration 0920; issue 29):
// `npm run bench:folder-index` (needs `npm run build`; `node bench/folder-index.mjs` when built).
//
// Starts PostgreSQL (DATABASE_URL, else an embedded server), boots the kernel once to migrate a fresh database, then for
// each tree size of BENCH_FOLDER_COUNTS (default 60,1000,5000: sites of 10 racks of 10 rows, as many as fit) seeds the
// folders with SQL and times, BENCH_ITERATIONS (default 20) times each, median ms: a rename of a site (the triggers
// rebuild every folder's row), a move of a rack to another site, one new folder, and a folder's sort order (a column
// the walk does not read: no rebuild).
import { performance } from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { benchStore, bootKernel, load, print, QUIET_KERNEL_ENV } from "./lib/kernel.mjs";

const COUNTS = (process.env.BENCH_FOLDER_COUNTS ?? "60,1000,5000").split(",").map(Number);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20);

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function timed(db, sql, params) {
  const times = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const s = performance.now();
    await db.query(sql, typeof params === "function" ? params(i) : params);
    times.push(performance.now() - s);
  }
  return median(times).toFixed(2);
}

async function main() {
  print("folder_index_load", load());
  const { dataDir, database, cleanup } = benchStore("folders");
  let db = null;
  try {
    const url = await database();
    // Migrations only: the kernel makes the schema, then leaves the database to this process.
    const kernel = await bootKernel({
      NMS_DATA_DIR: join(dataDir, "kernel"),
      NMS_DATABASE_URL: url,
      NMS_BOOTSTRAP_TOKEN: randomBytes(24).toString("hex"),
      ...QUIET_KERNEL_ENV,
    });
    await kernel.stop();
    db = new pg.Client({ connectionString: url });
    await db.connect();
    for (const count of COUNTS) {
      await db.query("TRUNCATE inventory.node_groups CASCADE");
      const sites = Math.max(1, Math.floor(count / 111));
      await db.query(`INSERT INTO inventory.node_groups (name, tags) SELECT 'site-' || s, '{a,b}' FROM generate_series(1, ${sites}) s`);
      await db.query(
        `INSERT INTO inventory.node_groups (name, parent_id, tags) SELECT 'rack-' || g.name || '-' || r, g.id, '{c}'
           FROM inventory.node_groups g, generate_series(1, 10) r WHERE g.parent_id IS NULL`,
      );
      await db.query(
        `INSERT INTO inventory.node_groups (name, parent_id) SELECT g.name || '-row-' || r, g.id
           FROM inventory.node_groups g, generate_series(1, 10) r WHERE g.parent_id IS NOT NULL`,
      );
      const have = (await db.query("SELECT count(*)::int AS n FROM inventory.node_groups")).rows[0].n;
      const indexed = (await db.query("SELECT count(*)::int AS n FROM inventory.folder_index")).rows[0].n;
      const [a, b] = (await db.query("SELECT id FROM inventory.node_groups WHERE parent_id IS NULL ORDER BY name LIMIT 2")).rows.map((r) => r.id);
      const rack = (await db.query("SELECT id FROM inventory.node_groups WHERE parent_id = $1 LIMIT 1", [a])).rows[0].id;
      const rename = await timed(db, "UPDATE inventory.node_groups SET name = $2 WHERE id = $1", (i) => [a, `site-renamed-${i}`]);
      const move = await timed(db, "UPDATE inventory.node_groups SET parent_id = $2 WHERE id = $1", (i) => [rack, i % 2 ? a : (b ?? a)]);
      const insert = await timed(db, "INSERT INTO inventory.node_groups (name, parent_id) VALUES ($1, $2)", (i) => [`new-${i}`, rack]);
      const sortOrder = await timed(db, "UPDATE inventory.node_groups SET sort_order = $2 WHERE id = $1", (i) => [rack, i]);
      const walk = await timed(db, "SELECT count(*) FROM inventory.folder_walk", []);
      print(
        `folder_index_${count}`,
        `folders=${have} indexed=${indexed} rename_ms=${rename} move_ms=${move} insert_ms=${insert} sort_order_ms=${sortOrder} walk_alone_ms=${walk}`,
      );
    }
  } finally {
    await db?.end().catch(() => undefined);
    await cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
