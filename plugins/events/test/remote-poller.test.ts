/**
 * A real remote poller process (`nms poller`) runs the events plugin's receivers for its pool and forwards what
 * they receive to the core, which attributes, matches and stores it; the listeners it bound are registered (they are
 * what a monitoring gap's `listeners` names). Nothing is buffered: syslog sent while the core is away is lost.
 * Needs `npm run build` (the poller runs from dist, as operators run it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../../test/support/spawnKernel.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";

const CLI = join(ROOT, "dist/core/cli/main.js");
const PLUGINS = ["inventory", "polling", "alerts", "events"].map((p) => join(ROOT, "dist/plugins", p)).join(",");

let k: TestKernel;
let poller: ChildProcess | null = null;
let output = "";
const work = mkdtempSync(join(tmpdir(), "nms-events-poller-"));

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: { pluginConfig: { events: { flushMs: 50 } } },
  });
  await k.request("POST", "/nodes", { body: { name: "edge-router", address: "127.0.0.1", pool: "edge" } });
  poller = spawn(process.execPath, [CLI, "poller", "--pool", "edge", "--core", k.url, "--id", "edge-1", "--refresh-secs", "2", "--log-level", "debug"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NMS_POLLER_TOKEN: await k.token("admin"),
      NMS_BUILTIN_PLUGINS: "false",
      NMS_PLUGINS: PLUGINS,
      NMS_DATA_DIR: work,
      // The poller's receivers: syslog over UDP on any free port; traps and the stream listeners off.
      NMS__pluginConfig__events__syslog__udp: "0",
      NMS__pluginConfig__events__syslog__tcp: "null",
      NMS__pluginConfig__events__syslog__tls: "null",
      NMS__pluginConfig__events__syslog__bindAddress: "127.0.0.1",
      NMS__pluginConfig__events__traps__udp: "null",
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
  rmSync(work, { recursive: true, force: true });
});

const detail = () => `poller output:\n${output.slice(-3000)}`;

it("registers the listeners it bound, and forwards what they receive to the core", async () => {
  const registered = await until(
    "the poller registered with its listeners",
    async () => {
      const res = await k.request("GET", "/pollers");
      const row = (res.body as { id: string; listeners: string[] }[]).find((p) => p.id === "edge-1");
      return row?.listeners.length ? row : null;
    },
    30000,
    detail,
  );
  expect(registered.listeners).toEqual([expect.stringMatching(/^syslog\.udp:\d+$/)]);
  const port = Number(registered.listeners[0].split(":")[1]);
  await sendUdp(port, "<13>Nov 24 10:00:00 edge-router app: seen by the poller");
  const pipeline = k.context("events").get(EventPipeline);
  const stored = await until(
    "the forwarded event",
    async () => {
      await pipeline.flush();
      const res = await k.request("GET", "/events?q=seen%20by%20the%20poller");
      return (res.body as Record<string, unknown>[])[0];
    },
    20000,
    detail,
  );
  expect(stored).toMatchObject({
    transport: "udp",
    listener: "poller:edge-1/syslog.udp",
    source_ip: "127.0.0.1",
    host: "edge-router",
    message: "seen by the poller",
  });
  expect(stored.node_id).toEqual(expect.any(String));
});
