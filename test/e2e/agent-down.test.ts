/**
 * A node that answers ping but whose SNMP agent does not is not "ok": against a real agent (snmpsim, v2c), a node
 * polled with a community the agent does not serve times out on every poll while 127.0.0.1 answers ICMP. After
 * pluginConfig.alerts.agentDownPolls polls in a row the alerts plugin raises "SNMP agent on … not answering (timeout)"
 * (warning, node state unknown); /metrics counts those polls as snmp_timeout, not ok, with gauges of active alerts by
 * severity and nodes by state; once the agent answers (the right credential), the alert clears.
 */
import { startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { until } from "../support/wait.js";

const INTERVAL_SECS = 5;

let k: TestKernel;
let agent: SnmpsimAgent;
const ids: Record<string, string> = {};

interface ActiveAlert {
  node: string | null;
  check: string;
  metric: string | null;
  severity: string;
  state: string;
  title: string | null;
}

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

async function metric(line: string): Promise<number> {
  const text = (await k.http.get("/metrics")).text;
  const found = text.split("\n").find((l) => l.startsWith(line + " "));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

const agentAlerts = async () =>
  ((await k.request("GET", "/alerts")).body as ActiveAlert[]).filter((a) => a.node === ids.silent && a.metric === "snmp_agent_status");

beforeAll(async () => {
  agent = await startSnmpsim({
    devices: [{ community: "served", sysName: "answering", interfaces: [{ name: "eth0", inBytesPerSec: 1000, outBytesPerSec: 1000, speedMbps: 100 }] }],
  });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS, snmpTimeoutMs: 500, snmpRetries: 0 },
        alerts: { agentDownPolls: 2, flushMs: 50 },
      },
    },
  });
  ids.served = await created("/credentials", { name: "served", kind: "snmp_v2c", community: "served" });
  ids.wrong = await created("/credentials", { name: "not served", kind: "snmp_v2c", community: "nobody-serves-this" });
  ids.answering = await created("/nodes", { name: "answering", address: agent.host, snmp_port: agent.port, credential_id: ids.served });
  ids.silent = await created("/nodes", { name: "silent-agent", address: agent.host, snmp_port: agent.port, credential_id: ids.wrong });
}, 90_000);

afterAll(async () => {
  await k?.stop();
  await stopAllSnmpAgents();
});

describe("a dead SNMP agent on a live node", () => {
  it("raises its own alert after agentDownPolls silent polls, and counts the polls truthfully", async () => {
    const [alert] = await until("the agent alert of silent-agent", async () => ((await agentAlerts()).length ? agentAlerts() : null), 4 * INTERVAL_SECS * 1000);
    expect(alert).toMatchObject({ severity: "warning", state: "unknown", title: "SNMP agent on silent-agent not answering (timeout)" });
    // The node answers ping: no liveness alert, and the answering node has no alert at all.
    const all = (await k.request("GET", "/alerts")).body as ActiveAlert[];
    expect(all.filter((a) => a.node === ids.silent).map((a) => a.metric)).toEqual(["snmp_agent_status"]);
    expect(all.filter((a) => a.node === ids.answering)).toEqual([]);

    expect(await metric('nms_polling_polls_total{pool="default",outcome="snmp_timeout"}')).toBeGreaterThanOrEqual(2);
    expect(await metric('nms_polling_polls_total{pool="default",outcome="ok"}')).toBeGreaterThanOrEqual(2);
    expect(await metric('nms_alerts_active_alerts{severity="warning"}')).toBe(1);
    await until(
      "node states written",
      async () => (await metric('nms_alerts_nodes{state="unknown"}')) === 1 && (await metric('nms_alerts_nodes{state="ok"}')) === 1,
    );
    // What the last poll found is a sample too: 1 = timeout.
    const latest = (await k.request("GET", `/nodes/${ids.silent}/metrics/snmp_agent_status/history`, {})).body as { points?: { value: number }[] };
    expect(latest.points?.at(-1)?.value).toBe(1);
  }, 60_000);

  it("clears when the agent answers again", async () => {
    const put = await k.request("PUT", `/nodes/${ids.silent}`, {
      body: { name: "silent-agent", address: agent.host, snmp_port: agent.port, credential_id: ids.served },
    });
    expect(put.status).toBe(200);
    await until("the agent alert cleared", async () => (await agentAlerts()).length === 0, 4 * INTERVAL_SECS * 1000);
    const history = (await k.request("GET", `/alerts/history?node=${ids.silent}`)).body as { resolved: boolean; title: string | null }[];
    expect(history.map((h) => [h.resolved, h.title])).toEqual(
      expect.arrayContaining([
        [true, "SNMP agent on silent-agent not answering (timeout)"],
        [false, "SNMP agent on silent-agent not answering (timeout)"],
      ]),
    );
    expect(await metric('nms_alerts_active_alerts{severity="warning"}')).toBe(0);
  }, 60_000);
});
