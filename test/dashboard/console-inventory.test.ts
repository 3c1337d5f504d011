/**
 * The operator console's inventory in a real browser (Debian's chromium through playwright-core) against a real kernel
 * polling real Net-SNMP agents: add a device after a live "Test SNMP" and see it polled; test a silent agent; a node
 * whose agent never answers shown as such in the node view, the folder tree and the overview; edit a node and a folder;
 * rotate a credential (the secret never shown); a discovery sweep with live progress, reviewed and imported; the top
 * bar's search by node name, address and interface name; a viewer without write controls; a folder-scoped operator
 * who sees only its folders and cannot add into another. It writes docs/screenshots/console-inventory-*.png.
 */
import type { Browser, Page } from "playwright-core";
import { definePlugin, type PluginManifest } from "../../core/index.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { dashboardPlugin } from "../../plugins/dashboard/index.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { freeUdpPort, startSnmpd, stopAllSnmpAgents, type SnmpdAgent } from "../support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";
import { ensureWebBuilt, launch, openDashboard, screenshot, signIn } from "./browser.js";

const INTERVAL_SECS = 5;
const PASSWORD = "inventory-password-1";
const COMMUNITY = "inv-community-secret";
const ROTATED = "inv-rotated-secret-77";
/** A loopback address of its own for the device the sweep finds (the other agents are on 127.0.0.1). */
const SWEEP_ADDRESS = "127.0.0.7";

let k: TestKernel;
let agent: SnmpdAgent;
let found: SnmpdAgent;
let silentPort: number;
let browser: Browser;
let op: Page;
const ids: Record<string, string> = {};

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

/** The polling manifest with a short sweep-job lock (Agenda's lock timer would keep jest alive otherwise). */
function pollingForTests(): PluginManifest {
  const jobs = (pollingPlugin.jobs ?? []).map((j) => (j.name === "sweep" ? { ...j, lockLifetimeMs: 2000 } : j));
  return definePlugin({ ...(pollingPlugin as PluginManifest), jobs });
}

/** Chooses `option` in the picker (combobox) named `name`; `current`: the name it shows first (its label is read async). */
async function pick(page: Page, name: string, text: string, option: RegExp | string = text, current?: string): Promise<void> {
  const box = page.getByRole("combobox", { name, exact: true });
  if (current !== undefined) await until(`${name} to show ${current}`, async () => (await box.inputValue()) === current, 10_000);
  await box.fill(text);
  await page.getByRole("option", { name: option }).first().click();
}

beforeAll(async () => {
  ensureWebBuilt();
  agent = await startSnmpd({ community: COMMUNITY, sysName: "inv-snmpd" });
  found = await startSnmpd({ community: COMMUNITY, sysName: "inv-found", address: SWEEP_ADDRESS });
  silentPort = await freeUdpPort();
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingForTests(), alertsPlugin, eventsPlugin, dashboardPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS, snmpTimeoutMs: 500, snmpRetries: 0 },
        alerts: { agentDownPolls: 2, flushMs: 50 },
      },
    },
  });
  ids.north = await created("/node-groups", { name: "Inv North" });
  ids.south = await created("/node-groups", { name: "Inv South" });
  ids.lab = await created("/node-groups", { name: "Inv Lab" });
  ids.cred = await created("/credentials", { name: "inv public", kind: "snmp_v2c", community: COMMUNITY });
  ids.rotate = await created("/credentials", { name: "inv rotate me", kind: "snmp_v2c", community: "inv-old-community" });
  ids.profile = await created("/profiles", { name: "Net-SNMP host" });
  await created("/classification-rules", { profile_id: ids.profile, sysobjectid_prefix: "1.3.6.1.4.1.8072", vendor: "Net-SNMP", model: null });
  ids.silent = await created("/nodes", { name: "inv-silent", address: "127.0.0.1", snmp_port: silentPort, credential_id: ids.cred, group_id: ids.north });
  await k.kernel.auth.createAccount({ username: "inv-op", password: PASSWORD, role: "operator", scope: "All" });
  await k.kernel.auth.createAccount({ username: "inv-viewer", password: PASSWORD, role: "viewer", scope: "All" });
  await k.kernel.auth.createAccount({ username: "inv-scoped", password: PASSWORD, role: "operator", scope: { folders: [ids.north] } });
  browser = await launch();
  ({ page: op } = await openDashboard(browser, k.url));
  await signIn(op, "inv-op", PASSWORD);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await k?.stop();
  await stopAllSnmpAgents();
});

describe("inventory in chromium", () => {
  it("tests SNMP against a live agent (sysName, sysDescr, profile), adds the device, and sees it polled", async () => {
    await op.goto(`${k.url}/#/inventory`);
    await op.getByLabel("Address *").fill(agent.host);
    await op.getByLabel("SNMP port").first().fill(String(agent.port));
    await op.getByLabel("Name", { exact: true }).fill("inv-router");
    await pick(op, "Folder", "North", /Inv North/);
    await pick(op, "Credential", "inv public");
    await op.getByRole("button", { name: "Test SNMP" }).click();
    const result = op.getByTestId("probe-result");
    await result.filter({ hasText: "The agent answered" }).waitFor();
    expect(await op.getByTestId("probe-sysname").textContent()).toBe("inv-snmpd");
    expect(await op.getByTestId("probe-profile").textContent()).toBe("Net-SNMP host");
    expect(await result.textContent()).toMatch(/sysObjectID1\.3\.6\.1\.4\.1\.8072/);
    expect(await op.content()).not.toContain(COMMUNITY);
    await screenshot(op, "console-inventory-add-device");

    await op.getByRole("button", { name: "Add device" }).click();
    const added = op.getByRole("status").filter({ hasText: "Added" });
    await added.waitFor();
    await added.getByRole("link", { name: "inv-router" }).click();
    await op.getByRole("heading", { name: "Node inv-router" }).waitFor();
    const nodes = (await k.request("GET", "/nodes?q=inv-router")).body as { id: string; group_id: string; profile_id: string }[];
    expect(nodes).toEqual([expect.objectContaining({ group_id: ids.north, profile_id: ids.profile })]);
    ids.router = nodes[0].id;
    // Polled: the facts written back from SNMP, the agent answering, interfaces listed.
    await until(
      "the new node polled",
      async () => ((await k.request("GET", `/nodes/${ids.router}`)).body as { sys_name: string | null }).sys_name === "inv-snmpd",
      3 * INTERVAL_SECS * 1000 + 10_000,
    );
    await op.getByTestId("agent-status").filter({ hasText: "agent answering" }).waitFor({ timeout: 20_000 });
    // A reload would sign out (the session lives in memory): open the node again instead.
    await op.goto(`${k.url}/#/overview`);
    await op.goto(`${k.url}/#/node/${ids.router}`);
    await op.getByTestId("sys-name").filter({ hasText: "inv-snmpd" }).waitFor();
    await op.getByTestId("node-folder").filter({ hasText: "Inv North" }).waitFor();
    // Names, not ids.
    await op.getByTestId("node-profile").filter({ hasText: "Net-SNMP host" }).waitFor();
    await op.getByTestId("node-credential").filter({ hasText: "inv public (snmp_v2c)" }).waitFor();
    await op.locator('[data-testid="interfaces"] tbody tr').first().waitFor({ timeout: 20_000 });
  }, 90_000);

  it("tests SNMP against a silent agent: a timeout within the bound", async () => {
    await op.goto(`${k.url}/#/inventory`);
    await op.getByLabel("Address *").fill("127.0.0.1");
    await op.getByLabel("SNMP port").first().fill(String(silentPort));
    await pick(op, "Credential", "inv public");
    await op.getByRole("button", { name: "Test SNMP" }).click();
    await op.getByTestId("probe-result").filter({ hasText: "did not answer (timeout)" }).waitFor({ timeout: 10_000 });
    expect(await op.getByTestId("probe-sysname").count()).toBe(0);
  }, 30_000);

  it("shows the silent agent's node as 'agent not answering' in the node view, the folder tree and the overview", async () => {
    await op.goto(`${k.url}/#/node/${ids.silent}`);
    await op
      .getByTestId("agent-status")
      .filter({ hasText: "agent not answering" })
      .waitFor({ timeout: 3 * INTERVAL_SECS * 1000 + 10_000 });
    expect(await op.getByTestId("reachability").textContent()).toMatch(/^reachable/);
    expect(await op.getByTestId("last-answer").textContent()).toBe("never");
    // The alert the alerts plugin raises after agentDownPolls polls, listed on the node.
    await op
      .getByText("SNMP agent on inv-silent not answering (timeout)")
      .first()
      .waitFor({ timeout: 3 * INTERVAL_SECS * 1000 + 10_000 });
    await screenshot(op, "console-inventory-node-health");

    await op.goto(`${k.url}/#/folders`);
    const item = op.locator(`li[data-node="${ids.silent}"]`);
    await item.getByTestId("agent-mark").filter({ hasText: "agent not answering" }).waitFor();
    expect(await op.locator(`li[data-node="${ids.router}"]`).getByTestId("agent-mark").count()).toBe(0);

    await op.goto(`${k.url}/#/overview`);
    const row = op.getByTestId("agent-problems").locator(`li[data-node="${ids.silent}"]`);
    await row.waitFor();
    expect(await row.textContent()).toMatch(/inv-silent.*agent not answering.*last answer never/);
    expect(await op.getByTestId("agent-problems").locator(`li[data-node="${ids.router}"]`).count()).toBe(0);
  }, 60_000);

  it("edits a node (rename, move, pool, tags) and a folder (rename, move under another, pool)", async () => {
    await op.goto(`${k.url}/#/node/${ids.router}`);
    await op.getByRole("button", { name: "Edit node" }).click();
    const form = op.getByTestId("node-editor");
    await form.getByLabel("Name").fill("inv-router-1");
    await pick(op, "Folder", "South", /Inv South/, "Inv North");
    await form.getByLabel("Pool").fill("inv-pool");
    await form.getByLabel("Tags").fill("core, lab");
    await form.getByRole("button", { name: "Save node" }).click();
    await form.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await op.getByRole("heading", { name: "Node inv-router-1" }).waitFor();
    const node = (await k.request("GET", `/nodes/${ids.router}`)).body as Record<string, unknown>;
    expect(node).toMatchObject({
      name: "inv-router-1",
      group_id: ids.south,
      pool: "inv-pool",
      tags: ["core", "lab"],
      credential_id: ids.cred,
      snmp_port: agent.port,
    });
    await op.getByTestId("node-folder").filter({ hasText: "Inv South" }).waitFor();

    await op.goto(`${k.url}/#/folder/${ids.lab}`);
    await op.getByRole("button", { name: "Edit folder" }).click();
    const ff = op.getByTestId("folder-editor");
    await ff.getByLabel("Folder name").fill("Inv Lab 2");
    await until("the folder editor's pickers", async () => (await ff.getByRole("combobox").count()) === 1, 10_000);
    await pick(op, "Parent folder", "South", /Inv South/);
    await ff.getByLabel("Folder pool").fill("lab-pool");
    await ff.getByRole("button", { name: "Save folder" }).click();
    await ff.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await op.getByRole("heading", { name: "Folder Inv Lab 2" }).waitFor();
    const folder = (await k.request("GET", `/node-groups/${ids.lab}`)).body as Record<string, unknown>;
    expect(folder).toMatchObject({ name: "Inv Lab 2", parent_id: ids.south, pool: "lab-pool" });
    expect(await op.getByTestId("folder-pool").textContent()).toBe("lab-pool");
  }, 60_000);

  it("rotates a credential's secret: never shown, empty after saving, and the new secret is the one used", async () => {
    await op.goto(`${k.url}/#/inventory`);
    const table = op.getByTestId("credentials");
    await table.getByRole("button", { name: "Edit or rotate inv rotate me" }).click();
    const form = op.getByRole("form", { name: "Edit credential inv rotate me" });
    const secret = form.getByLabel("Community");
    expect(await secret.inputValue()).toBe("");
    expect(await secret.getAttribute("type")).toBe("password");
    await secret.fill(ROTATED);
    await form.getByRole("button", { name: "Save credential" }).click();
    await form.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    expect(await secret.inputValue()).toBe("");
    expect(await op.content()).not.toContain(ROTATED);
    expect(await op.content()).not.toContain("inv-old-community");
    // Renaming with the secret left empty keeps it.
    await form.getByLabel("Credential name").fill("inv rotated");
    await form.getByRole("button", { name: "Save credential" }).click();
    await table.getByRole("cell", { name: "inv rotated", exact: true }).waitFor();
    const probe = async () =>
      (await k.request("POST", "/snmp/probe", { body: { address: agent.host, port: agent.port, credential_id: ids.rotate, timeout_ms: 1000 } })).body as {
        outcome: string;
      };
    expect((await probe()).outcome).toBe("timeout");
    // The agent serves the rotated community only once it knows it: the stored secret changed, which the agent proves.
    const again = await startSnmpd({ community: ROTATED, sysName: "inv-rotated" });
    const res = (await k.request("POST", "/snmp/probe", { body: { address: again.host, port: again.port, credential_id: ids.rotate, timeout_ms: 1000 } }))
      .body as { outcome: string; sys_name: string };
    expect(res).toMatchObject({ outcome: "ok", sys_name: "inv-rotated" });
    await again.stop();
  }, 60_000);

  it("creates an SNMP v3 credential whose keys are never shown", async () => {
    await op.goto(`${k.url}/#/inventory`);
    const form = op.getByRole("form", { name: "New credential" });
    await form.getByLabel("Credential name").fill("inv v3");
    await form.getByLabel("Kind").selectOption("snmp_v3");
    await form.getByLabel("User").fill("invuser");
    await form.getByLabel("Auth protocol").selectOption("SHA256");
    await form.getByLabel("Auth passphrase").fill("inv-auth-passphrase");
    await form.getByLabel("Privacy passphrase").fill("inv-priv-passphrase");
    await form.getByRole("button", { name: "Create credential" }).click();
    await form.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const row = op.getByTestId("credentials").locator("tr", { hasText: "inv v3" });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/snmp_v3.*user: invuser.*auth_protocol: SHA256.*stored \(write-only\)/);
    const html = await op.content();
    expect(html).not.toContain("inv-auth-passphrase");
    expect(html).not.toContain("inv-priv-passphrase");
    const stored = ((await k.request("GET", "/credentials?limit=200")).body as { name: string; settings: Record<string, string> }[]).find(
      (c) => c.name === "inv v3",
    );
    expect(stored?.settings).toMatchObject({ user: "invuser", security_level: "authPriv", auth_protocol: "SHA256", priv_protocol: "AES" });
  }, 30_000);

  it("deletes a node and a folder only after a second click", async () => {
    const folder = await created("/node-groups", { name: "Inv Doomed" });
    const node = await created("/nodes", { name: "inv-doomed", address: "192.0.2.99", group_id: folder });
    await op.goto(`${k.url}/#/node/${node}`);
    await op.getByRole("button", { name: "Delete node" }).click();
    await op.getByRole("button", { name: "Keep" }).click();
    expect((await k.request("GET", `/nodes/${node}`)).status).toBe(200);
    await op.getByRole("button", { name: "Delete node" }).click();
    await op.getByRole("button", { name: "Really delete inv-doomed" }).click();
    // Back to the node's folder, which lists it no more.
    await op.getByRole("heading", { name: "Folder Inv Doomed" }).waitFor();
    await op.getByTestId("folder-nodes").getByText("No node filed directly here.").waitFor();
    expect((await k.request("GET", `/nodes/${node}`)).status).toBe(404);
    await op.getByRole("button", { name: "Delete folder" }).click();
    await op.getByRole("button", { name: "Really delete Inv Doomed" }).click();
    await op.getByRole("heading", { name: "Folders", exact: true }).waitFor();
    expect((await k.request("GET", `/node-groups/${folder}`)).status).toBe(404);
  }, 30_000);

  it("runs a discovery sweep with live progress, reviews it and imports the chosen row", async () => {
    await op.goto(`${k.url}/#/inventory`);
    const form = op.getByRole("form", { name: "Start a sweep" });
    await form.getByLabel("Range (CIDR)").fill(`${SWEEP_ADDRESS}/32`);
    await form.getByLabel("UDP port").fill(String(found.port));
    await pick(op, "Credentials to try", "inv public");
    await form.getByRole("button", { name: "Start sweep" }).click();
    const progress = op.getByTestId("sweep-progress");
    await progress.and(op.locator('[data-status="done"]')).waitFor({ timeout: 30_000 });
    expect(await progress.textContent()).toContain("1/1 probed, 1 found");
    const row = op.getByTestId("sweep-results").locator(`tr[data-address="${SWEEP_ADDRESS}"]`);
    await row.waitFor();
    expect(await row.getByRole("checkbox").isChecked()).toBe(true);
    expect(await row.getByRole("textbox").inputValue()).toBe("inv-found");
    await op.getByText("Net-SNMP host").first().waitFor();
    await row.getByRole("textbox").fill("inv-found-1");
    await pick(op, "Import into folder", "North", /Inv North/);
    await screenshot(op, "console-inventory-sweep");
    await op.getByRole("button", { name: "Import 1 chosen" }).click();
    await op.getByTestId("import-result").filter({ hasText: "1 created" }).waitFor();
    const nodes = (await k.request("GET", `/nodes?address=${SWEEP_ADDRESS}`)).body as { id: string }[];
    // Imported with the port the sweep reached the agent on: polled, and its agent answers.
    expect(nodes).toEqual([
      expect.objectContaining({ name: "inv-found-1", group_id: ids.north, profile_id: ids.profile, credential_id: ids.cred, snmp_port: found.port }),
    ]);
    ids.found = nodes[0].id;
    await until(
      "the imported node's agent answering",
      async () => ((await k.request("GET", `/nodes/${ids.found}/agent-health`)).body as { agent_status: string | null }).agent_status === "answering",
      3 * INTERVAL_SECS * 1000 + 10_000,
    );
  }, 60_000);

  it("finds a node by name, by address and by interface name from the top bar", async () => {
    await op.goto(`${k.url}/#/overview`);
    const box = op.getByRole("searchbox", { name: /Search nodes/ });
    const panel = op.getByRole("region", { name: "Search results" });
    await box.fill("router-1");
    await panel.getByRole("region", { name: "Nodes found" }).getByRole("link", { name: "inv-router-1" }).waitFor();
    await box.fill(SWEEP_ADDRESS);
    await panel.getByRole("region", { name: "Nodes found" }).getByRole("link", { name: "inv-found-1" }).waitFor();
    await box.fill("Inv So");
    await panel.getByRole("region", { name: "Folders found" }).getByRole("link", { name: "Inv South" }).waitFor();
    // snmpd serves this machine's interfaces: the loopback one is "lo".
    const ifaces = (await k.request("GET", `/nodes/${ids.router}/interfaces`)).body as { if_name: string | null }[];
    const ifName = ifaces.find((i) => i.if_name)?.if_name as string;
    await box.fill(ifName);
    const link = panel.getByRole("region", { name: "Interfaces found" }).getByRole("link", { name: `inv-router-1 ${ifName}` });
    await link.first().waitFor();
    // Every group at once for the docs: "inv" names nodes and folders.
    await box.fill("inv");
    await panel.getByRole("region", { name: "Folders found" }).getByRole("link", { name: "Inv North" }).waitFor();
    await panel.getByRole("region", { name: "Nodes found" }).getByRole("link", { name: "inv-silent" }).waitFor();
    await screenshot(op, "console-inventory-search");
    await box.fill(ifName);
    await link.first().click();
    await op.getByRole("heading", { name: "Node inv-router-1" }).waitFor();
    // Enter opens the results as a page.
    await box.fill("inv-sil");
    await box.press("Enter");
    await op.getByRole("heading", { name: "Search: inv-sil" }).waitFor();
    await op.getByTestId("search-page").getByRole("link", { name: "inv-silent" }).waitFor();
  }, 60_000);

  it("shows a viewer no add, edit or delete control", async () => {
    const { page, context } = await openDashboard(browser, k.url);
    await signIn(page, "inv-viewer", PASSWORD);
    await page.goto(`${k.url}/#/inventory`);
    await page.getByText("Your role may not change the inventory.").waitFor();
    expect(await page.getByRole("button", { name: "Add device" }).count()).toBe(0);
    await page.goto(`${k.url}/#/node/${ids.silent}`);
    await page.getByTestId("agent-status").waitFor();
    expect(await page.getByRole("button", { name: /Edit node|Delete node/ }).count()).toBe(0);
    await page.goto(`${k.url}/#/folder/${ids.north}`);
    await page.getByRole("heading", { name: "Folder Inv North" }).waitFor();
    expect(await page.getByRole("button", { name: /Edit folder|Delete folder/ }).count()).toBe(0);
    await context.close();
  }, 60_000);

  it("shows a folder-scoped operator only its folders; it cannot add into another folder", async () => {
    const { page, context } = await openDashboard(browser, k.url);
    await signIn(page, "inv-scoped", PASSWORD);
    await page.goto(`${k.url}/#/folders`);
    await page.locator(`li[data-folder="${ids.north}"]`).waitFor();
    expect(await page.locator(`li[data-folder="${ids.south}"]`).count()).toBe(0);
    await page.locator(`li[data-node="${ids.silent}"]`).getByTestId("agent-mark").waitFor();

    await page.goto(`${k.url}/#/inventory`);
    // No credentials or sweeps (they need scope All), no SNMP test.
    expect(await page.getByRole("button", { name: "Test SNMP" }).count()).toBe(0);
    expect(await page.getByTestId("credentials").count()).toBe(0);
    const folderBox = page.getByRole("combobox", { name: "Folder", exact: true });
    await folderBox.fill("South");
    await page.getByText("No match").waitFor();
    await folderBox.fill("");
    await page.getByLabel("Address *").fill("192.0.2.44");
    await page.getByLabel("Name", { exact: true }).fill("inv-scoped-try");
    await page.getByRole("button", { name: "Add device" }).click();
    await page.getByRole("alert").first().waitFor();
    expect(((await k.request("GET", "/nodes?q=inv-scoped-try")).body as unknown[]).length).toBe(0);
    // Into its own folder it may.
    await pick(page, "Folder", "North", /Inv North/);
    await page.getByRole("button", { name: "Add device" }).click();
    await page.getByRole("status").filter({ hasText: "Added" }).waitFor();
    // The search finds nothing outside its folders.
    await page.getByRole("searchbox", { name: /Search nodes/ }).fill("Inv So");
    await page.getByRole("region", { name: "Search results" }).getByText("Nothing found.").waitFor();
    await context.close();
  }, 60_000);
});
