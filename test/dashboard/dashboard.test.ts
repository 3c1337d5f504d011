/**
 * The dashboard in a real browser (Debian's chromium through playwright-core) against a real kernel polling real SNMP
 * agents (snmpsim): sign in with a session, a polled node's facts and interfaces, an alert fired by a threshold made in
 * the UI appearing live in another person's browser, an ack from the UI reaching that browser live, a folder-scoped
 * account seeing only its folder in every view, a form showing the API's validation error beside its field, sign out.
 * It writes the screenshots of docs/screenshots/.
 */
import type { Browser, Page } from "playwright-core";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { dashboardPlugin } from "../../plugins/dashboard/index.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";
import { ensureWebBuilt, launch, openDashboard, screenshot, signIn } from "./browser.js";

const INTERVAL_SECS = 5;
const PASSWORD = "dashboard-password-1";

let k: TestKernel;
let agent: SnmpsimAgent;
let browser: Browser;
let nodeA: string;
let nodeB: string;
let folderA: string;
let operatorPage: Page;
let viewerPage: Page;

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

beforeAll(async () => {
  ensureWebBuilt();
  agent = await startSnmpsim({
    devices: [
      {
        community: "dash-a",
        sysName: "dash-a",
        interfaces: [
          { name: "eth0", inBytesPerSec: 125_000, outBytesPerSec: 20_000, speedMbps: 1000 },
          { name: "eth1", inBytesPerSec: 1000, outBytesPerSec: 1000, speedMbps: 100 },
        ],
        hc: true,
        hostResources: false,
      },
      {
        community: "dash-b",
        sysName: "dash-b",
        interfaces: [{ name: "ge0", inBytesPerSec: 250_000, outBytesPerSec: 10_000, speedMbps: 1000 }],
        hc: true,
        hostResources: false,
      },
    ],
  });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, dashboardPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS } } },
  });
  folderA = await created("/node-groups", { name: "Site Alpha" });
  const folderB = await created("/node-groups", { name: "Site Bravo" });
  const credA = await created("/credentials", { name: "dash a", kind: "snmp_v2c", community: "dash-a" });
  const credB = await created("/credentials", { name: "dash b", kind: "snmp_v2c", community: "dash-b" });
  nodeA = await created("/nodes", { name: "dash-a", address: agent.host, snmp_port: agent.port, credential_id: credA, group_id: folderA });
  nodeB = await created("/nodes", { name: "dash-b", address: agent.host, snmp_port: agent.port, credential_id: credB, group_id: folderB });
  await k.kernel.auth.createAccount({ username: "dash-op", password: PASSWORD, role: "operator", scope: "All" });
  await k.kernel.auth.createAccount({ username: "dash-viewer", password: PASSWORD, role: "viewer", scope: "All" });
  await k.kernel.auth.createAccount({ username: "dash-scoped", password: PASSWORD, role: "viewer", scope: { folders: [folderA] } });
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await k?.stop();
  await stopAllSnmpAgents();
});

describe("dashboard in chromium", () => {
  it("asks for a sign-in, signs in with a session kept in memory only (no storage, no readable cookie)", async () => {
    ({ page: operatorPage } = await openDashboard(browser, k.url));
    await operatorPage.getByRole("heading", { name: "Sign in" }).waitFor();
    await operatorPage.getByLabel("Username").fill("dash-op");
    await operatorPage.getByLabel("Password").fill("wrong-password");
    await operatorPage.getByRole("button", { name: "Sign in" }).click();
    await operatorPage.getByRole("alert").waitFor();
    await signIn(operatorPage, "dash-op", PASSWORD);
    expect(await operatorPage.getByTestId("whoami").textContent()).toContain("dash-op (operator)");
    const stored = await operatorPage.evaluate("({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })");
    expect(stored).toEqual({ local: 0, session: 0, cookie: "" });
  }, 30_000);

  it("shows a node that was really polled: its facts written back from SNMP, its interfaces with rates, a rate chart", async () => {
    await until(
      "both nodes' interfaces to have rates",
      async () => {
        const a = await k.request("GET", `/nodes/${nodeA}/interfaces`);
        const b = await k.request("GET", `/nodes/${nodeB}/interfaces`);
        const ok = (r: typeof a) => (r.body as { in_bps: number | null }[]).some((i) => (i.in_bps ?? 0) > 0);
        return ok(a) && ok(b) ? true : null;
      },
      3 * INTERVAL_SECS * 1000 + 10_000,
    );
    await operatorPage.goto(`${k.url}/#/node/${nodeA}`);
    await operatorPage.getByTestId("sys-name").filter({ hasText: "dash-a" }).waitFor();
    const row = operatorPage.locator('[data-testid="interfaces"] tr[data-ifindex="1"]');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/eth0.*up.*\d+(\.\d+)? (k|M)bit\/s/);
    await row.getByRole("button", { name: "Rates" }).click();
    await operatorPage.getByRole("img", { name: /Interface 1 in and out/ }).waitFor();
    await screenshot(operatorPage, "node");
  }, 60_000);

  it("fires an alert from a threshold made in the UI: it appears live in another person's open overview, without a reload", async () => {
    ({ page: viewerPage } = await openDashboard(browser, k.url));
    await signIn(viewerPage, "dash-viewer", PASSWORD);
    await viewerPage.getByText("No active alerts.").waitFor();
    await viewerPage.evaluate("window.notReloaded = true");

    await operatorPage.goto(`${k.url}/#/settings/thresholds`);
    await operatorPage.getByLabel("Metric *").fill("if_in_bps");
    await operatorPage.getByLabel("Scope level").selectOption("global");
    await operatorPage.getByLabel("Warning above").fill("500000");
    await operatorPage.getByRole("button", { name: "Create threshold" }).click();
    await operatorPage.getByRole("status").filter({ hasText: "Saved." }).waitFor();

    const rowA = viewerPage.locator(`tr[data-node="${nodeA}"]`);
    await rowA.first().waitFor({ timeout: 3 * INTERVAL_SECS * 1000 + 10_000 });
    expect(await rowA.first().textContent()).toContain("dash-a");
    expect(await viewerPage.evaluate("window.notReloaded")).toBe(true);
    expect(Number(await viewerPage.getByTestId("count-warning").locator("strong").textContent())).toBeGreaterThanOrEqual(1);
    // A viewer has no AckAlerts: no ack button.
    expect(await rowA.first().getByRole("button").count()).toBe(0);
  }, 60_000);

  it("acks from the operator's list; the ack reaches the viewer's open overview live", async () => {
    await operatorPage.goto(`${k.url}/#/overview`);
    const row = operatorPage.locator(`tr[data-node="${nodeA}"]`).first();
    await row.waitFor({ timeout: 15_000 });
    await row.getByRole("button", { name: /^Acknowledge/ }).click();
    await row.getByTestId("acked").waitFor();
    await viewerPage.locator(`tr[data-node="${nodeA}"]`).first().getByTestId("acked").filter({ hasText: "acked by dash-op" }).waitFor({ timeout: 10_000 });
    expect(await viewerPage.evaluate("window.notReloaded")).toBe(true);
    const alerts = (await k.request("GET", "/alerts")).body as { node: string; acked: { by: string } | null }[];
    expect(alerts.find((a) => a.node === nodeA)?.acked?.by).toBe("dash-op");
    await screenshot(operatorPage, "overview");
  }, 30_000);

  it("shows a folder-scoped account its folder only, in every view", async () => {
    await until(
      "an alert on node B",
      async () => (((await k.request("GET", "/alerts")).body as { node: string }[]).some((a) => a.node === nodeB) ? true : null),
      30_000,
    );
    const { page } = await openDashboard(browser, k.url);
    await signIn(page, "dash-scoped", PASSWORD);
    // Overview: node A's alert, never node B's.
    await page.locator(`tr[data-node="${nodeA}"]`).first().waitFor();
    expect(await page.locator(`tr[data-node="${nodeB}"]`).count()).toBe(0);
    expect(await page.content()).not.toContain("dash-b");
    // Folders: Site Alpha and its node; no Site Bravo.
    await page.goto(`${k.url}/#/folders`);
    await page.locator(`[data-node="${nodeA}"]`).waitFor();
    const folders = await page.locator("main").textContent();
    expect(folders).toContain("Site Alpha");
    expect(folders).not.toContain("Site Bravo");
    expect(folders).not.toContain("dash-b");
    // Top interfaces: node A's ports only.
    await page.goto(`${k.url}/#/top`);
    await page.getByTestId("top-n").getByText("dash-a").first().waitFor();
    expect(await page.getByTestId("top-n").textContent()).not.toContain("dash-b");
    // Node B's page: not found, nothing of it shown.
    await page.goto(`${k.url}/#/node/${nodeB}`);
    await page.getByRole("alert").first().waitFor();
    expect(await page.locator("main").textContent()).not.toContain("dash-b");
    // Events: nothing of node B (its folder's live events never reach this socket).
    await page.goto(`${k.url}/#/events`);
    await page.getByRole("heading", { name: "Live tail" }).waitFor();
    expect(await page.locator("main").textContent()).not.toContain("dash-b");
    await page.context().close();
  }, 60_000);

  it("shows the API's validation error next to the field it names, marked aria-invalid", async () => {
    await operatorPage.goto(`${k.url}/#/settings/thresholds`);
    await operatorPage.getByLabel("Metric *").fill("if_in_bps");
    await operatorPage.getByLabel("Warning above").fill("lots");
    await operatorPage.getByRole("button", { name: "Create threshold" }).click();
    const error = operatorPage.locator("#threshold-form-warning_above-error");
    await error.waitFor();
    expect(await error.textContent()).toContain("warning_above");
    expect(await operatorPage.getByLabel("Warning above").getAttribute("aria-invalid")).toBe("true");

    await operatorPage.getByLabel("Warning above").fill("1000");
    await operatorPage.getByLabel("Metric *").fill("if_in_octets");
    await operatorPage.getByRole("button", { name: "Create threshold" }).click();
    await operatorPage.locator("#threshold-form-metric-error").filter({ hasText: "raw monotonic counter" }).waitFor();
    await screenshot(operatorPage, "thresholds-form-error");
  }, 30_000);

  it("renders the other views (folders, events, top-N, pollers) and fits a phone-width screen", async () => {
    for (const [route, name, ready] of [
      ["folders", "folders", `[data-node="${nodeA}"]`],
      ["events", "events", "text=Live tail"],
      ["top", "top-interfaces", '[data-testid="top-n"] li'],
      ["pollers", "pollers", "text=Hosts (core and pollers)"],
    ] as const) {
      await operatorPage.goto(`${k.url}/#/${route}`);
      await operatorPage.locator(ready).first().waitFor();
      await screenshot(operatorPage, name);
    }
    const { context, page } = await openDashboard(browser, k.url, { width: 390, height: 844 });
    await signIn(page, "dash-op", PASSWORD);
    await page.locator(`tr[data-node="${nodeA}"]`).first().waitFor();
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    await page.getByRole("button", { name: "Menu" }).click();
    await page.getByRole("link", { name: "Folders" }).click();
    await page.locator(`[data-node="${nodeA}"]`).waitFor();
    await screenshot(page, "phone-folders");
    await context.close();
  }, 60_000);

  it("is keyboard-usable: a skip link first, then the views' links; an ack works with the keyboard alone", async () => {
    await operatorPage.goto(`${k.url}/#/overview`);
    const row = operatorPage.locator(`tr[data-node="${nodeA}"]`).first();
    await row.getByTestId("acked").waitFor();
    const first = await operatorPage.evaluate('document.querySelector("a[href], button, input, select, textarea")?.textContent');
    expect(first).toBe("Skip to content");
    await operatorPage.focus("a.skip");
    await operatorPage.keyboard.press("Enter");
    expect(await operatorPage.evaluate("document.activeElement?.id")).toBe("content");
    // Tab through the overview to the row's ack button and press it: the ack is cleared.
    for (let i = 0; i < 30; i++) {
      await operatorPage.keyboard.press("Tab");
      const label = await operatorPage.evaluate<string>('document.activeElement?.getAttribute("aria-label") ?? ""');
      if (label.startsWith("Clear ack of")) break;
    }
    expect(await operatorPage.evaluate('document.activeElement?.closest("tr")?.getAttribute("data-node")')).toBe(nodeA);
    await operatorPage.keyboard.press("Enter");
    await until("the ack to be cleared", async () => ((await row.getByTestId("acked").count()) === 0 ? true : null), 10_000);
  }, 30_000);

  it("signs out: the session ends on the server and the sign-in form is back", async () => {
    let token: string | null = null;
    operatorPage.on("request", (r) => {
      const auth = r.headers()["authorization"];
      if (auth && r.url().includes("/api/v1/")) token = auth.replace(/^Bearer /, "");
    });
    await operatorPage.goto(`${k.url}/#/folders`);
    await operatorPage.locator(`[data-node="${nodeA}"]`).waitFor();
    expect(token).not.toBeNull();
    expect((await k.request("GET", "/auth/me", { token })).status).toBe(200);
    await operatorPage.getByRole("button", { name: "Sign out" }).click();
    await operatorPage.getByRole("heading", { name: "Sign in" }).waitFor();
    await until("the session to end", async () => ((await k.request("GET", "/auth/me", { token })).status === 401 ? true : null), 5000);
  }, 20_000);
});
