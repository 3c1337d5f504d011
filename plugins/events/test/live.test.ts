/**
 * The events.live Socket.IO channel: events as they are stored, scoped by folder, filtered by what the subscriber
 * sends (kind, node, severity), and a subscriber that does not read is disconnected without slowing the receivers.
 */
import { closeAllSockets, connectSocket } from "../../../test/support/socketClient.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";
import { NodeAddresses } from "../../inventory/index.js";

type Row = Record<string, unknown>;

let k: TestKernel;
let udpPort: number;
let folderA: string;
let folderB: string;
let nodeA: string;
let nodeB: string;

const send = (text: string, from: string) => sendUdp(udpPort, text, from);

const flush = () => k.context("events").get(EventPipeline).flush();

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: { pluginConfig: { events: { syslog: { udp: 0, bindAddress: "127.0.0.1" }, flushMs: 10 } } },
  });
  udpPort = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "syslog.udp")!.port as number;
  folderA = ((await k.request("POST", "/node-groups", { body: { name: "a" } })).body as Row).id as string;
  folderB = ((await k.request("POST", "/node-groups", { body: { name: "b" } })).body as Row).id as string;
  nodeA = ((await k.request("POST", "/nodes", { body: { name: "a1", address: "127.0.0.1", group_id: folderA } })).body as Row).id as string;
  nodeB = ((await k.request("POST", "/nodes", { body: { name: "b1", address: "127.0.0.2", group_id: folderB } })).body as Row).id as string;
  await k.context("inventory").get(NodeAddresses).reload();
});
afterEach(() => closeAllSockets());
afterAll(() => k?.stop());

const messages = (payloads: unknown[]) => payloads.flatMap((p) => (p as Row[]).map((e) => e.message));

it("delivers stored events in batches; a folder-scoped subscriber gets its folders' events only", async () => {
  const all = await connectSocket(k.url, k.adminToken);
  const scoped = await connectSocket(k.url, await k.token("viewer", { folders: [folderB] }));
  expect(await all.subscribe("events.live")).toEqual({ ok: true, channel: "events.live" });
  expect(await scoped.subscribe("events.live")).toEqual({ ok: true, channel: "events.live" });
  await send("<14>live from a", "127.0.0.1");
  await send("<14>live from b", "127.0.0.2");
  await send("<14>live from nowhere", "127.0.0.3");
  await flush();
  await until("all three", async () => messages(all.received("events.events")).length >= 3);
  expect(messages(all.received("events.events")).sort()).toEqual(["live from a", "live from b", "live from nowhere"]);
  await until("b's", async () => messages(scoped.received("events.events")).length >= 1);
  await scoped.expectNone("events.events", (p) => (p as Row[]).some((e) => e.node_id !== nodeB), 300);
  const [event] = scoped.received("events.events")[0] as Row[];
  expect(event).toMatchObject({ node_id: nodeB, kind: "syslog", transport: "udp", message: "live from b", severity: 6 });
  expect(event.received_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
});

it("applies the subscriber's filter (kind, node, severity) and refuses a bad one", async () => {
  const s = await connectSocket(k.url, await k.token("viewer"));
  expect(await s.subscribe({ channel: "events.live", filter: { node_id: nodeA, severity: [0, 1, 2, 3] } })).toEqual({ ok: true, channel: "events.live" });
  await send("<11>a error", "127.0.0.1");
  await send("<14>a info", "127.0.0.1");
  await send("<11>b error", "127.0.0.2");
  await flush();
  await until("a's error", async () => messages(s.received("events.events")).includes("a error"));
  await s.expectNone("events.events", (p) => (p as Row[]).some((e) => e.message !== "a error"), 300);
  for (const filter of [{ kind: "flow" }, { node_id: "x" }, { severity: [9] }, { colour: "red" }, "syslog"]) {
    const ack = await s.subscribe({ channel: "events.live", filter });
    expect(ack).toMatchObject({ ok: false, error: { code: "invalid_filter" } });
  }
});

/** A Socket.IO client over HTTP long-polling that subscribes and then never polls again: its messages pile up on the server. */
async function stalledSubscriber(token: string): Promise<{ poll: () => Promise<number> }> {
  const base = `${k.url}/socket.io/?EIO=4&transport=polling`;
  const open = await (await fetch(base)).text();
  const sid = (JSON.parse(open.slice(1)) as { sid: string }).sid;
  const url = `${base}&sid=${sid}`;
  await fetch(url, { method: "POST", body: `40${JSON.stringify({ token })}` });
  expect(await (await fetch(url)).text()).toMatch(/^40/);
  await fetch(url, { method: "POST", body: `420["subscribe",{"channel":"events.live"}]` });
  expect(await (await fetch(url)).text()).toContain('"ok":true');
  return {
    poll: async () => {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
      await res.text();
      return res.status;
    },
  };
}

it("disconnects a subscriber that does not read; the others and the store keep everything", async () => {
  const fast = await connectSocket(k.url, k.adminToken);
  await fast.subscribe("events.live");
  const slow = await stalledSubscriber(k.adminToken);
  const n = 1100;
  const pipeline = k.context("events").get(EventPipeline);
  const before = pipeline.stats().accepted;
  for (let i = 0; i < n; i++) {
    await send(`<14>burst ${i}`, "127.0.0.1");
    // One live message per event (more than the channel's 1000 unsent): wait for it to be taken, then write it.
    while (pipeline.stats().accepted < before + i + 1) await new Promise((r) => setImmediate(r));
    await flush();
  }
  await flush();
  await until("the slow subscriber dropped", async () => k.logs.some((l) => l.includes("slow subscriber disconnected")), 20000);
  // What was buffered before the disconnect drains; then the session is gone.
  await until("the session closed", async () => (await slow.poll()) === 400, 10000);
  await until(
    "every burst event at the fast subscriber",
    async () => messages(fast.received("events.events")).filter((m) => String(m).startsWith("burst")).length === n,
    20000,
  );
  const stored = await k.request("GET", "/events/stats?group_by=kind&q=burst");
  expect(stored.body).toEqual([{ key: "syslog", node_id: null, count: n }]);
});
