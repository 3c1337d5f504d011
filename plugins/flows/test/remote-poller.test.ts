/**
 * A real remote poller process (`nms poller`) runs the flow listener for its pool and forwards each export datagram to
 * the core, which decodes and aggregates it; the listener is registered (a monitoring gap names it). Needs `npm run build`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanupFlowPeers, flowTempDir, generateTraffic, runSoftflowd, sumTotals, writePcap } from "../../../test/support/flowPeers.js";
import { ROOT } from "../../../test/support/spawnKernel.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { flowsPlugin } from "../index.js";
import { FlowCollector } from "../services/FlowCollector.js";

const CLI = join(ROOT, "dist/core/cli/main.js");
const PLUGINS = ["inventory", "polling", "flows"].map((p) => join(ROOT, "dist/plugins", p)).join(",");

let k: TestKernel;
let poller: ChildProcess | null = null;
let output = "";
const work = mkdtempSync(join(tmpdir(), "nms-flows-poller-"));

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, flowsPlugin], overrides: { pluginConfig: { flows: { flushMs: 200 } } } });
  poller = spawn(process.execPath, [CLI, "poller", "--pool", "edge", "--core", k.url, "--id", "edge-flows", "--refresh-secs", "2"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NMS_POLLER_TOKEN: await k.token("admin"),
      NMS_BUILTIN_PLUGINS: "false",
      NMS_PLUGINS: PLUGINS,
      NMS_DATA_DIR: work,
      NMS__pluginConfig__flows__udp: "0",
      NMS__pluginConfig__flows__bindAddress: "127.0.0.1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  poller.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  poller.stderr!.on("data", (c: Buffer) => (output += c.toString()));
});

afterAll(async () => {
  if (poller && poller.exitCode === null) {
    poller.kill("SIGTERM");
    await new Promise((r) => poller!.once("exit", r));
  }
  await k?.stop();
  await cleanupFlowPeers();
  rmSync(work, { recursive: true, force: true });
});

it("registers its flow listener and forwards what exporters send; the core's totals equal the traffic", async () => {
  const detail = () => `poller output:\n${output.slice(-3000)}`;
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
});
