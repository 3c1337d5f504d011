/**
 * Root-cause alerts end to end: the topology test network (snmpsim: a core, two distribution switches, six access
 * devices) is discovered, so each device's upstream path leads to the core (the pool's seed). The core's agent stops
 * and all nine nodes are reported unreachable; the core raises the one root-cause alert, the eight devices behind it
 * raise symptom alerts naming it (GET /alerts symptom_of), a routing rule with root_cause_only sends one notification
 * while a plain rule sends nine; when the core is back, every alert clears.
 *
 * Reachability arrives through polling's sample sink, the path a remote poller's POST /pollers/{id}/samples takes (the
 * embedded poller's ICMP probe cannot fail on loopback addresses). The eight devices are reported down one poll before
 * the core, the order that needs the late marking and the notifications' settle time. In real Chromium, the overview
 * folds the eight under the core's alert and the map rings the core (docs/screenshots/root-cause-*.png).
 */
import { jest } from "@jest/globals";
import type { Browser } from "playwright-core";
import { ensureWebBuilt, launch, openDashboard, screenshot, signIn } from "../dashboard/browser.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { startNetworkAgent, testNetwork, type NetworkAgent } from "../support/topologyNetwork.js";
import { until } from "../support/wait.js";
import { startWebhookServer, type WebhookServer } from "../support/webhookServer.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { dashboardPlugin } from "../../plugins/dashboard/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { emptyBatch } from "../../plugins/polling/poller/wire.js";
import { SampleSink } from "../../plugins/polling/services/SampleSink.js";
import { topologyPlugin } from "../../plugins/topology/index.js";
import { DiscoveryService } from "../../plugins/topology/services/DiscoveryService.js";

jest.setTimeout(180000);

const SETTLE_MS = 1500;
let k: TestKernel;
let agent: NetworkAgent;
let hook: WebhookServer;
let browser: Browser;
const PASSWORD = "root-cause-password-1";
const network = testNetwork();
const ids = new Map<string, string>();

interface ActiveAlert {
  node: string | null;
  node_name: string | null;
  state: string;
  symptom_of: { incident_key: string; node: string; node_name: string | null } | null;
}

async function post(path: string, body: unknown): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

async function report(keys: string[], reachable: boolean): Promise<void> {
  const at = Date.now();
  const reachability = keys.map((key) => ({ node_id: ids.get(key)!, reachable, method: "snmp" as const, at_unix_ms: at }));
  await k
    .context("polling")
    .get(SampleSink)
    .accept({ ...emptyBatch(false), reachability }, { poller_id: "edge-poller", pool: "default" });
}

const unreachableAlerts = async () => ((await k.request("GET", "/alerts")).body as ActiveAlert[]).filter((a) => a.state === "unreachable");
const fires = (path: string) => hook.received.filter((r) => r.path === path && (r.body as { event: string }).event === "fire");
const resolves = (path: string) => hook.received.filter((r) => r.path === path && (r.body as { event: string }).event === "resolve");

beforeAll(async () => {
  ensureWebBuilt();
  hook = await startWebhookServer();
  agent = await startNetworkAgent(network);
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin, topologyPlugin, dashboardPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        alerts: { flushMs: 50 },
        notifications: { pollMs: 100, rootCauseSettleMs: SETTLE_MS },
        topology: { schedule: false, seeds: { default: "127.0.0.21" }, timeoutMs: 1000, retries: 1 },
      },
    },
  });
  for (const d of network) {
    const cred = await post("/credentials", { name: `v2c ${d.key}`, kind: "snmp_v2c", community: d.key });
    ids.set(d.key, await post("/nodes", { name: d.sysName, address: d.address, credential_id: cred, snmp_port: agent.port }));
  }
  const rootHook = await post("/notification-channels", { name: "on-call", kind: "webhook", config: { url: `${hook.url}/root` } });
  const allHook = await post("/notification-channels", { name: "noc log", kind: "webhook", config: { url: `${hook.url}/all` } });
  await post("/routing-rules", { name: "root causes", severity: null, channel_ids: [rootHook], root_cause_only: true });
  await post("/routing-rules", { name: "everything", severity: null, channel_ids: [allHook] });
  await k.kernel.auth.createAccount({ username: "rc-viewer", password: PASSWORD, role: "viewer", scope: "All" });
  browser = await launch();
}, 120000);

afterAll(async () => {
  await browser?.close();
  await k?.stop();
  await agent?.stop();
  await hook?.close();
});

describe("root-cause alerts (snmpsim network)", () => {
  it("raises one root cause for the dead core, eight symptoms naming it, one root-cause notification; restoring clears all", async () => {
    const summary = await k.context("topology").get(DiscoveryService).discover(null, "All");
    expect(summary).toMatchObject({ nodes: 9, walked: 9, failed: 0 });
    const core = ids.get("core")!;
    const behind = network.map((d) => d.key).filter((key) => key !== "core");
    expect(behind).toHaveLength(8);
    const path = await k.request("GET", `/nodes/${ids.get("acc1")}/upstream`);
    expect((path.body as { path: { node_id: string }[] }).path.map((p) => p.node_id)).toEqual([ids.get("dist1"), core]);

    // The core's agent stops (one snmpsimd serves the network: every device goes silent with it) and liveness fails.
    await agent.pause();
    await report(behind, false);
    await until("eight unreachable alerts", async () => (await unreachableAlerts()).length === 8);
    await report(["core"], false);
    const alerts = await until("nine alerts, the eight linked to the core", async () => {
      const a = await unreachableAlerts();
      return a.length === 9 && a.filter((x) => x.symptom_of?.node === core).length === 8 ? a : null;
    });
    const root = alerts.filter((a) => a.symptom_of === null);
    expect(root.map((a) => a.node)).toEqual([core]);
    for (const a of alerts.filter((x) => x.node !== core)) {
      expect(a.symptom_of).toEqual({ incident_key: expect.stringContaining(core), node: core, node_name: "core" });
    }

    // The plain rule sends all nine fires; the root-cause rule, after its settle time, the core's only.
    await until("nine fires on the plain rule", async () => fires("/all").length === 9);
    await until("the core's fire on the root-cause rule", async () => fires("/root").length >= 1);
    await new Promise((r) => setTimeout(r, SETTLE_MS + 1000));
    expect(fires("/root").map((r) => (r.body as { node: string }).node)).toEqual([core]);
    expect(fires("/all")).toHaveLength(9);

    // The overview folds the eight under the core's alert; the map rings the core, and only the core.
    const { page, context } = await openDashboard(browser, k.url);
    await signIn(page, "rc-viewer", PASSWORD);
    const toggle = page.getByTestId("symptoms-toggle");
    await toggle.waitFor();
    expect(await toggle.textContent()).toBe("8 nodes behind it");
    expect(await page.locator("tr[data-symptom-of]").count()).toBe(0);
    expect(await page.locator(`tr[data-node="${core}"]`).count()).toBe(1);
    await toggle.click();
    await page.locator("tr[data-symptom-of]").nth(7).waitFor();
    expect(await page.locator("tr[data-symptom-of]").count()).toBe(8);
    expect(await page.locator("tr[data-symptom-of]").first().textContent()).toContain("(behind core)");
    await screenshot(page, "root-cause-overview");
    await page.goto(`${k.url}/#/map`);
    await page.locator('[data-root-cause="true"]').first().waitFor();
    expect(await page.locator('[data-root-cause="true"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-node")))).toEqual([core]);
    expect(await page.locator('a[data-state="unreachable"]').count()).toBe(9);
    await screenshot(page, "root-cause-map");
    await context.close();

    // The core is back: every node answers again and every alert clears; the root-cause rule sends one recovery.
    await agent.resume();
    await report(["core", ...behind], true);
    await until("no unreachable alert", async () => (await unreachableAlerts()).length === 0);
    await until("nine recoveries on the plain rule", async () => resolves("/all").length === 9);
    await new Promise((r) => setTimeout(r, 1000));
    expect(resolves("/root").map((r) => (r.body as { node: string }).node)).toEqual([core]);
  });
});
