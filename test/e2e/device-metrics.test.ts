/**
 * Device metrics for Prometheus and Grafana, end to end: two devices (snmpsim, v2c, growing counters, HOST-RESOURCES)
 * in two folders and this machine's own Net-SNMP snmpd, polled by the embedded poller; GET /api/v1/metrics/devices gives what was measured in the exposition
 * format (promtool accepts it), honours the caller's folder scope, and the real Prometheus scrapes it with a viewer
 * token scoped to one folder, storing that folder's devices only. Every query of the shipped device dashboard runs.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { startPrometheus, type RunningPrometheus } from "../support/prometheus.js";
import { startSnmpd, startSnmpsim, stopAllSnmpAgents, type SnmpdAgent, type SnmpsimAgent } from "../support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";

const INTERVAL_SECS = 5;
/** eth0 of core-a grows by 125 000 B/s = 1 Mbit/s. */
const ETH0_BPS = 1_000_000;

let k: TestKernel;
let agent: SnmpsimAgent;
let snmpd: SnmpdAgent;
let prom: RunningPrometheus | undefined;
const ids: Record<string, string> = {};

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

async function exposition(token?: string | null): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${k.url}/api/v1/metrics/devices`, { headers: token === null ? {} : { authorization: `Bearer ${token ?? k.adminToken}` } });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** The value of the one sample line of `family` whose labels include every `pair`, or undefined. */
function sample(text: string, family: string, pairs: Record<string, string>): number | undefined {
  const line = text
    .split("\n")
    .find(
      (l) => (l.startsWith(`${family}{`) || l.startsWith(`${family} `)) && Object.entries(pairs).every(([name, value]) => l.includes(`${name}="${value}"`)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

beforeAll(async () => {
  agent = await startSnmpsim({
    devices: [
      {
        community: "dev-a",
        sysName: "core-a",
        interfaces: [
          { name: "eth0", inBytesPerSec: ETH0_BPS / 8, outBytesPerSec: 50_000, speedMbps: 1000 },
          { name: "eth1", inBytesPerSec: 1_000, outBytesPerSec: 1_000, speedMbps: 100, up: false },
        ],
        hc: true,
        hostResources: true,
      },
      { community: "dev-b", sysName: "edge-b", interfaces: [{ name: "ge-0/0/0", inBytesPerSec: 10_000, outBytesPerSec: 10_000, speedMbps: 1000 }], hc: true },
    ],
  });
  // Net-SNMP's snmpd serving this machine's real interfaces (loopback traffic included) as a third device.
  snmpd = await startSnmpd({ sysName: "this-host" });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS } } },
  });
  ids.siteA = await created("/node-groups", { name: "Site A" });
  ids.siteB = await created("/node-groups", { name: "Site B" });
  for (const [name, community, folder] of [
    ["core-a", "dev-a", ids.siteA],
    ["edge-b", "dev-b", ids.siteB],
  ]) {
    const credential = await created("/credentials", { name: `v2c ${name}`, kind: "snmp_v2c", community });
    ids[name] = await created("/nodes", { name, address: agent.host, snmp_port: agent.port, credential_id: credential, group_id: folder });
  }
  const real = await created("/credentials", { name: "v2c this host", kind: "snmp_v2c", community: snmpd.community });
  ids["this-host"] = await created("/nodes", { name: "this-host", address: "127.0.0.1", snmp_port: snmpd.port, credential_id: real, group_id: ids.siteA });
}, 90_000);

afterAll(async () => {
  await prom?.stop();
  await k?.stop();
  await stopAllSnmpAgents();
});

describe("device metrics", () => {
  it("exposes what the pollers measured, labelled by node, folder and interface, in a format promtool accepts", async () => {
    const { text, type, status } = await until(
      "rates of both devices in the exposition",
      async () => {
        const e = await exposition();
        const a = sample(e.text, "nms_device_interface_in_bytes_per_second", { node: "core-a", interface: "eth0" });
        const b = sample(e.text, "nms_device_interface_in_bytes_per_second", { node: "edge-b" });
        return a && b ? e : null;
      },
      3 * INTERVAL_SECS * 1000 + 5000,
    );
    expect(status).toBe(200);
    expect(type).toBe("text/plain; version=0.0.4; charset=utf-8");
    const eth0 = sample(text, "nms_device_interface_in_bytes_per_second", {
      node: "core-a",
      node_id: ids["core-a"],
      folder: "Site A",
      interface: "eth0",
      ifindex: "1",
    })!;
    expect(eth0 * 8).toBeGreaterThan(ETH0_BPS * 0.75);
    expect(eth0 * 8).toBeLessThan(ETH0_BPS * 1.25);
    expect(sample(text, "nms_device_interface_up", { node: "core-a", interface: "eth1" })).toBe(0);
    expect(sample(text, "nms_device_interface_up", { node: "core-a", interface: "eth0" })).toBe(1);
    // HOST-RESOURCES as ratios: the recording's processors are at 17 % and 42 %.
    expect(sample(text, "nms_device_cpu_load_ratio", { node: "core-a", row: "196609" })).toBeCloseTo(0.42, 5);
    expect(sample(text, "nms_device_storage_used_ratio", { node: "core-a", row_name: "/" })).toBeCloseTo(0.25, 5);
    expect(sample(text, "nms_device_uptime_seconds", { node: "core-a" })).toBeGreaterThan(0);
    const newest = sample(text, "nms_device_last_sample_timestamp_seconds", { node: "edge-b", folder: "Site B" })!;
    expect(Math.abs(Date.now() / 1000 - newest)).toBeLessThan(3 * INTERVAL_SECS);
    expect(sample(text, "nms_device_series_truncated", {})).toBe(0);
    // Raw counters stay out: their rates are there.
    expect(text).not.toMatch(/if_(hc_)?in_octets/);

    const check = spawnSync("/usr/bin/promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect({ status: check.status, out: check.stdout + check.stderr }).toEqual({ status: 0, out: "" });
  }, 40_000);

  it("honours the caller's folder scope and asks for a token", async () => {
    expect((await exposition(null)).status).toBe(401);
    const scoped = await exposition(await k.token("viewer", { folders: [ids.siteA] }));
    expect(scoped.status).toBe(200);
    expect(scoped.text).toContain('node="core-a"');
    expect(scoped.text).not.toContain('node="edge-b"');
    const other = await exposition(await k.token("viewer", { folders: [ids.siteB] }));
    expect(other.text).toContain('node="edge-b"');
    expect(other.text).not.toContain('node="core-a"');
  });

  it("is scraped by the real Prometheus with a folder-scoped viewer token, and every query of the device dashboard runs", async () => {
    const token = await k.token("viewer", { folders: [ids.siteA] }, "prometheus-site-a");
    prom = await startPrometheus({ target: new URL(k.url).host, metricsPath: "/api/v1/metrics/devices", token, job: "nms-devices" });
    const scraped = await until(
      "core-a's eth0 rate in Prometheus",
      async () => prom!.query('8 * nms_device_interface_in_bytes_per_second{job="nms-devices",node="core-a",interface="eth0"}'),
      30_000,
      prom.log,
    );
    expect(scraped).toBeGreaterThan(ETH0_BPS * 0.75);
    expect(await prom.query('up{job="nms-devices"}')).toBe(1);
    // An interface rate of the node polled from the real snmpd, answered by a PromQL query: its loopback "lo", which
    // carries at least this very scrape's traffic, so the rate is above zero.
    const lo = await until(
      "this-host's lo rate in Prometheus",
      async () => prom!.query('max_over_time(nms_device_interface_in_bytes_per_second{job="nms-devices",node="this-host",interface="lo"}[1m])'),
      40_000,
      prom.log,
    );
    expect(lo).toBeGreaterThan(0);
    expect(await prom.query('count(nms_device_last_sample_timestamp_seconds{node="edge-b"})')).toBeNull();

    const dashboard = JSON.parse(readFileSync(new URL("../../docs/grafana/nms-devices.json", import.meta.url), "utf8")) as {
      panels: { targets?: { expr: string }[] }[];
      templating: { list: { query: { query: string } }[] };
    };
    const doc = readFileSync(new URL("../../docs/metrics.md", import.meta.url), "utf8");
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(12);
    for (const expr of exprs) {
      const concrete = expr.replace(/\$(folder|node|interface)/g, ".*");
      expect({ expr, status: await prom.queryStatus(concrete) }).toEqual({ expr, status: 200 });
      for (const name of expr.match(/\bnms_device_[a-z0-9_]+/g) ?? [])
        expect({ name, documented: doc.includes(`\`${name}\``) }).toEqual({ name, documented: true });
    }
    // The panels show data for the scraped folder.
    expect(await prom.query(`max(${exprs.find((e) => e.startsWith("nms_device_cpu_load_ratio"))!.replace(/\$(folder|node|interface)/g, ".*")})`)).toBeCloseTo(
      0.42,
      5,
    );
  }, 60_000);
});
