/**
 * A real remote poller process (`nms poller`) runs the flow listener for its pool and forwards each export datagram to
 * the core, which decodes and aggregates it; the listener is registered (a monitoring gap names it). Needs `npm run build`.
 */
import { join } from "node:path";
import { cleanupFlowPeers, flowTempDir, generateTraffic, runSoftflowd, sumTotals, writePcap } from "../../../test/support/flowPeers.js";
import { startRemotePoller, type RemotePollerProcess } from "../../../test/support/remotePoller.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { flowsPlugin } from "../index.js";
import { FlowCollector } from "../services/FlowCollector.js";

let k: TestKernel;
let poller: RemotePollerProcess | null = null;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, flowsPlugin], overrides: { pluginConfig: { flows: { flushMs: 200 } } } });
  poller = startRemotePoller({
    coreUrl: k.url,
    token: await k.token("admin"),
    id: "edge-flows",
    pool: "edge",
    plugins: ["inventory", "polling", "flows"],
    env: { NMS__pluginConfig__flows__udp: "0", NMS__pluginConfig__flows__bindAddress: "127.0.0.1" },
  });
  // Two nodes at the exporter's address: the first by name in the default pool, the other in the poller's pool.
  for (const [name, pool] of [
    ["a-exporter-default", "default"],
    ["b-exporter-edge", "edge"],
  ]) {
    const res = await k.request("POST", "/nodes", { body: { name, address: "127.0.0.1", pool } });
    expect(res.status).toBe(201);
    nodes[pool] = (res.body as { id: string }).id;
  }
});
const nodes: Record<string, string> = {};

afterAll(async () => {
  await poller?.stop();
  await k?.stop();
  await cleanupFlowPeers();
});

it("registers its flow listener and forwards what exporters send; the core's totals equal the traffic", async () => {
  const detail = () => `poller output:\n${poller?.output().slice(-3000) ?? ""}`;
  const registered = await until(
    "the poller's flow listener",
    async () => ((await k.request("GET", "/pollers")).body as { id: string; listeners: string[] }[]).find((p) => p.id === "edge-flows" && p.listeners.length),
    30000,
    detail,
  );
  expect(registered.listeners).toEqual([expect.stringMatching(/^flows\.udp:\d+$/)]);
  const port = Number(registered.listeners[0].split(":")[1]);
  const traffic = generateTraffic(60, { seed: 3 });
  const pcap = join(flowTempDir(), "poller.pcap");
  writePcap(pcap, traffic.packets);
  await runSoftflowd({ version: 5, pcap, port });
  const expected = sumTotals(traffic.expected);
  const from = Math.floor(traffic.startMs / 1000) - 120;
  await until(
    "the forwarded flows",
    async () => {
      await k.context("flows").get(FlowCollector).flush();
      const rows = (await k.request("GET", `/flow/conversations?from=${from}&limit=1000`)).body as { flows: number; bytes: number }[];
      return rows.reduce((n, r) => n + r.flows, 0) === expected.flows && rows.reduce((n, r) => n + r.bytes, 0) === expected.bytes;
    },
    20000,
    detail,
  );
  // The records are attributed to the node of the poller's pool, not to the first by name.
  const attributed = await k
    .context("flows")
    .store.query<{ node_id: string | null }>("SELECT DISTINCT node_id::text AS node_id FROM flows.rollup_1m WHERE exporter = '127.0.0.1'");
  expect(attributed.rows).toEqual([{ node_id: nodes.edge }]);
});
