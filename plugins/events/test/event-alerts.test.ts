/**
 * Event-driven incidents are alerts like any other (issue 10, "Extend that contract so that event-driven incidents get
 * history rows, acks and notifications like any other"): with inventory, polling, alerts, notifications and events
 * on one kernel, syslog from a node's address fires an event rule's incident, which reaches a real webhook receiver
 * through a routing rule as `fire` with the rule's name as title; an ack shows on GET /alerts and survives the next
 * (suppressed) match; the clear pattern resolves it (`resolve` on the webhook, a resolved history row); a mute of metric
 * `event_rule` on the node turns the next fire's notification into `suppress` (the alerts plugin's documented mute
 * behaviour: history is written, channels get `suppress`, never `fire`); PUT /event-rules/{id} changing how the rule
 * matches clears its open alert, and so does disabling it, while a rename alone keeps it open.
 *
 * The steps share one incident's life, so they run in order.
 */
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { startWebhookServer, type WebhookServer } from "../../../test/support/webhookServer.js";
import { alertsPlugin, EventAlertService } from "../../alerts/index.js";
import { inventoryPlugin, NodeAddresses } from "../../inventory/index.js";
import { notificationsPlugin } from "../../notifications/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";

type Row = Record<string, unknown>;

/** The node's address: every datagram below is sent from it. */
const NODE_IP = "127.0.0.31";
const RULE = {
  name: "Uplink flapping",
  pattern: "UPLINK-DOWN",
  match_kind: "substring",
  severity: "critical",
  clear_pattern: "UPLINK-UP",
  min_count: 1,
  window_secs: 60,
};

let k: TestKernel;
let hook: WebhookServer;
let udpPort: number;
let nodeId: string;
let ruleId: string;
let alertId: string;
let seq = 0;

async function flush(): Promise<void> {
  await k.context("events").get(EventPipeline).flush();
}

/** Sends one syslog datagram from the node and waits until it is stored; answers the stored event. */
async function send(text: string): Promise<Row> {
  const marker = `seq-${++seq}-${Date.now()}`;
  await sendUdp(udpPort, `<11>Nov 25 10:00:00 edge-31 ifmgr: ${text} ${marker}`, NODE_IP);
  return until(`the event "${text}" stored`, async () => {
    await flush();
    const res = await k.request("GET", `/events?q=${encodeURIComponent(marker)}`);
    return (res.body as Row[])[0];
  });
}

/** The open alerts of the rule (GET /alerts). */
async function openAlerts(): Promise<Row[]> {
  const res = await k.request("GET", "/alerts");
  expect(res.status).toBe(200);
  return (res.body as Row[]).filter((a) => a.check === ruleId);
}

/** The rule's history rows on the node, newest first. */
async function history(): Promise<Row[]> {
  const res = await k.request("GET", `/alerts/history?node_id=${nodeId}`);
  expect(res.status).toBe(200);
  return (res.body as Row[]).filter((h) => h.check === ruleId);
}

/** What the webhook received about the rule's incident, as [event, resolved] in arrival order. */
const notified = () =>
  hook.received
    .map((r) => r.body as Row)
    .filter((b) => b.check === ruleId)
    .map((b) => [b.event, b.resolved]);

const putRule = (body: Row) => k.request("PUT", `/event-rules/${ruleId}`, { body });

/** Lets what an edit could have set off (the alert engine's 50 ms flush, the delivery worker) happen. */
const settle = () => new Promise((r) => setTimeout(r, 1500));

beforeAll(async () => {
  hook = await startWebhookServer();
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin, eventsPlugin],
    overrides: {
      pluginConfig: {
        events: { syslog: { udp: 0, bindAddress: "127.0.0.1" }, flushMs: 50 },
        alerts: { flushMs: 50 },
        notifications: { retryBaseMs: 100, retryMaxMs: 400, pollMs: 100, maxAttempts: 3 },
      },
    },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  udpPort = listeners.listeners.find((l) => l.name === "syslog.udp")!.port as number;
  const node = await k.request("POST", "/nodes", { body: { name: "edge-31", address: NODE_IP } });
  expect(node.status).toBe(201);
  nodeId = (node.body as Row).id as string;
  await k.context("inventory").get(NodeAddresses).reload();
  const channel = await k.request("POST", "/notification-channels", { body: { name: "event hook", kind: "webhook", config: { url: `${hook.url}/events` } } });
  expect(channel.status).toBe(201);
  const routing = await k.request("POST", "/routing-rules", {
    body: { name: "everything to the hook", severity: null, channel_ids: [(channel.body as Row).id] },
  });
  expect(routing.status).toBe(201);
  const rule = await k.request("POST", "/event-rules", { body: { ...RULE, node_id: nodeId } });
  expect(rule.status).toBe(201);
  ruleId = (rule.body as Row).id as string;
});

afterAll(async () => {
  await k?.stop();
  await hook?.close();
});

describe("an event rule's incident", () => {
  it("fires on the first match: the webhook gets `fire` with the rule's title; GET /alerts and history show it", async () => {
    const e = await send("UPLINK-DOWN Gi0/1");
    expect(e).toMatchObject({ node_id: nodeId, action: "fired", rule_id: ruleId });
    const fire = await until("the webhook's fire", async () => hook.received.find((r) => (r.body as Row).check === ruleId && (r.body as Row).event === "fire"));
    expect(fire.path).toBe("/events");
    expect(fire.body).toMatchObject({
      event: "fire",
      check: ruleId,
      node: nodeId,
      metric: "event_rule",
      severity: "critical",
      resolved: false,
      title: RULE.name,
      observed_value: 1,
    });
    const [open] = await until("the active alert", async () => ((await openAlerts()).length === 1 ? openAlerts() : null));
    expect(open).toMatchObject({ node: nodeId, metric: "event_rule", severity: "critical", title: RULE.name, acked: null });
    alertId = open.id as string;
    expect((await history()).map((h) => [h.resolved, h.title])).toEqual([[false, RULE.name]]);
  });

  it("POST /alerts/ack acknowledges it: GET /alerts shows the ack, and the next (suppressed) match keeps it and notifies nothing", async () => {
    const res = await k.request("POST", "/alerts/ack", { body: { node: nodeId, check: ruleId, note: "looking at the uplink" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ acked: 1, cleared: 0 });
    expect((res.body as { incidents: Row[] }).incidents.map((i) => i.id)).toEqual([alertId]);
    const acked = { by: expect.any(String), at: expect.any(String), note: "looking at the uplink" };
    expect((await openAlerts())[0].acked).toEqual(acked);

    const e = await send("UPLINK-DOWN Gi0/1 again");
    expect(e).toMatchObject({ action: "suppressed", rule_id: ruleId });
    await settle();
    const open = await openAlerts();
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ id: alertId, acked });
    expect(notified()).toEqual([["fire", false]]);
    expect((await history()).map((h) => h.resolved)).toEqual([false]);
    expect((await history())[0].acked).toEqual(acked);
  });

  it("the clear pattern resolves it: the webhook gets `resolve`, history gets the resolved row", async () => {
    const e = await send("UPLINK-UP Gi0/1");
    expect(e).toMatchObject({ action: "cleared", rule_id: ruleId });
    await until("the webhook's resolve", async () => notified().length === 2);
    expect(notified()).toEqual([
      ["fire", false],
      ["resolve", true],
    ]);
    const resolve = hook.received.map((r) => r.body as Row).find((b) => b.check === ruleId && b.event === "resolve")!;
    expect(resolve).toMatchObject({ node: nodeId, metric: "event_rule", title: RULE.name });
    await until("the alert gone", async () => (await openAlerts()).length === 0);
    expect((await history()).map((h) => h.resolved)).toEqual([true, false]);
  });

  it("a mute of metric event_rule on the node turns the next fire's notification into `suppress`; the incident is still recorded", async () => {
    const until_ = new Date(Date.now() + 3_600_000).toISOString();
    const mute = await k.request("POST", "/mutes/bulk", { body: { node_ids: [nodeId], metric_name: "event_rule", reason: "uplink work", until: until_ } });
    expect(mute.status).toBe(200);
    expect(mute.body).toEqual({ created: 1, requested: 1 });

    const e = await send("UPLINK-DOWN Gi0/1 during the work");
    expect(e).toMatchObject({ action: "fired", rule_id: ruleId });
    await until("the muted fire recorded", async () => (await openAlerts()).length === 1);
    await until("the webhook's suppress", async () => notified().length === 3);
    await settle();
    expect(notified()).toEqual([
      ["fire", false],
      ["resolve", true],
      ["suppress", false],
    ]);
    expect((await history()).map((h) => h.resolved)).toEqual([false, true, false]);

    // The mute ends: the steps below look at the incident, not at notifications.
    const mutes = (await k.request("GET", "/mutes")).body as Row[];
    const id = mutes.find((m) => m.node_id === nodeId && m.metric_name === "event_rule")!.id as string;
    expect((await k.request("DELETE", `/mutes/${id}`)).status).toBe(204);
  });

  it("PUT with the same pattern and another name keeps the open alert", async () => {
    const before = (await history()).length;
    const res = await putRule({ ...RULE, name: "Uplink flapping (renamed)", node_id: nodeId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ruleId, name: "Uplink flapping (renamed)", pattern: RULE.pattern });
    await k.context("alerts").get(EventAlertService).flush();
    await settle();
    expect(await openAlerts()).toHaveLength(1);
    expect(await history()).toHaveLength(before);
    // Still the same rule state: the next match is a repeat of the open alert.
    expect(await send("UPLINK-DOWN Gi0/1 after the rename")).toMatchObject({ action: "suppressed", rule_id: ruleId });
  });

  it("PUT changing the pattern clears the open alert (a resolved history row) and counting starts over", async () => {
    const res = await putRule({ ...RULE, pattern: "UPLINK-LOST", node_id: nodeId });
    expect(res.status).toBe(200);
    await until("the alert cleared by the edit", async () => (await openAlerts()).length === 0);
    const rows = await history();
    expect(rows.map((h) => h.resolved)).toEqual([true, false, true, false]);
    // The old pattern no longer matches; the new one fires afresh.
    expect(await send("UPLINK-DOWN Gi0/1 old pattern")).toMatchObject({ action: "unmatched", rule_id: null });
    expect(await send("UPLINK-LOST Gi0/1 new pattern")).toMatchObject({ action: "fired", rule_id: ruleId });
    await until("fired again", async () => (await openAlerts()).length === 1);
  });

  it("PUT disabling the rule clears the open alert; the disabled rule matches nothing", async () => {
    const before = (await history()).length;
    const res = await putRule({ ...RULE, pattern: "UPLINK-LOST", enabled: false, node_id: nodeId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ enabled: false });
    await until("the alert cleared by disabling", async () => (await openAlerts()).length === 0);
    const rows = await history();
    expect(rows).toHaveLength(before + 1);
    expect(rows[0].resolved).toBe(true);
    expect(await send("UPLINK-LOST Gi0/1 while disabled")).toMatchObject({ action: "unmatched", rule_id: null });
  });
});
