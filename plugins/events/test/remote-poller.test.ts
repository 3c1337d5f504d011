/**
 * A real remote poller process (`nms poller`) runs the events plugin's receivers for its pool and forwards what
 * they receive to the core, which attributes, matches and stores it; the listeners it bound are registered (they are
 * what a monitoring gap's `listeners` names). Nothing is buffered: syslog sent while the core is away is lost.
 * Needs `npm run build` (the poller runs from dist, as operators run it).
 */
import { startRemotePoller, type RemotePollerProcess } from "../../../test/support/remotePoller.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";

let k: TestKernel;
let poller: RemotePollerProcess | null = null;

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: { pluginConfig: { events: { flushMs: 50 } } },
  });
  await k.request("POST", "/nodes", { body: { name: "edge-router", address: "127.0.0.1", pool: "edge" } });
  poller = startRemotePoller({
    coreUrl: k.url,
    token: await k.token("admin"),
    id: "edge-1",
    pool: "edge",
    plugins: ["inventory", "polling", "alerts", "events"],
    // The poller's receivers: syslog over UDP on any free port; traps and the stream listeners off.
    env: {
      NMS__pluginConfig__events__syslog__udp: "0",
      NMS__pluginConfig__events__syslog__tcp: "null",
      NMS__pluginConfig__events__syslog__tls: "null",
      NMS__pluginConfig__events__syslog__bindAddress: "127.0.0.1",
      NMS__pluginConfig__events__traps__udp: "null",
    },
  });
});

afterAll(async () => {
  await poller?.stop();
  await k?.stop();
});

const detail = () => `poller output:\n${poller?.output().slice(-3000) ?? ""}`;

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
