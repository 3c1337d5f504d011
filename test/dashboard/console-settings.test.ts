/**
 * The settings screens in a real browser (Debian's chromium) against a real kernel polling a real SNMP agent
 * (snmpsim): a threshold's bound edited with pickers and applied by the engine (a polled value that crossed nothing
 * now fires), a channel of each kind made and edited through its form with its secret never shown and kept when not
 * retyped (proved by test sends to local sinks that check it), an event rule's node picked by name, a routing rule's
 * channels changed, a forwarding destination edited, report and analysis schedules made, edited and deleted; a viewer
 * sees no edit controls, a folder-scoped account only what the API lets it. Writes docs/screenshots/console-settings-*.
 */
import type { Browser, Page } from "playwright-core";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { analysisPlugin } from "../../plugins/analysis/index.js";
import { dashboardPlugin } from "../../plugins/dashboard/index.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { flowsPlugin } from "../../plugins/flows/index.js";
import { forwardingPlugin } from "../../plugins/forwarding/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { reportsPlugin } from "../../plugins/reports/index.js";
import { startPagerServer, type PagerServer } from "../support/pagerServer.js";
import { startServicedeskServer, type ServicedeskServer } from "../support/servicedeskServer.js";
import { startSmtpServer, type SmtpTestServer } from "../support/smtpServer.js";
import { startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";
import { startWebhookServer, type WebhookServer } from "../support/webhookServer.js";
import { ensureWebBuilt, launch, openDashboard, screenshot, signIn } from "./browser.js";

const INTERVAL_SECS = 5;
const PASSWORD = "settings-password-1";
// Secrets the sinks check; none may ever appear in a page or an API answer.
const BEARER = "bearer-secret-4f1c9e";
const ROUTING_KEY = "routing-secret-7d2a51";
const SD_PASSWORD = "servicedesk-secret-93be";
const SMTP_PASSWORD = "smtp-secret-c0ffee42";
const COMMUNITY = "community-secret-5e5e";
const SECRETS = [BEARER, ROUTING_KEY, SD_PASSWORD, SMTP_PASSWORD, COMMUNITY];

let k: TestKernel;
let agent: SnmpsimAgent;
let browser: Browser;
let page: Page;
let nodeA: string;
let folderA: string;
let hook: WebhookServer;
let pager: PagerServer;
let desk: ServicedeskServer;
let smtp: SmtpTestServer;
const channelIds: Record<string, string> = {};

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

async function get<T>(path: string): Promise<T> {
  const res = await k.request("GET", path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

/** Types `text` into a picker and chooses the option whose text starts with `choice`. */
async function pick(p: Page, selector: string, text: string, choice: string) {
  const box = p.locator(selector);
  await box.click();
  await box.fill(text);
  const option = p
    .locator(`#${(await box.getAttribute("aria-controls"))!} [role=option]`)
    .filter({ hasText: choice })
    .first();
  await option.waitFor();
  await option.dispatchEvent("mousedown");
}

/** No secret anywhere in the page's HTML (values of inputs included). */
async function expectNoSecret(p: Page) {
  const html = await p.content();
  const values = await p.evaluate<string>('[...document.querySelectorAll("input, textarea")].map((e) => e.value).join("\\n")');
  for (const s of SECRETS) {
    expect(html).not.toContain(s);
    expect(values).not.toContain(s);
  }
}

async function saved(p: Page) {
  await p.getByRole("status").filter({ hasText: "Saved." }).first().waitFor();
}

beforeAll(async () => {
  ensureWebBuilt();
  agent = await startSnmpsim({
    devices: [
      {
        community: "set-a",
        sysName: "set-a",
        interfaces: [{ name: "eth0", inBytesPerSec: 125_000, outBytesPerSec: 20_000, speedMbps: 1000 }],
        hc: true,
        hostResources: false,
      },
    ],
  });
  [hook, pager, desk, smtp] = await Promise.all([
    startWebhookServer(),
    startPagerServer([ROUTING_KEY]),
    startServicedeskServer({ username: "nms", password: SD_PASSWORD }),
    startSmtpServer({ mode: "starttls", auth: { username: "mailer", password: SMTP_PASSWORD } }),
  ]);
  k = await startTestKernel({
    plugins: [
      inventoryPlugin,
      pollingPlugin,
      alertsPlugin,
      eventsPlugin,
      flowsPlugin,
      notificationsPlugin,
      forwardingPlugin,
      reportsPlugin,
      analysisPlugin,
      dashboardPlugin,
    ],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS },
        flows: { udp: null },
        notifications: { pollMs: 100 },
      },
    },
  });
  folderA = await created("/node-groups", { name: "Site Alpha" });
  const folderB = await created("/node-groups", { name: "Site Bravo" });
  const cred = await created("/credentials", { name: "set a", kind: "snmp_v2c", community: "set-a" });
  nodeA = await created("/nodes", { name: "set-a", address: agent.host, snmp_port: agent.port, credential_id: cred, group_id: folderA });
  // Node B is never polled (no credential): it only has to exist, in the other folder.
  await created("/nodes", { name: "bravo-box", address: "127.0.0.9", group_id: folderB });
  await k.kernel.auth.createAccount({ username: "set-admin", password: PASSWORD, role: "admin", scope: "All" });
  await k.kernel.auth.createAccount({ username: "set-viewer", password: PASSWORD, role: "viewer", scope: "All" });
  await k.kernel.auth.createAccount({ username: "set-scoped", password: PASSWORD, role: "operator", scope: { folders: [folderA] } });
  browser = await launch();
  ({ page } = await openDashboard(browser, k.url));
  await signIn(page, "set-admin", PASSWORD);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await k?.stop();
  await stopAllSnmpAgents();
  await Promise.all([hook?.close(), pager?.close(), desk?.close(), smtp?.close()]);
});

describe("settings in chromium", () => {
  it("edits a threshold with pickers: the new bound and scope are applied by the engine (a value that crossed nothing fires)", async () => {
    const rule = await created("/thresholds", { metric: "if_in_bps", scope_level: "node", scope_ids: [nodeA], warning_above: 1e12 });
    // Polled, with the rule in place, for two more intervals: no alert.
    await until(
      "node A's interface to have a rate",
      async () => ((await get<{ in_bps: number | null }[]>(`/nodes/${nodeA}/interfaces`)).some((i) => (i.in_bps ?? 0) > 0) ? true : null),
      3 * INTERVAL_SECS * 1000 + 10_000,
    );
    await new Promise((r) => setTimeout(r, 2 * INTERVAL_SECS * 1000));
    expect((await get<{ node: string }[]>("/alerts")).filter((a) => a.node === nodeA)).toEqual([]);

    await page.goto(`${k.url}/#/settings/thresholds`);
    const row = page.locator(`tr[data-threshold="${rule}"]`);
    await row.getByText("set-a").waitFor(); // the node's name, not its id
    expect(await row.textContent()).not.toContain(nodeA);
    await row.getByRole("button", { name: "Edit threshold if_in_bps" }).click();
    const form = page.locator("#threshold-edit");
    await form
      .locator('.chips li[data-id="' + nodeA + '"]')
      .filter({ hasText: "set-a" })
      .waitFor();
    expect(await form.locator("#threshold-edit-warning_above").inputValue()).toBe("1000000000000");
    // Scope: the folder, picked by name.
    await form.locator("#threshold-edit-scope_level").selectOption("folder");
    await pick(page, "#threshold-edit-scope_ids", "Alpha", "Site Alpha");
    await form.locator('.chips li[data-id="' + folderA + '"]').waitFor();
    await form.locator("#threshold-edit-warning_above").fill("500000");
    await form.locator("#threshold-edit-critical_above").fill("1e12");
    await screenshot(page, "console-settings-threshold-edit");
    await form.getByRole("button", { name: "Save threshold" }).click();
    await row.getByText("Site Alpha").waitFor();
    expect(await row.textContent()).toContain("≥ 500000");

    const stored = await get<{ scope_level: string; scope_ids: string[]; warning_above: number }>(`/thresholds/${rule}`);
    expect(stored).toMatchObject({ scope_level: "folder", scope_ids: [folderA], warning_above: 500000 });
    const alert = await until(
      "the edited rule to fire on node A",
      async () =>
        (await get<{ node: string; check: string; severity: string; threshold_value: number | null }[]>("/alerts")).find((a) => a.node === nodeA) ?? null,
      3 * INTERVAL_SECS * 1000 + 10_000,
    );
    expect(alert).toMatchObject({ check: rule, severity: "warning" });
  }, 90_000);

  it("shows the API's 400 next to the field in the edit form", async () => {
    await page.goto(`${k.url}/#/settings/thresholds`);
    await page.getByRole("button", { name: "Edit threshold if_in_bps" }).first().click();
    await page.locator("#threshold-edit-dwell_samples").fill("5000");
    await page.getByRole("button", { name: "Save threshold" }).click();
    await page.locator("#threshold-edit-dwell_samples-error").waitFor();
    expect(await page.locator("#threshold-edit-dwell_samples").getAttribute("aria-invalid")).toBe("true");
    await page.getByRole("button", { name: "Cancel" }).click();
  }, 30_000);

  it("makes an interface rule by picking the node by name and the port by its name; the list names both", async () => {
    await page.goto(`${k.url}/#/settings/thresholds`);
    const form = page.locator("#threshold-form");
    await form.locator("#threshold-form-metric").fill("if_out_bps");
    await form.locator("#threshold-form-scope_level").selectOption("interface");
    await pick(page, "#threshold-form-scope_ids", "set", "set-a");
    const port = form.locator("#threshold-form-scope_ids-port");
    const eth0 = port.locator("option", { hasText: "eth0" });
    await eth0.waitFor({ state: "attached" });
    await port.selectOption((await eth0.getAttribute("value"))!);
    await form.locator("#threshold-form-critical_above").fill("900000000");
    await form.getByRole("button", { name: "Create threshold" }).click();
    await saved(page);
    const row = page.locator("tr[data-threshold]").filter({ hasText: "if_out_bps" });
    await row.getByText("eth0").waitFor();
    expect(await row.textContent()).toContain("set-a");
    const id = (await row.getAttribute("data-threshold"))!;
    expect(await get(`/thresholds/${id}`)).toMatchObject({ scope_level: "interface", scope_ids: [`${nodeA}:1`], critical_above: 900000000 });
    // Fits a phone: the page itself never scrolls sideways (wide tables scroll in their own box).
    const { context, page: phone } = await openDashboard(browser, k.url, { width: 390, height: 844 });
    await signIn(phone, "set-admin", PASSWORD);
    await phone.goto(`${k.url}/#/settings/thresholds`);
    await phone.locator("tr[data-threshold]").first().waitFor();
    expect(await phone.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(0);
    await context.close();
  }, 30_000);

  /** Creates a channel through the form: `fill` fills the kind's fields (ids #channel-form-config-<key>). */
  async function createChannel(name: string, kind: string, fill: (p: Page) => Promise<void>): Promise<string> {
    await page.goto(`${k.url}/#/settings/channels`);
    const form = page.locator("#channel-form");
    await form.waitFor();
    await form.locator("#channel-form-kind").selectOption(kind);
    await form.locator("#channel-form-config-" + (kind === "email" ? "host" : "url")).waitFor();
    await form.locator("#channel-form-name").fill(name);
    await fill(page);
    await form.getByRole("button", { name: "Create channel" }).click();
    await saved(page);
    const row = page.locator("tr[data-channel]").filter({ hasText: name });
    await row.waitFor();
    return (await row.getAttribute("data-channel"))!;
  }

  async function testSend(name: string): Promise<string> {
    const row = page.locator("tr[data-channel]").filter({ hasText: name });
    await row.getByRole("button", { name: `Send test to ${name}` }).click();
    const result = row.getByTestId("test-result");
    await result.filter({ hasNotText: "sending…" }).waitFor({ timeout: 20_000 });
    return (await result.textContent())!.trim();
  }

  /** Edits the channel's name only (no secret retyped); the form says a secret is stored and shows none. */
  async function renameChannel(name: string, to: string) {
    await page.goto(`${k.url}/#/settings/channels`);
    await page.getByRole("button", { name: `Edit channel ${name}` }).click();
    const form = page.locator("#channel-edit");
    await form.waitFor();
    expect(await form.getByTestId("secret-kept").count()).toBeGreaterThanOrEqual(1);
    await expectNoSecret(page);
    await form.locator("#channel-edit-name").fill(to);
    await form.getByRole("button", { name: "Save channel" }).click();
    await page.locator("tr[data-channel]").filter({ hasText: to }).waitFor();
  }

  async function expectApiHidesSecrets(id: string) {
    const text = JSON.stringify(await get(`/notification-channels/${id}`)) + JSON.stringify(await get("/notification-channels"));
    for (const s of SECRETS) expect(text).not.toContain(s);
  }

  it("webhook: made and edited through its form; the bearer token is write-only and kept on edit (the sink sees it)", async () => {
    const id = await createChannel("Ops hook", "webhook", async (p) => {
      await p.locator("#channel-form-config-url").fill(`${hook.url}/hook`);
      await p.locator("#channel-form-config-bearer_token").fill(BEARER);
    });
    channelIds.webhook = id;
    expect(await testSend("Ops hook")).toBe("delivered");
    expect(hook.received.at(-1)!.headers.authorization).toBe(`Bearer ${BEARER}`);
    await expectNoSecret(page);
    await expectApiHidesSecrets(id);
    await renameChannel("Ops hook", "Ops hook renamed");
    const before = hook.received.length;
    expect(await testSend("Ops hook renamed")).toBe("delivered");
    expect(hook.received.length).toBe(before + 1);
    expect(hook.received.at(-1)!.headers.authorization).toBe(`Bearer ${BEARER}`);
    expect((hook.received.at(-1)!.body as { test?: boolean }).test).toBe(true);
    await expectNoSecret(page);
  }, 60_000);

  it("pager: the routing key is write-only and kept on edit (the paging service knows only that key)", async () => {
    const id = await createChannel("On-call pager", "pager", async (p) => {
      await p.locator("#channel-form-config-url").fill(pager.enqueueUrl);
      await p.locator("#channel-form-config-routing_key").fill(ROUTING_KEY);
    });
    channelIds.pager = id;
    expect(await testSend("On-call pager")).toMatch(/^delivered/);
    await expectApiHidesSecrets(id);
    await renameChannel("On-call pager", "On-call pager 2");
    const before = pager.requests.length;
    expect(await testSend("On-call pager 2")).toMatch(/^delivered/);
    const sent = pager.requests.slice(before).map((r) => (r.body as { routing_key: string }).routing_key);
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(new Set(sent)).toEqual(new Set([ROUTING_KEY]));
    await expectNoSecret(page);
  }, 60_000);

  it("servicedesk: the password is write-only and kept on edit (the table service checks Basic auth)", async () => {
    const id = await createChannel("Service desk", "servicedesk", async (p) => {
      await p.locator("#channel-form-config-url").fill(desk.url);
      await p.locator("#channel-form-config-username").fill("nms");
      await p.locator("#channel-form-config-password").fill(SD_PASSWORD);
    });
    channelIds.servicedesk = id;
    expect(await testSend("Service desk")).toMatch(/^delivered/);
    await expectApiHidesSecrets(id);
    await renameChannel("Service desk", "Service desk 2");
    const before = desk.requests.length;
    expect(await testSend("Service desk 2")).toMatch(/^delivered/);
    const basic = `Basic ${Buffer.from(`nms:${SD_PASSWORD}`).toString("base64")}`;
    expect(desk.requests.slice(before).every((r) => r.headers.authorization === basic)).toBe(true);
    await expectNoSecret(page);
  }, 60_000);

  it("email: STARTTLS with AUTH; the password is write-only and kept on edit (the SMTP server logs the user in)", async () => {
    const id = await createChannel("Mail ops", "email", async (p) => {
      await p.locator("#channel-form-config-host").fill("127.0.0.1");
      await p.locator("#channel-form-config-port").fill(String(smtp.port));
      await p.locator("#channel-form-config-security").selectOption("starttls");
      await p.locator("#channel-form-config-username").fill("mailer");
      await p.locator("#channel-form-config-password").fill(SMTP_PASSWORD);
      await p.locator("#channel-form-config-from").fill("nms@example.test");
      await p.locator("#channel-form-config-to").fill("ops@example.test\noncall@example.test");
      await p.locator("#channel-form-config-ca_cert").fill(smtp.ca!);
    });
    channelIds.email = id;
    expect(await testSend("Mail ops")).toBe("delivered");
    expect(smtp.messages.at(-1)!.user).toBe("mailer");
    expect(smtp.messages.at(-1)!.envelope.rcptTo.sort()).toEqual(["oncall@example.test", "ops@example.test"]);
    await expectApiHidesSecrets(id);
    await renameChannel("Mail ops", "Mail ops 2");
    // The form shows the stored config back (not the password).
    await page.getByRole("button", { name: "Edit channel Mail ops 2" }).click();
    expect(await page.locator("#channel-edit-config-to").inputValue()).toBe("ops@example.test\noncall@example.test");
    expect(await page.locator("#channel-edit-config-password").inputValue()).toBe("");
    await screenshot(page, "console-settings-channel-email");
    await page.getByRole("button", { name: "Cancel" }).click();
    const before = smtp.messages.length;
    expect(await testSend("Mail ops 2")).toBe("delivered");
    expect(smtp.messages.length).toBe(before + 1);
    expect(smtp.messages.at(-1)!.user).toBe("mailer");
    expect(smtp.authFailures).toEqual([]);
    await expectNoSecret(page);
  }, 60_000);

  it("disables and enables a channel from its row", async () => {
    await page.goto(`${k.url}/#/settings/channels`);
    await page.getByRole("button", { name: "Disable Ops hook renamed" }).click();
    await page.getByRole("button", { name: "Enable Ops hook renamed" }).waitFor();
    expect((await get<{ enabled: boolean }>(`/notification-channels/${channelIds.webhook}`)).enabled).toBe(false);
    await page.getByRole("button", { name: "Enable Ops hook renamed" }).click();
    await page.getByRole("button", { name: "Disable Ops hook renamed" }).waitFor();
    expect((await get<{ enabled: boolean }>(`/notification-channels/${channelIds.webhook}`)).enabled).toBe(true);
  }, 30_000);

  it("edits an event rule's node with the picker (by name), and its count and window", async () => {
    const id = await created("/event-rules", { name: "Link flaps", pattern: "LINK-3-UPDOWN", match_kind: "substring", severity: "warning" });
    await page.goto(`${k.url}/#/settings/event-rules`);
    const row = page.locator(`tr[data-rule="${id}"]`);
    await row.getByTestId("rule-node").filter({ hasText: "any" }).waitFor();
    await row.getByRole("button", { name: "Edit event rule Link flaps" }).click();
    await pick(page, "#event-rule-edit-node_id", "set", "set-a");
    await page.locator("#event-rule-edit-min_count").fill("3");
    await page.locator("#event-rule-edit-window_secs").fill("120");
    await page.getByRole("button", { name: "Save event rule" }).click();
    await row.getByTestId("rule-node").filter({ hasText: "set-a" }).waitFor();
    expect(await row.textContent()).toContain("3 in 120 s");
    expect(await get(`/event-rules/${id}`)).toMatchObject({ node_id: nodeA, min_count: 3, window_secs: 120 });
    // Opened again, the picker shows the node's name.
    await row.getByRole("button", { name: "Edit event rule Link flaps" }).click();
    await until("the picker to show the name", async () => ((await page.locator("#event-rule-edit-node_id").inputValue()) === "set-a" ? true : null), 5000);
    await page.getByRole("button", { name: "Cancel" }).click();
  }, 30_000);

  it("edits a routing rule's channels and folders with pickers; the list names them", async () => {
    const id = await created("/routing-rules", { name: "Critical to hook", severity: "critical", channel_ids: [channelIds.webhook] });
    await page.goto(`${k.url}/#/settings/routing`);
    const row = page.locator(`tr[data-rule="${id}"]`);
    await row.getByTestId("rule-channels").filter({ hasText: "Ops hook renamed" }).waitFor();
    await row.getByRole("button", { name: "Edit routing rule Critical to hook" }).click();
    await page.getByRole("button", { name: "Remove Ops hook renamed" }).click();
    await pick(page, "#routing-edit-channel_ids", "pager", "On-call pager 2");
    await pick(page, "#routing-edit-channel_ids", "Mail", "Mail ops 2");
    await pick(page, "#routing-edit-folder_ids", "Alpha", "Site Alpha");
    await page.getByRole("button", { name: "Save routing rule" }).click();
    await row.getByTestId("rule-channels").filter({ hasText: "On-call pager 2" }).filter({ hasText: "Mail ops 2" }).waitFor();
    await row.getByTestId("rule-folders").filter({ hasText: "Site Alpha" }).waitFor();
    expect(await row.textContent()).not.toContain("Ops hook");
    const stored = await get<{ channel_ids: string[]; folder_ids: string[] }>(`/routing-rules/${id}`);
    expect(stored.channel_ids.sort()).toEqual([channelIds.pager, channelIds.email].sort());
    expect(stored.folder_ids).toEqual([folderA]);
  }, 30_000);

  it("makes and edits a forwarding destination: kind-dependent fields, the community write-only and kept", async () => {
    await page.goto(`${k.url}/#/settings/destinations`);
    const form = page.locator("#destination-form");
    await form.locator("#destination-form-name").fill("Trap relay");
    await form.locator("#destination-form-dest_kind").selectOption("snmp_trap_udp");
    await form.locator("#destination-form-community").waitFor(); // only a trap destination has one
    expect(await form.locator("#destination-form-source_kind option").allTextContents()).toEqual(["trap"]);
    await form.locator("#destination-form-target").fill("127.0.0.1:16200");
    await form.locator("#destination-form-community").fill(COMMUNITY);
    await form.locator("#destination-form-verbatim").uncheck();
    await form.getByRole("button", { name: "Create destination" }).click();
    await saved(page);
    const row = page.locator("tr[data-destination]").filter({ hasText: "Trap relay" });
    await row.getByText("community stored").waitFor();
    const id = (await row.getAttribute("data-destination"))!;

    await row.getByRole("button", { name: "Edit destination Trap relay" }).click();
    const edit = page.locator("#destination-edit");
    expect(await edit.locator("#destination-edit-target").inputValue()).toBe("127.0.0.1:16200");
    expect(await edit.locator("#destination-edit-community").inputValue()).toBe("");
    await edit.locator("#destination-edit-target").fill("127.0.0.1:16201");
    await edit.getByRole("button", { name: "Add condition" }).click();
    await edit.getByLabel("Condition 1 field").selectOption("trap_oid");
    await edit.getByLabel("Condition 1 operator").selectOption("prefix");
    await edit.getByLabel("Condition 1 value").fill("1.3.6.1.6.3.1.1.5");
    await expectNoSecret(page);
    await screenshot(page, "console-settings-destination");
    await edit.getByRole("button", { name: "Save destination" }).click();
    await row.getByText("127.0.0.1:16201").waitFor();
    const stored = await get<Record<string, unknown>>(`/forwarding/destinations/${id}`);
    expect(stored).toMatchObject({
      target: "127.0.0.1:16201",
      has_community: true,
      verbatim: false,
      filter: { mode: "all", conditions: [{ field: "trap_oid", op: "prefix", value: "1.3.6.1.6.3.1.1.5" }] },
    });
    expect(JSON.stringify(stored)).not.toContain(COMMUNITY);
    // A field the API refuses: its message beside the field.
    await row.getByRole("button", { name: "Edit destination Trap relay" }).click();
    await edit.locator("#destination-edit-target").fill("no-port-here");
    await edit.getByRole("button", { name: "Save destination" }).click();
    await page.locator("#destination-edit-target-error").waitFor();
    await edit.getByRole("button", { name: "Cancel" }).click();
  }, 30_000);

  it("makes a report definition, then creates, edits and deletes its schedule", async () => {
    await page.goto(`${k.url}/#/settings/schedules`);
    const def = page.locator("#report-form");
    await def.locator("#report-form-name").fill("Weekly availability");
    await def.getByRole("button", { name: "Add section" }).click();
    await def.getByLabel("Section 1 kind").selectOption("availability");
    await def.getByLabel("Section 1 group_by").selectOption("folder");
    await def.getByRole("button", { name: "Create report" }).click();
    const defRow = page.locator("tr[data-definition]").filter({ hasText: "Weekly availability" });
    await defRow.waitFor();
    const defId = (await defRow.getAttribute("data-definition"))!;
    expect((await get<{ spec: unknown }>(`/reports/definitions/${defId}`)).spec).toMatchObject({ sections: [{ kind: "availability", group_by: "folder" }] });

    const form = page.locator("#report-schedule-form");
    await form.locator("#report-schedule-form-definition_id").selectOption({ label: "Weekly availability" });
    await form.locator("#report-schedule-form-frequency").selectOption("weekly");
    await form.locator("#report-schedule-form-day_of_week").selectOption({ label: "Monday" });
    await form.locator("#report-schedule-form-at_hour").fill("6");
    await form.locator("#report-schedule-form-at_minute").fill("30");
    await form.locator("#report-schedule-form-timezone").fill("Europe/Berlin");
    await pick(page, "#report-schedule-form-channel_ids", "Mail", "Mail ops 2");
    await form.getByRole("button", { name: "Create schedule" }).click();
    const row = page.locator('[data-testid="report-schedules"] tr[data-schedule]').filter({ hasText: "Weekly availability" });
    await row.getByText("weekly, Monday 06:30 Europe/Berlin").waitFor();
    expect(await row.textContent()).toContain("Mail ops 2");
    const id = (await row.getAttribute("data-schedule"))!;

    await row.getByRole("button", { name: "Edit schedule of Weekly availability" }).click();
    const edit = page.locator("#report-schedule-edit");
    await edit.locator("#report-schedule-edit-frequency").selectOption("monthly");
    await edit.locator("#report-schedule-edit-day_of_month").fill("15");
    await edit.getByRole("button", { name: "Save schedule" }).click();
    await row.getByText("monthly, day 15 06:30 Europe/Berlin").waitFor();
    expect(await get(`/reports/schedules/${id}`)).toMatchObject({ frequency: "monthly", day_of_month: 15, day_of_week: null, channel_ids: [channelIds.email] });
    // An unknown zone: the API's message beside the field.
    await row.getByRole("button", { name: "Edit schedule of Weekly availability" }).click();
    await edit.locator("#report-schedule-edit-timezone").fill("Mars/Olympus");
    await edit.getByRole("button", { name: "Save schedule" }).click();
    await page.locator("#report-schedule-edit-timezone-error").waitFor();
    await edit.getByRole("button", { name: "Cancel" }).click();

    await row.getByRole("button", { name: "Delete schedule of Weekly availability" }).click();
    await row.getByRole("button", { name: "Confirm: Delete schedule of Weekly availability" }).click();
    await row.waitFor({ state: "detached" });
    expect((await k.request("GET", `/reports/schedules/${id}`)).status).toBe(404);
  }, 45_000);

  it("creates, edits and deletes an analysis schedule scoped to a node picked by name", async () => {
    await page.goto(`${k.url}/#/settings/schedules`);
    const form = page.locator("#analysis-schedule-form");
    await form.waitFor();
    const tool = (await form.locator("#analysis-schedule-form-tool option").first().getAttribute("value"))!;
    await form.locator("#analysis-schedule-form-scope_kind").selectOption("node");
    await pick(page, "#analysis-schedule-form-scope_node", "set", "set-a");
    await form.locator("#analysis-schedule-form-at_hour").fill("2");
    await form.getByRole("button", { name: "Create schedule" }).click();
    const row = page.locator('[data-testid="analysis-schedules"] tr[data-schedule]').first();
    await row.getByText("daily 02:00 UTC").waitFor();
    expect(await row.textContent()).toContain("set-a");
    const id = (await row.getAttribute("data-schedule"))!;
    expect(await get(`/analysis/schedules/${id}`)).toMatchObject({ tool, scope_kind: "node", scope_id: nodeA, at_hour: 2 });

    await row.getByRole("button", { name: /^Edit analysis schedule/ }).click();
    const edit = page.locator("#analysis-schedule-edit");
    await until(
      "the node picker to show the name",
      async () => ((await edit.locator("#analysis-schedule-edit-scope_node").inputValue()) === "set-a" ? true : null),
      5000,
    );
    await edit.locator("#analysis-schedule-edit-frequency").selectOption("weekly");
    await edit.locator("#analysis-schedule-edit-day_of_week").selectOption({ label: "Friday" });
    await edit.locator("#analysis-schedule-edit-at_minute").fill("45");
    await edit.getByRole("button", { name: "Save schedule" }).click();
    await row.getByText("weekly, Friday 02:45 UTC").waitFor();
    expect(await get(`/analysis/schedules/${id}`)).toMatchObject({ frequency: "weekly", day_of_week: 5, at_minute: 45, scope_id: nodeA });

    await row.getByRole("button", { name: /^Delete analysis schedule/ }).click();
    await row.getByRole("button", { name: /^Confirm: Delete analysis schedule/ }).click();
    await page.getByText("No analysis schedules yet.").waitFor();
    expect((await k.request("GET", `/analysis/schedules/${id}`)).status).toBe(404);
  }, 45_000);

  it("shows a viewer the lists without any edit control; the admin-only lists say the role may not see them", async () => {
    const { context, page: p } = await openDashboard(browser, k.url);
    await signIn(p, "set-viewer", PASSWORD);
    for (const [route, ready] of [
      ["settings/thresholds", '[data-testid="thresholds"] tr[data-threshold]'],
      ["settings/event-rules", '[data-testid="event-rules"] tr[data-rule]'],
      ["settings/schedules", '[data-testid="report-definitions"] tr[data-definition]'],
    ] as const) {
      await p.goto(`${k.url}/#/${route}`);
      await p.locator(ready).first().waitFor();
      expect(await p.locator("main form").count()).toBe(0);
      expect(await p.locator("main button").count()).toBe(0);
    }
    for (const route of ["settings/channels", "settings/routing", "settings/destinations"]) {
      await p.goto(`${k.url}/#/${route}`);
      await p.getByRole("alert").filter({ hasText: "Your role may not see this." }).waitFor();
      expect(await p.locator("main form").count()).toBe(0);
      await expectNoSecret(p);
    }
    await context.close();
  }, 45_000);

  it("shows a folder-scoped operator global rules read-only, refuses it global config, and lets it schedule within its folder only", async () => {
    const { context, page: p } = await openDashboard(browser, k.url);
    await signIn(p, "set-scoped", PASSWORD);
    // Thresholds: readable (the API lets any reader list them) but not editable (writes answer scope_unsupported).
    await p.goto(`${k.url}/#/settings/thresholds`);
    await p.locator('[data-testid="thresholds"] tr[data-threshold]').first().waitFor();
    expect(await p.locator("main form").count()).toBe(0);
    expect(await p.getByRole("button", { name: /^Edit threshold/ }).count()).toBe(0);
    expect(
      (
        await k.request("PUT", `/thresholds/${(await get<{ id: string }[]>("/thresholds"))[0].id}`, {
          token: await scopedToken(),
          body: { metric: "x", scope_level: "global", warning_above: 1 },
        })
      ).status,
    ).toBe(403);
    // Channels and destinations are global: refused, said so.
    for (const route of ["settings/channels", "settings/destinations", "settings/routing"]) {
      await p.goto(`${k.url}/#/${route}`);
      await p.getByRole("alert").waitFor();
      expect(await p.locator("main form").count()).toBe(0);
    }
    // Schedules: it may make one for its folder; the folder picker offers its folder only.
    await p.goto(`${k.url}/#/settings/schedules`);
    const form = p.locator("#analysis-schedule-form");
    await form.locator("#analysis-schedule-form-scope_kind").selectOption("folder");
    const box = form.locator("#analysis-schedule-form-scope_folder");
    await box.click();
    await box.fill("Site");
    const options = p.locator(`#${(await box.getAttribute("aria-controls"))!} [role=option]`);
    await options.first().waitFor();
    expect(await options.allTextContents()).toEqual(["Site Alpha"]);
    await options.first().dispatchEvent("mousedown");
    await form.getByRole("button", { name: "Create schedule" }).click();
    await p.locator('[data-testid="analysis-schedules"] tr[data-schedule]').filter({ hasText: "Site Alpha" }).waitFor();
    expect(await p.locator("main").textContent()).not.toContain("bravo-box");
    expect(await p.locator("main").textContent()).not.toContain("Site Bravo");
    await context.close();
  }, 45_000);
});

async function scopedToken(): Promise<string> {
  return (await k.kernel.auth.login("set-scoped", PASSWORD, "127.0.0.1")).token;
}
