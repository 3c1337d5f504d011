/**
 * End to end, from a really polled interface to a webhook: a node added over the API is polled by the
 * embedded poller against a real SNMP agent (snmpsim, v2c, growing counters); a webhook channel (signed
 * with an HMAC key) and a routing rule for every severity are created over the API; a threshold on one
 * polled port below its rate fires and the receiver gets one signed POST with the whole alert and
 * `event: "fire"`; raising the bound above the rate clears it and the receiver gets `event: "resolve"`
 * for the same incident; the delivery log shows both delivered.
 */
import { startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";
import { startWebhookServer, type ReceivedRequest, type WebhookServer } from "../support/webhookServer.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { webhookSignature } from "../../plugins/notifications/kinds/webhook.js";
import { pollingPlugin } from "../../plugins/polling/index.js";

const INTERVAL_SECS = 5;
const COMMUNITY = "e2e-notify";
const NODE_NAME = "e2e-notify-sw";
/** eth0 grows by 125 000 B/s = 1 Mbit/s. */
const ETH0_BPS = 1_000_000;
const HMAC_KEY = "e2e-hmac-key-0123456789abcdef";
const POLL_WAIT_MS = 2 * INTERVAL_SECS * 1000 + 5000;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

let k: TestKernel;
let agent: SnmpsimAgent;
let hook: WebhookServer;
let nodeId: string;
let thresholdId: string;
let incidentKey: string;

interface WebhookAlert {
  id: string;
  incident_key: string;
  event: string;
  subject: string;
  node: string | null;
  check: string;
  metric: string | null;
  ifindex: number | null;
  if_name: string | null;
  severity: string;
  resolved: boolean;
  observed_value: number | null;
  threshold_value: number | null;
  title: string | null;
}
interface Delivery {
  id: string;
  channel_id: string | null;
  event: string;
  status: string;
  attempts: number;
  last_status: number | null;
  test: boolean;
}

async function getJson<T>(path: string, query: Record<string, string | number> = {}): Promise<T> {
  const res = await k.http.get(path).query(query).set(bearer(k.adminToken));
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
  return res.body as T;
}

async function created(path: string, body: object): Promise<string> {
  const res = await k.http.post(path).set(bearer(k.adminToken)).send(body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
  return res.body.id as string;
}

/** The receiver's POSTs about this test's threshold, in order of arrival. */
const postsOfThreshold = (): ReceivedRequest[] => hook.received.filter((r) => r.method === "POST" && (r.body as Partial<WebhookAlert>).check === thresholdId);

/** Checks the request's HMAC signature the way the README tells a receiver to. */
function expectSigned(req: ReceivedRequest): void {
  const ts = req.headers["x-nms-timestamp"];
  expect(typeof ts).toBe("string");
  expect(Math.abs(Date.now() / 1000 - Number(ts))).toBeLessThan(300);
  expect(req.headers["x-nms-signature"]).toBe(webhookSignature(HMAC_KEY, String(ts), req.raw));
}

const thresholdBody = (warningAbove: number) => ({
  metric: "if_in_bps",
  scope_level: "interface",
  scope_ids: [`${nodeId}:1`],
  direction: "above",
  warning_above: warningAbove,
  dwell_samples: 1,
});

beforeAll(async () => {
  hook = await startWebhookServer();
  agent = await startSnmpsim({
    devices: [
      {
        community: COMMUNITY,
        sysName: NODE_NAME,
        interfaces: [
          { name: "eth0", alias: "uplink", inBytesPerSec: ETH0_BPS / 8, outBytesPerSec: 50_000, speedMbps: 1000 },
          { name: "eth1", inBytesPerSec: 25_000, outBytesPerSec: 10_000, speedMbps: 100 },
        ],
        hc: true,
        hostResources: false,
      },
    ],
  });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS } } },
  });
}, 90_000);

afterAll(async () => {
  await k?.stop();
  await hook?.close();
  await stopAllSnmpAgents();
});

describe("poll → alert → webhook, end to end", () => {
  let channelId: string;

  it("creates a signed webhook channel and a routing rule for every severity over the API", async () => {
    channelId = await created("/api/v1/notification-channels", {
      name: "e2e hook",
      kind: "webhook",
      config: { url: `${hook.url}/e2e`, hmac_key: HMAC_KEY },
    });
    await created("/api/v1/routing-rules", { name: "everything to e2e hook", severity: null, channel_ids: [channelId] });
    const channel = await getJson<{ secrets_set: string[]; enabled: boolean }>(`/api/v1/notification-channels/${channelId}`);
    expect(channel).toEqual(expect.objectContaining({ enabled: true, secrets_set: ["hmac_key"] }));
  });

  it("polls a node added over the API: its eth0 rate shows in interface-top", async () => {
    const credential = await created("/api/v1/credentials", { name: "e2e notify v2c", kind: "snmp_v2c", community: COMMUNITY });
    nodeId = await created("/api/v1/nodes", { name: NODE_NAME, address: agent.host, snmp_port: agent.port, credential_id: credential });
    const eth0 = await until(
      "eth0 of the node in interface-top (in_bps)",
      async () => {
        const res = await getJson<{ entries: { node_id: string; ifindex: number; value: number }[] }>("/api/v1/metrics/interface-top", {
          metric: "in_bps",
          limit: 100,
        });
        return res.entries.find((e) => e.node_id === nodeId && e.ifindex === 1 && e.value > 0);
      },
      POLL_WAIT_MS,
    );
    expect(eth0.value).toBeGreaterThan(ETH0_BPS * 0.75);
    expect(eth0.value).toBeLessThan(ETH0_BPS * 1.25);
  }, 30_000);

  it("fires a threshold on the polled port below its rate: the webhook gets one signed POST with the whole alert and event fire", async () => {
    thresholdId = await created("/api/v1/thresholds", thresholdBody(500_000));
    const [req] = await until("the webhook's fire POST", async () => (postsOfThreshold().length ? postsOfThreshold() : null), POLL_WAIT_MS);
    expect(req.path).toBe("/e2e");
    expect(req.headers["content-type"]).toEqual(expect.stringContaining("application/json"));
    expectSigned(req);
    const body = req.body as WebhookAlert;
    expect(body).toEqual(
      expect.objectContaining({
        event: "fire",
        node: nodeId,
        check: thresholdId,
        metric: "if_in_bps",
        ifindex: 1,
        if_name: "eth0",
        severity: "warning",
        resolved: false,
        direction: "above",
        threshold_value: 500_000,
        subject_kind: "node",
      }),
    );
    expect(body.observed_value).toBeGreaterThan(500_000);
    expect(body.title).toEqual(expect.stringContaining("eth0"));
    expect(body.subject).toBe(`[WARNING] ${body.title} (node ${nodeId})`);
    expect(req.headers["x-nms-dedup-key"]).toBe(body.incident_key);
    incidentKey = body.incident_key;

    // The alert the webhook got is the one GET /alerts shows.
    const active = (await getJson<{ id: string; check: string; node: string | null }[]>("/api/v1/alerts")).filter((a) => a.check === thresholdId);
    expect(active).toHaveLength(1);
    expect(active[0].node).toBe(nodeId);

    // Still one POST after another poll: the alert stays active, nothing more is sent.
    await new Promise((r) => setTimeout(r, INTERVAL_SECS * 1000 + 1000));
    expect(postsOfThreshold()).toHaveLength(1);
  }, 40_000);

  it("clears it when the bound is raised above the rate: the webhook gets event resolve for the same incident", async () => {
    const res = await k.http.put(`/api/v1/thresholds/${thresholdId}`).set(bearer(k.adminToken)).send(thresholdBody(50_000_000));
    expect(res.status).toBe(200);
    const resolve = await until(
      "the webhook's resolve POST",
      async () => postsOfThreshold().find((r) => (r.body as WebhookAlert).event === "resolve"),
      POLL_WAIT_MS,
    );
    expectSigned(resolve);
    const body = resolve.body as WebhookAlert;
    expect(body).toEqual(
      expect.objectContaining({
        event: "resolve",
        incident_key: incidentKey,
        node: nodeId,
        check: thresholdId,
        metric: "if_in_bps",
        ifindex: 1,
        resolved: true,
        severity: "warning",
      }),
    );
    expect(body.subject).toBe(`[RESOLVED WARNING] ${body.title} (node ${nodeId})`);
    expect(resolve.headers["x-nms-dedup-key"]).toBe(incidentKey);
    const events = postsOfThreshold().map((r) => (r.body as WebhookAlert).event);
    expect(events).toEqual(["fire", "resolve"]);
    // Each delivery has its own idempotency key.
    const [fire] = postsOfThreshold();
    expect(fire.headers["idempotency-key"]).not.toBe(resolve.headers["idempotency-key"]);
  }, 30_000);

  it("shows both deliveries delivered in GET /notification-deliveries", async () => {
    const rows = await until(
      "both deliveries delivered",
      async () => {
        const all = await getJson<Delivery[]>("/api/v1/notification-deliveries", { alert: incidentKey });
        return all.length === 2 && all.every((d) => d.status === "delivered") ? all : null;
      },
      10_000,
    );
    // Newest first.
    expect(rows.map((d) => d.event)).toEqual(["resolve", "fire"]);
    for (const d of rows) expect(d).toEqual(expect.objectContaining({ channel_id: channelId, attempts: 1, last_status: 200, test: false }));
    const delivered = await getJson<Delivery[]>("/api/v1/notification-deliveries", { channel_id: channelId, status: "delivered" });
    expect(delivered.map((d) => d.id).sort()).toEqual(rows.map((d) => d.id).sort());
  });
});
