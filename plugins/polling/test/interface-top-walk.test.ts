/**
 * interface-top answers through a threshold walk (latest) and a walk down the rollups (windowed aggs); both must give
 * exactly what ranking every interface gives. 1,200 interfaces with rates that rank differently in and out (so the
 * first walk depth is too shallow and the walk goes deeper), ties across the answer's edge, folder-scoped callers;
 * each answer compared with the plain grouping of the whole table (the SQL the routes used before the walks).
 */
import { rawQuery } from "../../../test/support/db.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../index.js";

const DAY_MS = 86_400_000;
const NODES = 60;
const IFS = 20;
let k: TestKernel;
let viewer: string;
let scoped: string;
let siteA: string;
const sql = (text: string, params: unknown[] = []) => rawQuery(k.databaseUrl!, text, params);

/** The whole-table ranking of the latest rates (the route's SQL before the walk). */
const FULL_LATEST = `
  WITH vis AS (SELECT d.id, d.name FROM inventory.node_directory d WHERE $1::uuid[] IS NULL OR d.folder_path && $1::uuid[]),
  val AS (SELECT l.node_id, l.ifindex, sum(l.value) AS value FROM polling.latest l JOIN vis ON vis.id = l.node_id
           WHERE l.metric = ANY ($2::text[]) AND l.ifindex >= 0 AND l.row_key = -1 AND l.at >= now() - interval '1 hour' GROUP BY 1, 2)
  SELECT vis.name AS node_name, val.ifindex, val.value FROM val JOIN vis ON vis.id = val.node_id
   ORDER BY val.value DESC, vis.name, val.node_id, val.ifindex LIMIT $3`;

/** The whole-window ranking of the raw samples (the route's SQL before the rollups), for avg or max of one or two metrics. */
function fullWindow(fn: "avg" | "max", pair: boolean, secs: number): string {
  const series = `x.node_id = s.node_id AND x.metric = ANY ($2::text[]) AND x.ifindex = s.ifindex AND x.row_key = -1 AND x.at >= now() - interval '${secs} seconds'`;
  const agg =
    fn === "avg"
      ? `SELECT sum(m.v) AS value FROM (SELECT avg(x.value) AS v FROM polling.samples x WHERE ${series} GROUP BY x.metric) m`
      : pair
        ? `SELECT max(m.v) AS value FROM (SELECT sum(x.value) AS v FROM polling.samples x WHERE ${series} GROUP BY x.at) m`
        : `SELECT max(x.value) AS value FROM polling.samples x WHERE ${series}`;
  return `
    WITH vis AS (SELECT d.id, d.name FROM inventory.node_directory d WHERE $1::uuid[] IS NULL OR d.folder_path && $1::uuid[])
    SELECT vis.name AS node_name, s.ifindex, a.value
      FROM (SELECT l.node_id, l.ifindex FROM polling.latest l JOIN vis ON vis.id = l.node_id
             WHERE l.metric = ANY ($2::text[]) AND l.ifindex >= 0 AND l.row_key = -1 AND l.at >= now() - interval '${secs} seconds'
             GROUP BY 1, 2) s
      JOIN vis ON vis.id = s.node_id
      CROSS JOIN LATERAL (${agg}) a
     WHERE a.value IS NOT NULL
     ORDER BY a.value DESC, vis.name, s.node_id, s.ifindex LIMIT $3`;
}

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin], overrides: { pluginConfig: { polling: { embeddedPoller: false } } } });
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  for (let d = today - DAY_MS; d <= today + DAY_MS; d += DAY_MS) {
    const name = `samples_${new Date(d).toISOString().slice(0, 10).replace(/-/g, "")}`;
    await sql(
      `CREATE TABLE IF NOT EXISTS polling.${name} PARTITION OF polling.samples FOR VALUES FROM ('${new Date(d).toISOString()}') TO ('${new Date(d + DAY_MS).toISOString()}')`,
    );
  }
  siteA = (await sql(`INSERT INTO inventory.node_groups (name) VALUES ('site-a') RETURNING id`))[0].id as string;
  const siteB = (await sql(`INSERT INTO inventory.node_groups (name) VALUES ('site-b') RETURNING id`))[0].id as string;
  await sql(
    `INSERT INTO inventory.nodes (name, address, group_id)
     SELECT 'n-' || lpad(n::text, 3, '0'), ('10.9.' || n || '.1')::inet, CASE WHEN n % 3 = 0 THEN $1::uuid ELSE $2::uuid END
       FROM generate_series(1, ${NODES}) n`,
    [siteA, siteB],
  );
  // In and out rank differently (independent hashes); every 97th interface shares one sum, a tie near the top.
  await sql(
    `INSERT INTO polling.latest (node_id, metric, ifindex, row_key, value, at, if_name)
     SELECT n.id, m, i, -1,
            CASE WHEN (i * 31 + n.k) % 97 = 0 THEN 5e8 ELSE (abs(hashtext(n.id::text || i || m)) % 1000000)::float8 * 1000 END,
            now() - interval '10 seconds', 'p' || i
       FROM (SELECT id, row_number() OVER (ORDER BY name) AS k FROM inventory.nodes) n
      CROSS JOIN generate_series(1, ${IFS}) i CROSS JOIN unnest(ARRAY['if_in_bps', 'if_out_bps', 'if_in_errors_ps']) m`,
  );
  // Twenty minutes of per-minute polls (in and out share `at`), so the 15-minute and hour windows differ.
  await sql(
    `INSERT INTO polling.samples (node_id, metric, ifindex, row_key, at, value)
     SELECT l.node_id, l.metric, l.ifindex, -1, date_trunc('second', now()) - m * interval '1 minute',
            l.value * (0.2 + ((abs(hashtext(l.node_id::text || l.ifindex || m)) % 17) / 10.0))
       FROM polling.latest l CROSS JOIN generate_series(0, 19) m WHERE l.metric IN ('if_in_bps', 'if_out_bps')`,
  );
  await sql("ANALYZE");
  viewer = await k.token("viewer");
  scoped = await k.token("viewer", { folders: [siteA] });
}, 60_000);

afterAll(async () => {
  await k?.stop();
});

const top = async (query: Record<string, string | number>, token: string) => {
  const res = await k.http
    .get("/api/v1/metrics/interface-top")
    .query(query)
    .set({ Authorization: `Bearer ${token}` });
  expect(res.status).toBe(200);
  return (res.body.entries as { node_name: string; ifindex: number; value: number }[]).map((e) => [e.node_name, e.ifindex, e.value]);
};
const rows = (r: Record<string, unknown>[]) => r.map((x) => [x.node_name, x.ifindex, x.value]);

describe("interface-top walks answer what ranking every interface answers", () => {
  const metrics: [string, string[]][] = [
    ["throughput", ["if_in_bps", "if_out_bps"]],
    ["in_bps", ["if_in_bps"]],
    ["errors", ["if_in_errors_ps", "if_out_errors_ps"]],
  ];

  it.each(metrics)("latest %s, every limit, scope All and a folder scope", async (metric, stored) => {
    for (const limit of [1, 10, 37, 100]) {
      expect(await top({ metric, limit }, viewer)).toEqual(rows(await sql(FULL_LATEST, [null, stored, limit])));
      expect(await top({ metric, limit }, scoped)).toEqual(rows(await sql(FULL_LATEST, [[siteA], stored, limit])));
    }
  });

  it.each([
    ["avg_15m", "avg", 900],
    ["max_15m", "max", 900],
    ["avg_1h", "avg", 3600],
    ["max_1h", "max", 3600],
  ] as const)("%s of throughput and in_bps, every limit, scope All and a folder scope", async (agg, fn, secs) => {
    for (const [metric, stored] of metrics.slice(0, 2)) {
      for (const limit of [1, 10, 100]) {
        const full = fullWindow(fn, stored.length > 1, secs);
        expect(await top({ metric, agg, limit }, viewer)).toEqual(rows(await sql(full, [null, stored, limit])));
        expect(await top({ metric, agg, limit }, scoped)).toEqual(rows(await sql(full, [[siteA], stored, limit])));
      }
    }
  });
});

describe("latest_pairs (the rank the two-metric walk goes down) follows every write to latest", () => {
  /** latest_pairs as recomputed from latest: it must always hold exactly this. */
  const RECOMPUTED = `
    SELECT m.pair, l.node_id, l.ifindex, max(l.value) FILTER (WHERE m.side = 1) AS a, max(l.value) FILTER (WHERE m.side = 2) AS b
      FROM polling.latest l JOIN polling.latest_pair_metrics m ON m.metric = l.metric
     WHERE l.ifindex >= 0 AND l.row_key = -1 GROUP BY 1, 2, 3`;
  const consistent = async () => {
    const diff = await sql(
      `SELECT 'missing' AS what, * FROM (${RECOMPUTED} EXCEPT SELECT pair, node_id, ifindex, a, b FROM polling.latest_pairs) x
       UNION ALL SELECT 'extra', * FROM (SELECT pair, node_id, ifindex, a, b FROM polling.latest_pairs EXCEPT ${RECOMPUTED}) y`,
    );
    expect(diff).toEqual([]);
  };
  const compare = async () => {
    for (const [metric, stored] of [
      ["throughput", ["if_in_bps", "if_out_bps"]],
      ["errors", ["if_in_errors_ps", "if_out_errors_ps"]],
    ] as const) {
      for (const limit of [1, 10, 37, 100]) {
        expect(await top({ metric, limit }, viewer)).toEqual(rows(await sql(FULL_LATEST, [null, stored, limit])));
        expect(await top({ metric, limit }, scoped)).toEqual(rows(await sql(FULL_LATEST, [[siteA], stored, limit])));
      }
    }
  };

  it("latest_pair_metrics names the pairs the repository walks (LATEST_PAIRS)", async () => {
    const { LATEST_PAIRS } = await import("../repositories/MetricsRepository.js");
    const table = await sql("SELECT pair, string_agg(metric, '+' ORDER BY side) AS metrics FROM polling.latest_pair_metrics GROUP BY pair ORDER BY pair");
    expect(table.map((r) => [r.metrics, r.pair])).toEqual([...LATEST_PAIRS]);
  });

  it("the poller's upsert, a stale side, negative rates, deleted sides and nodes: the answers stay those of the whole table", async () => {
    await consistent();
    // The poller's statement (ON CONFLICT DO UPDATE) moving a few interfaces to the top, one of them only its out side.
    await sql(
      `INSERT INTO polling.latest AS l (node_id, metric, ifindex, row_key, value, at, if_name)
       SELECT l.node_id, l.metric, l.ifindex, -1, 2e9 + l.ifindex, now(), l.if_name FROM polling.latest l
        WHERE l.ifindex IN (3, 4) AND (l.metric = 'if_out_bps' OR l.ifindex = 3) AND l.metric <> 'if_in_errors_ps'
       ON CONFLICT (node_id, metric, ifindex, row_key) DO UPDATE SET value = EXCLUDED.value, at = EXCLUDED.at WHERE l.at <= EXCLUDED.at`,
    );
    await consistent();
    await compare();
    // The biggest out rates go stale (the answer adds only the fresh in), some in rates turn negative, some
    // interfaces lose one side, one node loses everything; errors gain an out side.
    await sql(`UPDATE polling.latest SET at = now() - interval '2 hours' WHERE metric = 'if_out_bps' AND ifindex = 3`);
    await sql(`UPDATE polling.latest SET value = -value WHERE metric = 'if_in_bps' AND ifindex = 5`);
    await sql(`DELETE FROM polling.latest WHERE metric = 'if_in_bps' AND ifindex = 6`);
    await sql(`DELETE FROM polling.latest WHERE node_id = (SELECT id FROM inventory.nodes WHERE name = 'n-003')`);
    await sql(
      `INSERT INTO polling.latest (node_id, metric, ifindex, row_key, value, at, if_name)
       SELECT node_id, 'if_out_errors_ps', ifindex, -1, value / 2 + 7, at, if_name FROM polling.latest WHERE metric = 'if_in_errors_ps' AND ifindex % 2 = 0`,
    );
    await consistent();
    await compare();
    // Both sides of an interface gone: its pair goes.
    await sql(`DELETE FROM polling.latest WHERE metric IN ('if_in_bps', 'if_out_bps') AND ifindex = 7`);
    expect(await sql(`SELECT 1 FROM polling.latest_pairs WHERE pair = 'throughput' AND ifindex = 7`)).toEqual([]);
    await consistent();
    await compare();
  });

  it("TRUNCATE empties it too", async () => {
    await sql("TRUNCATE polling.latest");
    expect(await sql("SELECT count(*)::int AS n FROM polling.latest_pairs")).toEqual([{ n: 0 }]);
    expect(await top({ metric: "throughput", limit: 10 }, viewer)).toEqual([]);
  });
});
