/**
 * A remote poller partitioned from its core (issue 10: "A poller sends what it receives to the core over its API, and
 * does not buffer it: the spec says passive data arriving during a partition is lost. The listeners a poller had bound
 * are what the monitoring gap's `listeners` field names"): a real `nms poller` process with a syslog UDP listener
 * reaches the core through a small TCP proxy (so its --core URL stays the same while the core restarts on another
 * port). The core is cut off and stopped, syslog is sent to the poller, the core is started again on the same
 * database and the proxy pointed at it: nothing sent during the outage is ever stored (a message sent after it is),
 * the poller logged "passive events lost", and the monitoring gap the outage left names the listener the poller
 * registered, `syslog.udp:<port>`, the port the messages went to.
 * Needs `npm run build` (the poller runs from dist, as operators run it).
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { startRemotePoller, type RemotePollerProcess } from "../../../test/support/remotePoller.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";

type Row = Record<string, unknown>;
const PLUGINS = [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin];
const OVERRIDES = { pluginConfig: { polling: { heartbeatAllowanceSecs: 5 }, events: { flushMs: 50 } } };
/** Longer than the heartbeat allowance, so the outage leaves a monitoring gap. */
const OUTAGE_MS = 9000;

/** A TCP proxy on a free loopback port: forwards to `target` (a port), or, while the target is null, refuses by closing at once. */
interface Proxy {
  url: string;
  point(target: number | null): void;
  close(): Promise<void>;
}

async function startProxy(initial: number): Promise<Proxy> {
  let target: number | null = initial;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    client.on("error", () => undefined);
    if (target === null) return void client.destroy();
    const upstream = connect(target, "127.0.0.1");
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.once("close", () => (upstream.destroy(), open.delete(client), open.delete(upstream)));
    upstream.once("close", () => client.destroy());
    open.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    point(t) {
      target = t;
      if (t === null) for (const s of open) s.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

const portOf = (url: string) => Number(new URL(url).port);

let k: TestKernel | null = null;
let proxy: Proxy | null = null;
let poller: RemotePollerProcess | null = null;

afterAll(async () => {
  await poller?.stop();
  await k?.stop();
  await proxy?.close();
});

const detail = () => `poller output:\n${poller?.output().slice(-4000) ?? ""}`;

async function stored(q: string): Promise<Row[]> {
  await k!.context("events").get(EventPipeline).flush();
  const res = await k!.request("GET", `/events?q=${encodeURIComponent(q)}&limit=1000`);
  expect(res.status).toBe(200);
  return res.body as Row[];
}

it("loses what arrives while the core is away (nothing buffered, logged), and the gap names the listener it had bound", async () => {
  k = await startTestKernel({ plugins: PLUGINS, overrides: OVERRIDES });
  const databaseUrl = k.databaseUrl!;
  proxy = await startProxy(portOf(k.url));
  await k.request("POST", "/nodes", { body: { name: "edge-part", address: "127.0.0.1", pool: "edge" } });
  poller = startRemotePoller({
    coreUrl: proxy.url,
    token: await k.token("admin"),
    id: "edge-part-1",
    pool: "edge",
    plugins: ["inventory", "polling", "alerts", "events"],
    env: {
      NMS__pluginConfig__events__syslog__udp: "0",
      NMS__pluginConfig__events__syslog__tcp: "null",
      NMS__pluginConfig__events__syslog__tls: "null",
      NMS__pluginConfig__events__syslog__bindAddress: "127.0.0.1",
      NMS__pluginConfig__events__traps__udp: "null",
    },
  });
  const registered = await until(
    "the poller registered with its listener",
    async () => {
      const rows = (await k!.request("GET", "/pollers")).body as { id: string; listeners: string[]; online: boolean }[];
      const row = rows.find((p) => p.id === "edge-part-1");
      return row?.listeners.length ? row : null;
    },
    30000,
    detail,
  );
  expect(registered.listeners).toEqual([expect.stringMatching(/^syslog\.udp:\d+$/)]);
  const port = Number(registered.listeners[0].split(":")[1]);

  // Before the partition: forwarded and stored.
  await sendUdp(port, "<13>Nov 25 10:00:00 edge-part app: before the partition");
  await until("the message before the partition", async () => (await stored("before the partition")).length === 1, 20000, detail);
  expect((await stored("before the partition"))[0]).toMatchObject({ listener: "poller:edge-part-1/syslog.udp", source_ip: "127.0.0.1" });

  // The partition: the proxy refuses, and the core stops.
  proxy.point(null);
  await k.stop();
  k = null;
  const started = Date.now();
  let sent = 0;
  while (Date.now() - started < OUTAGE_MS) {
    await sendUdp(port, `<13>Nov 25 10:00:00 edge-part app: during the outage ${sent++}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  await until("the poller said it lost events", async () => poller!.output().includes("passive events lost"), 10000, detail);
  const lostLine = poller
    .output()
    .split("\n")
    .find((l) => l.includes("passive events lost"))!;
  expect(JSON.parse(lostLine)).toMatchObject({ level: "warn", lost_total: expect.any(Number) });
  expect(JSON.parse(lostLine).lost_total).toBeGreaterThan(0);

  // The core is back on the same database, at another port behind the same URL.
  k = await startTestKernel({ plugins: PLUGINS, overrides: OVERRIDES, databaseUrl });
  proxy.point(portOf(k.url));

  const gap = await until(
    "the monitoring gap of the outage",
    async () => {
      const res = await k!.request("GET", "/monitoring-gaps");
      return (res.body as Row[]).find((g) => g.poller_id === "edge-part-1");
    },
    30000,
    detail,
  );
  expect(gap).toMatchObject({ poller_id: "edge-part-1", pool: "edge", listeners: [`syslog.udp:${port}`] });
  expect(gap.duration_secs as number).toBeGreaterThanOrEqual(5);
  const pollers = (await k.request("GET", "/pollers")).body as { id: string; listeners: string[] }[];
  expect(pollers.find((p) => p.id === "edge-part-1")?.listeners).toEqual([`syslog.udp:${port}`]);
  // The poller reports what it lost with its host telemetry (its next heartbeats).
  const lost = await until(
    "the loss in the poller's host telemetry",
    async () => {
      const hosts = ((await k!.request("GET", "/system/hosts")).body as { hosts: { instance: string; counters: Record<string, number> }[] }).hosts;
      return hosts.find((h) => h.instance === "edge-part-1")?.counters.events_forward_lost || null;
    },
    20000,
    detail,
  );
  expect(lost).toBeGreaterThanOrEqual(JSON.parse(lostLine).lost_total);

  // After the partition: forwarded again; and what arrived during it never shows up.
  await sendUdp(port, "<13>Nov 25 10:00:00 edge-part app: after the partition");
  await until("the message after the partition", async () => (await stored("after the partition")).length === 1, 20000, detail);
  // Give anything the poller might have kept a few of its flush rounds (200 ms each) to arrive.
  await new Promise((r) => setTimeout(r, 2000));
  await sendUdp(port, "<13>Nov 25 10:00:00 edge-part app: a later one");
  await until("a later message", async () => (await stored("a later one")).length === 1, 20000, detail);
  expect(sent).toBeGreaterThan(10);
  expect(await stored("during the outage")).toEqual([]);
  const all = (await k.request("GET", "/events?limit=1000")).body as Row[];
  expect(all.map((e) => e.message).sort()).toEqual(["a later one", "after the partition", "before the partition"]);
}, 120000);
