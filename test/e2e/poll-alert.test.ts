/**
 * End to end, through the HTTP API and Socket.IO only: a node added over the API is polled by the
 * embedded poller against a real SNMP agent (snmpsim, v2c, growing counters), its interfaces show
 * in interface-top and the node's interface list; a threshold on one polled port fires, the alert
 * shows in /alerts, an operator acks it and sees the alerts.acks broadcast, and raising the bound
 * above the measured rate clears it (a resolved history row).
 */
import { startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../support/snmpAgents.js";
import { closeAllSockets, connectSocket, type TestSocket } from "../support/socketClient.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { until } from "../support/wait.js";

const INTERVAL_SECS = 5;
const COMMUNITY = "e2e-sw";
const NODE_NAME = "e2e-sw";
/** eth0 grows by 125 000 B/s = 1 Mbit/s; eth1 by 25 000 B/s = 200 kbit/s. */
const ETH0_BPS = 1_000_000;
const ETH1_BPS = 200_000;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

let k: TestKernel;
let agent: SnmpsimAgent;
let nodeId: string;
let thresholdId: string;
let operator: string;
let socket: TestSocket;

interface TopEntry {
  node_id: string;
  node_name: string;
  ifindex: number;
  if_name: string | null;
  if_speed_bps: number | null;
  value: number;
}
interface NodeInterface {
  ifindex: number;
  if_name: string | null;
  oper_up: boolean | null;
  in_bps: number | null;
  if_speed_bps: number | null;
}
interface ActiveAlert {
  id: string;
  node: string | null;
  node_name: string | null;
  check: string;
  metric: string | null;
  ifindex: number | null;
  if_name: string | null;
  severity: string;
  state: string;
  direction: string | null;
  observed_value: number | null;
  threshold_value: number | null;
  title: string | null;
  acked: { by: string; at: string; note: string | null } | null;
}
interface HistoryRow {
  id: string;
  check: string;
  node: string | null;
  metric: string | null;
  ifindex: number | null;
  if_name: string | null;
  resolved: boolean;
  severity: string;
  title: string | null;
}

/** Polls `fn` until it returns something truthy, failing after `timeoutMs` with the last value seen. */
async function getJson<T>(path: string, query: Record<string, string | number> = {}, token = k.adminToken): Promise<T> {
  const res = await k.http.get(path).query(query).set(bearer(token));
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
  return res.body as T;
}

async function created(path: string, body: object): Promise<string> {
  const res = await k.http.post(path).set(bearer(k.adminToken)).send(body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
  return res.body.id as string;
}

const activeOfNode = async () => (await getJson<ActiveAlert[]>("/api/v1/alerts")).filter((a) => a.node === nodeId);

const thresholdBody = (warningAbove: number) => ({
  metric: "if_in_bps",
  scope_level: "interface",
  scope_ids: [`${nodeId}:1`],
  direction: "above",
  warning_above: warningAbove,
  dwell_samples: 1,
});

beforeAll(async () => {
  agent = await startSnmpsim({
    devices: [
      {
        community: COMMUNITY,
        sysName: NODE_NAME,
        interfaces: [
          { name: "eth0", alias: "uplink", inBytesPerSec: ETH0_BPS / 8, outBytesPerSec: 50_000, speedMbps: 1000 },
          { name: "eth1", inBytesPerSec: ETH1_BPS / 8, outBytesPerSec: 10_000, speedMbps: 100 },
        ],
        hc: true,
        hostResources: false,
      },
    ],
  });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS } } },
  });
  operator = await k.session("operator", "All", "e2e-operator");
}, 90_000);

afterAll(async () => {
  closeAllSockets();
  await k?.stop();
  await stopAllSnmpAgents();
});

describe("poll → alert → ack → clear, end to end", () => {
  it("polls a node added over the API within about two intervals: interface-top and the node's interfaces", async () => {
    const credential = await created("/api/v1/credentials", { name: "e2e v2c", kind: "snmp_v2c", community: COMMUNITY });
    nodeId = await created("/api/v1/nodes", { name: NODE_NAME, address: agent.host, snmp_port: agent.port, credential_id: credential });

    // Rates need two polls: the first is due as soon as the poller sees the node, the second one interval later.
    const top = await until(
      "both interfaces of the node in interface-top (in_bps)",
      async () => {
        const res = await getJson<{ entries: TopEntry[]; partial: boolean }>("/api/v1/metrics/interface-top", { metric: "in_bps", limit: 100 });
        const mine = res.entries.filter((e) => e.node_id === nodeId && e.value > 0);
        return mine.length === 2 ? { ...res, entries: mine } : null;
      },
      2 * INTERVAL_SECS * 1000 + 5000,
    );
    expect(top.partial).toBe(false);
    const byIndex = new Map(top.entries.map((e) => [e.ifindex, e]));
    expect(byIndex.get(1)).toEqual(expect.objectContaining({ node_name: NODE_NAME, if_name: "eth0", if_speed_bps: 1_000_000_000 }));
    expect(byIndex.get(2)).toEqual(expect.objectContaining({ node_name: NODE_NAME, if_name: "eth1", if_speed_bps: 100_000_000 }));
    expect(byIndex.get(1)!.value).toBeGreaterThan(ETH0_BPS * 0.75);
    expect(byIndex.get(1)!.value).toBeLessThan(ETH0_BPS * 1.25);
    expect(byIndex.get(2)!.value).toBeGreaterThan(ETH1_BPS * 0.75);
    expect(byIndex.get(2)!.value).toBeLessThan(ETH1_BPS * 1.25);
    // Highest first.
    expect(top.entries.map((e) => e.ifindex)).toEqual([1, 2]);

    const ifaces = await getJson<NodeInterface[]>(`/api/v1/nodes/${nodeId}/interfaces`);
    expect(ifaces.map((i) => [i.ifindex, i.if_name, i.oper_up])).toEqual([
      [1, "eth0", true],
      [2, "eth1", true],
    ]);
    expect(ifaces[0].in_bps).toBeGreaterThan(0);
    expect(ifaces[1].in_bps).toBeGreaterThan(0);

    // The system group was written back to the node's facts.
    const node = await getJson<{ sys_name: string | null }>(`/api/v1/nodes/${nodeId}`);
    expect(node.sys_name).toBe(NODE_NAME);
  }, 30_000);

  it("fires an alert from a threshold on one polled port below its rate, shown in GET /alerts with title and if_name", async () => {
    thresholdId = await created("/api/v1/thresholds", thresholdBody(500_000));
    const [alert] = await until(
      "an active if_in_bps alert on port 1",
      async () => {
        const mine = (await activeOfNode()).filter((a) => a.check === thresholdId);
        return mine.length ? mine : null;
      },
      2 * INTERVAL_SECS * 1000 + 5000,
    );
    expect(alert).toEqual(
      expect.objectContaining({
        node: nodeId,
        node_name: NODE_NAME,
        metric: "if_in_bps",
        ifindex: 1,
        if_name: "eth0",
        severity: "warning",
        direction: "above",
        threshold_value: 500_000,
        acked: null,
      }),
    );
    expect(alert.observed_value).toBeGreaterThan(500_000);
    expect(alert.title).toEqual(expect.stringContaining("eth0"));
    expect(alert.title).toEqual(expect.stringContaining("inbound traffic above"));
    expect(alert.title).toEqual(expect.stringContaining(NODE_NAME));
    // Only the port the rule names: eth1 has no alert.
    expect((await activeOfNode()).filter((a) => a.ifindex === 2)).toEqual([]);

    const fires = await getJson<HistoryRow[]>("/api/v1/alerts/history", { node_id: nodeId, resolved: "false" });
    expect(fires.filter((r) => r.check === thresholdId)).toEqual([
      expect.objectContaining({ metric: "if_in_bps", ifindex: 1, if_name: "eth0", resolved: false, severity: "warning", title: alert.title }),
    ]);
  }, 30_000);

  it("lets an operator session ack the node's alert; the alerts.acks subscriber sees the broadcast and GET /alerts shows it acked", async () => {
    socket = await connectSocket(k.url, operator);
    const sub = await socket.subscribe("alerts.acks");
    expect(sub.ok).toBe(true);

    const res = await k.http.post("/api/v1/alerts/ack").set(bearer(operator)).send({ node: nodeId, note: "e2e looking" });
    expect(res.status).toBe(200);
    expect(res.body.acked).toBeGreaterThanOrEqual(1);
    const mine = (res.body.incidents as { check: string; ifindex: number | null }[]).find((i) => i.check === thresholdId);
    expect(mine).toEqual(
      expect.objectContaining({ ifindex: 1, metric: "if_in_bps", acked: expect.objectContaining({ by: "e2e-operator", note: "e2e looking" }) }),
    );

    const event = (await socket.waitFor("alerts.ack", (p) => (p as { node?: string }).node === nodeId, 5000)) as Record<string, unknown>;
    expect(event).toEqual(expect.objectContaining({ action: "recorded", subject_kind: "node", node: nodeId, by: "e2e-operator", acked: res.body.acked }));
    expect(event.incidents).toEqual(res.body.incidents);

    const [alert] = (await activeOfNode()).filter((a) => a.check === thresholdId);
    expect(alert.acked).toEqual(expect.objectContaining({ by: "e2e-operator", note: "e2e looking" }));
  }, 20_000);

  it("clears the alert when the bound is raised above the rate: gone from /alerts, a resolved row in history", async () => {
    const res = await k.http.put(`/api/v1/thresholds/${thresholdId}`).set(bearer(k.adminToken)).send(thresholdBody(50_000_000));
    expect(res.status).toBe(200);
    expect(res.body.warning_above).toBe(50_000_000);

    await until("the alert to clear", async () => ((await activeOfNode()).some((a) => a.check === thresholdId) ? null : true), 2 * INTERVAL_SECS * 1000 + 5000);
    const rows = (await getJson<HistoryRow[]>("/api/v1/alerts/history", { node_id: nodeId })).filter((r) => r.check === thresholdId);
    expect(rows.filter((r) => r.resolved)).toEqual([expect.objectContaining({ metric: "if_in_bps", ifindex: 1, if_name: "eth0", node: nodeId })]);
    expect(rows.filter((r) => !r.resolved)).toHaveLength(1);
    // Nothing else fired for the node meanwhile (it stayed reachable).
    expect(await activeOfNode()).toEqual([]);
  }, 30_000);
});
