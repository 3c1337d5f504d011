// Topology benchmark (needs `npm run build` first; npm run bench:topology does): link discovery of NODES nodes
// (default 2,000) with NEIGHBORS neighbours each (default 10), then the upstream computation of that network.
//
// The SNMP answers are simulated: the discovery service's walker is replaced by one that hands each node the
// var-binds its LLDP and CDP tables would answer (lldpLocPortTable, lldpRemTable, lldpRemManAddrTable, cdpCacheTable,
// ifDescr/ifName, as net-snmp gives them), which the plugin's own parser then reads. So the figures cover parsing,
// resolution, the store and the gone-link bookkeeping; not the UDP exchanges (snmpsim's rate, about 1 ms per request
// here, would dominate and measure snmpsim).
//
// The network: node i is linked to i±1 … i±NEIGHBORS/2 (a ring lattice), so every link is reported from both sides;
// neighbours are named by management address (LLDP), chassis id (LLDP) or device id = sysName (CDP), a third each;
// every tenth node also sees a neighbour that is no node (an unknown neighbour).
//
// A kernel runs in this process (nms-core/testing) on an embedded PostgreSQL of its own (DATABASE_URL when set).
// Prints: topology_discover_first_ms (every node walked once: links inserted), topology_discover_again_ms (the same
// answers again: links seen again, none new), topology_links, topology_unknown, topology_rss_growth_mb (peak resident
// memory above the start during discovery), topology_heap_used_mb (after), topology_upstream_compute_ms (directory,
// live links and pins read, the per-pool search), topology_upstream_bfs_ms (the search alone, in memory),
// topology_path_p50_us / _p99_us (pathOf on every node once the graph is computed).
import { cpus, loadavg } from "node:os";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { print, ROOT } from "./lib/kernel.mjs";

const NODES = Number(process.env.BENCH_TOPOLOGY_NODES ?? 2000);
const NEIGHBORS = Number(process.env.BENCH_TOPOLOGY_NEIGHBORS ?? 10);
const DIST = join(ROOT, "dist");

if (!existsSync(join(DIST, "plugins/topology/index.js"))) {
  console.error("dist/plugins/topology is missing: run `npm run build` first (npm run bench:topology does).");
  process.exit(1);
}

const imp = (p) => import(pathToFileURL(join(DIST, p)).href);
const { startTestKernel } = await imp("core/testing/index.js");
const { inventoryPlugin } = await imp("plugins/inventory/index.js");
const { topologyPlugin } = await imp("plugins/topology/index.js");
const { Upstream } = await imp("plugins/topology/contract.js");
const { DiscoveryService } = await imp("plugins/topology/services/DiscoveryService.js");
const { parseWalk, OID } = await imp("plugins/topology/lib/mibs.js");
const { computeUpstream, pathOf } = await imp("plugins/topology/lib/upstream.js");

const address = (i) => `10.${70 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
const mac = (i) => Buffer.from([0x02, 0, 0, (i >> 16) & 255, (i >> 8) & 255, i & 255]);
const name = (i) => `topo-${String(i).padStart(5, "0")}`;

/** The var-binds node i's agent would answer. */
function rawFor(i) {
  const raw = new Map();
  raw.set(OID.lldpLocChassisIdSubtype, 4);
  raw.set(OID.lldpLocChassisId, mac(i));
  raw.set(OID.lldpLocSysName, Buffer.from(name(i)));
  const half = NEIGHBORS / 2;
  const peers = [];
  for (let d = 1; d <= half; d++) peers.push((i + d) % NODES, (i - d + NODES) % NODES);
  const ports = peers.length + 1;
  for (let p = 1; p <= ports; p++) {
    raw.set(`${OID.ifDescr}.${p}`, Buffer.from(`GigabitEthernet0/${p}`));
    raw.set(`${OID.ifName}.${p}`, Buffer.from(`Gi0/${p}`));
    raw.set(`${OID.lldpLocPortEntry}.2.${p}`, 5);
    raw.set(`${OID.lldpLocPortEntry}.3.${p}`, Buffer.from(`Gi0/${p}`));
  }
  // The port node j uses towards i (and i towards j): the position of the other in its peer list, + 1.
  const portTowards = (from, to) => {
    for (let d = 1; d <= half; d++) {
      if ((from + d) % NODES === to) return 2 * d - 1;
      if ((from - d + NODES) % NODES === to) return 2 * d;
    }
    return ports;
  };
  peers.forEach((j, k) => {
    const local = k + 1;
    const how = (Math.min(i, j) + Math.max(i, j)) % 3; // both ends report a link the same way
    if (how === 2) {
      const row = `${local}.1`;
      raw.set(`${OID.cdpCacheEntry}.6.${row}`, Buffer.from(name(j)));
      raw.set(`${OID.cdpCacheEntry}.7.${row}`, Buffer.from(`GigabitEthernet0/${portTowards(j, i)}`));
      return;
    }
    const row = `0.${local}.1`;
    raw.set(`${OID.lldpRemEntry}.4.${row}`, 4);
    raw.set(`${OID.lldpRemEntry}.5.${row}`, mac(j));
    raw.set(`${OID.lldpRemEntry}.6.${row}`, 5);
    raw.set(`${OID.lldpRemEntry}.7.${row}`, Buffer.from(`Gi0/${portTowards(j, i)}`));
    raw.set(`${OID.lldpRemEntry}.9.${row}`, Buffer.from(`${name(j)}.lab`));
    if (how === 0) raw.set(`${OID.lldpRemManAddrEntry}.3.${row}.1.4.${address(j)}`, 2);
  });
  if (i % 10 === 0) {
    const row = `0.${ports}.1`;
    raw.set(`${OID.lldpRemEntry}.4.${row}`, 4);
    raw.set(`${OID.lldpRemEntry}.5.${row}`, Buffer.from([0xaa, 0, 0, (i >> 16) & 255, (i >> 8) & 255, i & 255]));
    raw.set(`${OID.lldpRemEntry}.9.${row}`, Buffer.from(`phone-${i}`));
  }
  return raw;
}

let k = null;
print("topology_machine", `${cpus().length}cpu,load=${loadavg()[0].toFixed(2)},node=${process.version}`);
print("topology_network", `${NODES}x${NEIGHBORS},simulated_snmp_answers`);
try {
  k = await startTestKernel({
    builtinPlugins: false,
    plugins: [inventoryPlugin, topologyPlugin],
    overrides: { logLevel: "error", pluginConfig: { topology: { schedule: false, seeds: { default: address(0) } } } },
  });
  const store = k.context("topology").store;
  const cred = await k.request("POST", "/credentials", { body: { name: "bench v2c", kind: "snmp_v2c", community: "bench" } });
  await store.query(
    `INSERT INTO inventory.nodes (name, address, credential_id)
     SELECT 'topo-' || lpad(n::text, 5, '0'), ('10.' || (70 + (n >> 16)) || '.' || ((n >> 8) & 255) || '.' || (n & 255))::inet, $2
       FROM generate_series(0, $1 - 1) n`,
    [NODES, cred.body.id],
  );
  const discovery = k.context("topology").get(DiscoveryService);
  const byAddress = new Map();
  for (let i = 0; i < NODES; i++) byAddress.set(address(i), i);
  discovery.walker = async (node) => parseWalk(rawFor(byAddress.get(node.address)));

  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  let t = performance.now();
  const first = await discovery.discover(null, "All");
  print("topology_discover_first_ms", Math.round(performance.now() - t));
  t = performance.now();
  const again = await discovery.discover(null, "All");
  print("topology_discover_again_ms", Math.round(performance.now() - t));
  clearInterval(sampler);
  if (first.walked !== NODES || first.failed !== 0 || again.up !== 0 || again.gone !== 0)
    throw new Error(`unexpected runs: ${JSON.stringify({ first, again })}`);
  const links = (
    await store.query("SELECT count(*)::int AS n, count(*) FILTER (WHERE a_missed IS NOT NULL AND b_missed IS NOT NULL)::int AS both FROM topology.links")
  ).rows[0];
  const unknown = (await store.query("SELECT count(*)::int AS n FROM topology.unknown_neighbors")).rows[0].n;
  print("topology_links", links.n);
  print("topology_links_reported_by_both_ends", links.both);
  print("topology_unknown", unknown);
  print("topology_rss_growth_mb", ((peak - rss0) / 1048576).toFixed(1));
  print("topology_heap_used_mb", (process.memoryUsage().heapUsed / 1048576).toFixed(1));

  const upstream = k.context("topology").get(Upstream);
  const ids = (await store.query("SELECT id FROM inventory.node_directory")).rows.map((r) => r.id);
  t = performance.now();
  await upstream.pathOf(ids[0]);
  print("topology_upstream_compute_ms", Math.round(performance.now() - t));
  const edges = (await store.query("SELECT a_node AS a, b_node AS b FROM topology.links WHERE state = 'up'")).rows.map((r) => [r.a, r.b]);
  const nodes = ids.map((id) => ({ id, pool: "default" }));
  t = performance.now();
  const graph = computeUpstream(nodes, edges, { default: ids[0] }, new Map());
  print("topology_upstream_bfs_ms", (performance.now() - t).toFixed(1));
  const times = [];
  let longest = 0;
  for (const id of ids) {
    const s = performance.now();
    const p = await upstream.pathOf(id);
    times.push((performance.now() - s) * 1000);
    longest = Math.max(longest, pathOf(graph, id).length, p.length);
  }
  times.sort((a, b) => a - b);
  print("topology_path_p50_us", times[Math.floor(times.length / 2)].toFixed(1));
  print("topology_path_p99_us", times[Math.floor(times.length * 0.99)].toFixed(1));
  print("topology_longest_path", longest);
  print(
    "topology_load",
    loadavg()
      .map((l) => l.toFixed(2))
      .join("/"),
  );
} finally {
  await k?.stop();
}
