/* global fetch */
// Device metrics scrape (`npm run bench:device-metrics`; needs `npm run build` first): the cost of
// GET /api/v1/metrics/devices (issue 28) at NODES (default 2000) nodes × IFACES (default 24) interfaces.
//
// A fresh database (DATABASE_URL, else an embedded server), the service as a child process (every built-in plugin, no
// embedded poller, no passive listener). Seeded straight in PostgreSQL: the inventory (10 sites × 5 racks), and
// polling.latest as the pollers leave it: per interface the 9 interface metrics (rates, utilisation, errors,
// discards, status), per node 2 processors, 3 storage areas, uptime, reachability, round-trip time and the agent's
// status. Then SCRAPES (default 5) scrapes with the admin token, once with the default series bound
// (pluginConfig.polling.deviceMetricsMaxSeries, 250,000) and once with it raised past the series count: time to the
// last byte (median, max), bytes, series, whether the answer was truncated, the service's RSS before and after.
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, bootKernel, load, print, QUIET_KERNEL_ENV, seedInventory } from "./lib/kernel.mjs";
import { rssMb } from "./lib/flows-peers.mjs";

const NODES = Number(process.env.NODES ?? 2000);
const IFACES = Number(process.env.IFACES ?? 24);
const SCRAPES = Number(process.env.SCRAPES ?? 5);
const TOKEN = "bench-device-metrics-token-0123456789";
const IF_METRICS = [
  "if_in_bps",
  "if_out_bps",
  "if_util_in_pct",
  "if_util_out_pct",
  "if_in_errors_ps",
  "if_out_errors_ps",
  "if_in_discards_ps",
  "if_out_discards_ps",
  "if_oper_up",
];
const NODE_METRICS = ["sys_uptime_secs", "reachable", "rtt_ms", "snmp_agent_status"];

const store = benchStore("device-metrics");
const env = (extra) => ({
  DATABASE_URL: url,
  NMS_DATA_DIR: store.dataDir,
  NMS_BOOTSTRAP_TOKEN: TOKEN,
  ...QUIET_KERNEL_ENV,
  ...extra,
});

const url = await store.database();
try {
  // First boot: the migrations.
  let k = await bootKernel(env({}));
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const seeded = performance.now();
  await seedInventory(db, { sites: 10, racks: 5, nodes: NODES });
  const list = (names) => `ARRAY[${names.map((n) => `'${n}'`).join(",")}]`;
  await db.query(
    `INSERT INTO polling.latest (node_id, metric, ifindex, row_key, value, at, if_name)
     SELECT n.id, m, i, -1, CASE WHEN m = 'if_oper_up' THEN 1 ELSE random() * 1e9 END, now(), 'Gi0/' || i
       FROM inventory.nodes n, generate_series(1, ${IFACES}) i, unnest(${list(IF_METRICS)}) m`,
  );
  await db.query(
    `INSERT INTO polling.latest (node_id, metric, ifindex, row_key, value, at, row_name)
     SELECT n.id, r.metric, -1, r.row_key, random() * 100, now(), r.row_name
       FROM inventory.nodes n,
            (VALUES ('cpu_load_pct', 196608, NULL), ('cpu_load_pct', 196609, NULL), ('storage_used_pct', 1, 'Physical memory'),
                    ('storage_used_pct', 3, 'Virtual memory'), ('storage_used_pct', 31, '/')) AS r(metric, row_key, row_name)`,
  );
  await db.query(
    `INSERT INTO polling.latest (node_id, metric, ifindex, row_key, value, at)
     SELECT n.id, m, -1, -1, CASE WHEN m IN ('reachable') THEN 1 WHEN m = 'snmp_agent_status' THEN 0 ELSE random() * 1000 END, now()
       FROM inventory.nodes n, unnest(${list(NODE_METRICS)}) m`,
  );
  await db.query("ANALYZE");
  const rows = Number((await db.query("SELECT count(*) AS n FROM polling.latest")).rows[0].n);
  print("device_metrics_nodes", NODES);
  print("device_metrics_interfaces_per_node", IFACES);
  print("device_metrics_latest_rows", rows);
  print("device_metrics_seed_secs", ((performance.now() - seeded) / 1000).toFixed(1));
  await db.end();
  await k.stop();

  for (const [label, maxSeries] of [
    ["default_bound", null],
    ["raised_bound", String(rows + 10000)],
  ]) {
    k = await bootKernel(env(maxSeries ? { NMS__pluginConfig__polling__deviceMetricsMaxSeries: maxSeries } : {}));
    const pid = k.child.pid;
    const before = rssMb(pid);
    const times = [];
    let bytes = 0;
    let series = 0;
    let truncated = null;
    for (let i = 0; i < SCRAPES; i++) {
      const t0 = performance.now();
      const res = await fetch(`${k.url}/api/v1/metrics/devices`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const text = await res.text();
      times.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`GET /metrics/devices answered ${res.status}: ${text.slice(0, 200)}`);
      bytes = Buffer.byteLength(text);
      series = text.split("\n").filter((l) => l && !l.startsWith("#")).length;
      truncated = /^nms_device_series_truncated 1$/m.test(text);
    }
    times.sort((a, b) => a - b);
    print(`device_metrics_${label}_scrape_ms_median`, times[Math.floor(times.length / 2)].toFixed(0));
    print(`device_metrics_${label}_scrape_ms_max`, times.at(-1).toFixed(0));
    print(`device_metrics_${label}_bytes`, bytes);
    print(`device_metrics_${label}_series`, series);
    print(`device_metrics_${label}_truncated`, truncated);
    print(`device_metrics_${label}_rss_mb_before`, before);
    print(`device_metrics_${label}_rss_mb_after`, rssMb(pid));
    await k.stop();
  }
  print("device_metrics_load_after", load());
} finally {
  await store.cleanup();
}
