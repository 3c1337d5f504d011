/**
 * Each instrumented plugin's metrics move with real traffic, read from GET /metrics (strictly parsed): the embedded
 * poller polls a real SNMP agent (snmpsim) → polls, poll durations, samples written; the alert engine evaluates them
 * and fires a threshold → transitions; the webhook channel delivers → deliveries by kind and outcome; syslog over UDP
 * → events received per listener, a disabled source's drops; a forwarding destination with a rate limit → forwarded
 * and dropped{reason=rate_limit}; softflowd's NetFlow v9 export → flow datagrams, records and templates.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { flowsPlugin } from "../../plugins/flows/index.js";
import { forwardingPlugin } from "../../plugins/forwarding/index.js";
import { ForwardingTee } from "../../plugins/forwarding/services/ForwardingTee.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { cleanupFlowPeers, flowTempDir, generateTraffic, runSoftflowd, udpSink, writePcap, type UdpSink } from "../support/flowPeers.js";
import { startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../support/snmpAgents.js";
import { sendUdp } from "../support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";
import { startWebhookServer, type WebhookServer } from "../support/webhookServer.js";
import { sampleSum, sampleValue, scrape } from "./exposition.js";

const INTERVAL_SECS = 5;
const COMMUNITY = "metrics-plugins";

let k: TestKernel;
let agent: SnmpsimAgent;
let hook: WebhookServer;
let sink: UdpSink;
let ports: Record<string, number>;

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

/** The scrape's value of one series (0 when absent). */
const value = async (name: string, labels: Record<string, string> = {}) => sampleSum(await scrape(k.url), name, labels);

beforeAll(async () => {
  hook = await startWebhookServer();
  sink = await udpSink();
  agent = await startSnmpsim({
    devices: [
      {
        community: COMMUNITY,
        sysName: "metrics-sw",
        interfaces: [{ name: "eth0", inBytesPerSec: 125_000, outBytesPerSec: 50_000, speedMbps: 1000 }],
        hc: true,
        hostResources: false,
      },
    ],
  });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS },
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: 0, bindAddress: "127.0.0.1" },
      },
    },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: { name: string; port: number }[] };
  ports = Object.fromEntries(listeners.listeners.map((l) => [l.name, l.port]));
}, 90_000);

afterAll(async () => {
  await k?.stop();
  await hook?.close();
  await sink?.close();
  await stopAllSnmpAgents();
  await cleanupFlowPeers();
});

describe("plugin metrics move with real traffic", () => {
  it("polling: polls, poll durations and samples written; alerts: evaluations and a fire; notifications: a webhook delivery", async () => {
    const channel = await created("/notification-channels", { name: "metrics hook", kind: "webhook", config: { url: `${hook.url}/m` } });
    await created("/routing-rules", { name: "all to metrics hook", severity: null, channel_ids: [channel] });
    const credential = await created("/credentials", { name: "metrics v2c", kind: "snmp_v2c", community: COMMUNITY });
    const nodeId = await created("/nodes", { name: "metrics-sw", address: agent.host, snmp_port: agent.port, credential_id: credential });

    await until(
      "polls and samples written",
      async () =>
        (await value("nms_polling_polls_total", { pool: "default", outcome: "ok" })) >= 2 &&
        (await value("nms_polling_samples_written_total", { pool: "default" })) > 0,
      4 * INTERVAL_SECS * 1000,
    );
    const f = await scrape(k.url);
    expect(sampleValue(f, "nms_polling_poll_duration_seconds_count", { pool: "default", outcome: "ok" })).toBeGreaterThanOrEqual(2);
    expect(sampleValue(f, "nms_polling_batches_received_total", { pool: "default", backfill: "false" })).toBeGreaterThanOrEqual(2);
    expect(sampleValue(f, "nms_alerts_engine_samples_received_total")).toBeGreaterThan(0);
    expect(sampleValue(f, "nms_alerts_engine_queue_depth")).toBeGreaterThanOrEqual(0);

    // A threshold under eth0's rate fires; the engine counts the fire and evaluations, the webhook is delivered.
    await created("/thresholds", {
      metric: "if_in_bps",
      scope_level: "interface",
      scope_ids: [`${nodeId}:1`],
      direction: "above",
      warning_above: 100_000,
      dwell_samples: 1,
    });
    await until(
      "the fire counted and delivered",
      async () => (await value("nms_notifications_deliveries_total", { kind: "webhook", outcome: "delivered" })) >= 1,
      4 * INTERVAL_SECS * 1000,
    );
    const g = await scrape(k.url);
    expect(sampleValue(g, "nms_alerts_engine_transitions_total", { kind: "fire" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(g, "nms_alerts_engine_evaluations_total")).toBeGreaterThan(0);
    expect(sampleValue(g, "nms_alerts_engine_open_incidents")).toBeGreaterThanOrEqual(1);
    expect(sampleValue(g, "nms_notifications_send_duration_seconds_count", { kind: "webhook", result: "ok" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(g, "nms_notifications_breakers", { state: "closed" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(g, "nms_notifications_breakers", { state: "open" })).toBe(0);
    expect(hook.received.filter((r) => r.method === "POST").length).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("events and forwarding: received per listener; forwarded and dropped by rate limit per destination", async () => {
    const dest = await created("/forwarding/destinations", {
      name: "metrics relay",
      source_kind: "syslog",
      dest_kind: "syslog_udp",
      target: `127.0.0.1:${sink.port}`,
      rate_limit_per_sec: 1,
    });
    await k.context("forwarding").get(ForwardingTee).reload();
    const before = await value("nms_events_received_total", { listener: "syslog.udp" });
    for (let i = 0; i < 5; i++) await sendUdp(ports["syslog.udp"]!, `<134>1 2026-11-24T12:00:0${i}Z host app - - - metrics line ${i}`);
    await until("5 messages received and teed", async () => {
      const f = await scrape(k.url);
      return (
        sampleSum(f, "nms_events_received_total", { listener: "syslog.udp" }) - before === 5 &&
        sampleSum(f, "nms_forwarding_forwarded_total", { destination: dest }) +
          sampleSum(f, "nms_forwarding_dropped_total", { destination: dest, reason: "rate_limit" }) ===
          5
      );
    });
    const f = await scrape(k.url);
    // One token a second: the first passes, most of the burst is over the limit.
    expect(sampleValue(f, "nms_forwarding_forwarded_total", { destination: dest })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(f, "nms_forwarding_dropped_total", { destination: dest, reason: "rate_limit" })).toBeGreaterThanOrEqual(2);
    expect(sampleValue(f, "nms_forwarding_dropped_total", { destination: dest, reason: "filter" })).toBe(0);
    await until("the written events counted", async () => (await value("nms_events_written_total")) >= 5);
    expect(sampleValue(f, "nms_events_dropped_total", { listener: "syslog.udp", reason: "queue_full" })).toBe(0);
  });

  it("events: a rule's matches are counted by action", async () => {
    await created("/event-rules", { name: "metrics rule", pattern: "metrics-rule-hit", match_kind: "substring", severity: "info" });
    await until("the rule loaded and matching", async () => {
      await sendUdp(ports["syslog.udp"]!, "<134>1 2026-11-24T12:00:00Z host app - - - metrics-rule-hit");
      return sampleSum(await scrape(k.url), "nms_events_rule_matches_total") > 0;
    });
    const f = await scrape(k.url);
    const actions = f.get("nms_events_rule_matches_total")!.samples.map((s) => s.labels.action);
    for (const a of actions) expect(["fired", "cleared", "suppressed", "counted"]).toContain(a);
  });

  it("events: messages of a disabled source are dropped with reason source_disabled", async () => {
    const sources = (await k.request("GET", "/event-sources")).body as { id: string; kind: string }[] | { items?: unknown };
    const list = (Array.isArray(sources) ? sources : ((sources as { items?: { id: string; kind: string }[] }).items ?? [])) as { id: string; kind: string }[];
    const syslog = list.find((s) => s.kind === "syslog");
    expect(syslog).toBeDefined();
    const res = await k.request("PATCH", `/event-sources/${syslog!.id}`, { body: { enabled: false } });
    expect(res.status).toBe(200);
    await until("the source disabled in the pipeline", async () => {
      await sendUdp(ports["syslog.udp"]!, "<134>1 2026-11-24T12:00:00Z host app - - - while disabled");
      return (await value("nms_events_dropped_total", { listener: "syslog.udp", reason: "source_disabled" })) > 0;
    });
    expect((await k.request("PATCH", `/event-sources/${syslog!.id}`, { body: { enabled: true } })).status).toBe(200);
  });

  it("flows: softflowd's NetFlow v9 export moves datagrams, records and the templates known", async () => {
    const traffic = generateTraffic(40, { v6Every: 4, startMs: Date.now() - 120_000 });
    const pcap = join(flowTempDir(), "m.pcap");
    writePcap(pcap, traffic.packets);
    await runSoftflowd({ version: 9, pcap, port: ports["flows.udp"]! });
    const counted = ["nms_flows_datagrams_received_total", "nms_flows_records_total", "nms_flows_templates_known"];
    let seen: number[] = [];
    await until(
      "the datagrams and records counted",
      async () => {
        const f = await scrape(k.url);
        seen = counted.map((n) => sampleSum(f, n));
        return seen.every((v) => v > 0);
      },
      25_000,
      () => `${counted.join(", ")}: ${seen.join(", ")}`,
    );
    const f = await scrape(k.url);
    expect(sampleValue(f, "nms_flows_decode_errors_total")).toBe(0);
  });

  it("documents every nms_ metric family it serves in docs/metrics.md", async () => {
    const doc = readFileSync(new URL("../../docs/metrics.md", import.meta.url), "utf8");
    const names = [...(await scrape(k.url)).keys()].filter((n) => n.startsWith("nms_"));
    expect(names.length).toBeGreaterThan(40);
    expect(names.filter((n) => !doc.includes(`\`${n}\``))).toEqual([]);
  });
});
