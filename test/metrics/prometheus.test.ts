/**
 * The real Prometheus (Debian's /usr/bin/prometheus) scrapes a test kernel's GET /metrics on loopback every second,
 * with the bearer token of metrics.access "token" (the scrape config docs/metrics.md shows): `up` is 1, and counters
 * move in Prometheus's own storage as HTTP requests are made and syslog reaches the events listener.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { eventsPlugin } from "../../plugins/events/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { startPrometheus, type RunningPrometheus } from "../support/prometheus.js";
import { sendUdp } from "../support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";

const TOKEN = "prometheus-scrape-token-0123456789";

let k: TestKernel;
let prom: RunningPrometheus;
let syslogPort: number;

const query = (expr: string) => prom.query(expr);

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    env: { NMS_METRICS_ACCESS: "token", NMS_METRICS_TOKEN: TOKEN },
    overrides: { pluginConfig: { events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 } } },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: { name: string; port: number }[] };
  syslogPort = listeners.listeners.find((l) => l.name === "syslog.udp")!.port;
  prom = await startPrometheus({ target: new URL(k.url).host, metricsPath: "/metrics", token: TOKEN });
}, 90_000);

afterAll(async () => {
  await prom?.stop();
  await k?.stop();
});

describe("scraped by the real Prometheus", () => {
  it("sees the target up, with the bearer token of metrics.access token", async () => {
    await until("up == 1", async () => (await query('up{job="nms"}')) === 1, 30_000, prom.log);
    expect(await query("nms_build_info")).toBe(1);
    // It stored the kernel's and the process's series.
    expect(await query("nms_realtime_connections")).toBe(0);
    expect(await query("process_resident_memory_bytes")).toBeGreaterThan(0);
  }, 40_000);

  it("sees the HTTP request counter move as requests are made", async () => {
    const series = 'sum(nms_http_request_duration_seconds_count{route="/api/v1/nodes",method="GET",status="200"})';
    for (let i = 0; i < 7; i++) expect((await k.request("GET", "/nodes")).status).toBe(200);
    await until("7 GET /nodes counted", async () => (await query(series)) === 7, 20_000);
    for (let i = 0; i < 3; i++) await k.request("GET", "/nodes");
    await until("10 GET /nodes counted", async () => (await query(series)) === 10, 20_000);
  }, 45_000);

  it("sees events received move as syslog reaches the events listener", async () => {
    const series = 'nms_events_received_total{listener="syslog.udp"}';
    const before = (await query(series)) ?? 0;
    for (let i = 0; i < 12; i++) await sendUdp(syslogPort, `<134>1 2026-11-24T12:00:00Z host app - - - scraped ${i}`);
    await until("12 more messages counted", async () => (await query(series)) === before + 12, 20_000);
    await until("the events written", async () => ((await query("nms_events_written_total")) ?? 0) >= 12, 20_000);
  }, 45_000);

  it("serves an exposition promtool check metrics accepts (names, suffixes, help texts)", async () => {
    const res = await fetch(`${k.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await res.text();
    expect(text).toContain("nodejs_active_handles{");
    const check = spawnSync("/usr/bin/promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect({ status: check.status, out: check.stdout + check.stderr }).toEqual({ status: 0, out: "" });
    // The check can fail: a gauge named like a counter is refused.
    const bad = spawnSync("/usr/bin/promtool", ["check", "metrics"], { input: "# HELP x_total a gauge\n# TYPE x_total gauge\nx_total 1\n", encoding: "utf8" });
    expect(bad.status).not.toBe(0);
  });

  it("accepts every query of the shipped Grafana dashboard, each naming a metric docs/metrics.md documents", async () => {
    const dashboard = JSON.parse(readFileSync(new URL("../../docs/grafana/nms-core.json", import.meta.url), "utf8")) as {
      panels: { targets?: { expr: string }[] }[];
    };
    const doc = readFileSync(new URL("../../docs/metrics.md", import.meta.url), "utf8");
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    for (const expr of exprs) {
      const concrete = expr.replace(/\$job|\$instance/g, ".*").replace(/\$__rate_interval/g, "1m");
      expect({ expr, status: await prom.queryStatus(concrete) }).toEqual({ expr, status: 200 });
      for (const name of expr.match(/\bnms_[a-z0-9_]+/g) ?? []) {
        const base = name.replace(/_(bucket|count|sum)$/, "");
        expect({ name, documented: doc.includes(`\`${base}\``) }).toEqual({ name, documented: true });
      }
    }
  });
});
