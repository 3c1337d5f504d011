/**
 * The topology map in a real browser (Debian's chromium through playwright-core) against a real kernel whose topology
 * plugin walked real SNMP agents (snmpsim serving the test network of test/support/topologyNetwork.ts: a core, two
 * distribution switches, six access devices): every node and link drawn, a link that goes is redrawn dashed without a
 * reload, a folder picker narrows the map, and a click reaches the node. Writes docs/screenshots/topology-map*.png.
 */
import { jest } from "@jest/globals";
import type { Browser, Page } from "playwright-core";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { dashboardPlugin } from "../../plugins/dashboard/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { topologyPlugin } from "../../plugins/topology/index.js";
import { DiscoveryService } from "../../plugins/topology/services/DiscoveryService.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { startNetworkAgent, testNetwork, type NetworkAgent, type TopoDevice } from "../support/topologyNetwork.js";
import { ensureWebBuilt, launch, openDashboard, screenshot, signIn } from "./browser.js";

jest.setTimeout(120_000);

const PASSWORD = "topology-map-password-1";
const network = testNetwork();
const ids = new Map<string, string>();
let k: TestKernel;
let agent: NetworkAgent;
let browser: Browser;
let page: Page;

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

const discovery = () => k.context("topology").get(DiscoveryService);
const map = () => page.getByTestId("topology-map");
const linksIn = (state: "up" | "gone") => map().locator(`line[data-state="${state}"]`);

beforeAll(async () => {
  ensureWebBuilt();
  agent = await startNetworkAgent(network);
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, topologyPlugin, dashboardPlugin],
    overrides: { pluginConfig: { topology: { seeds: { default: "127.0.0.21" }, goneAfterPolls: 2, timeoutMs: 1000, retries: 1 } } },
  });
  // The core and the first distribution switch with its access devices in one folder, the rest in another.
  const siteA = await created("/node-groups", { name: "Site A" });
  const siteB = await created("/node-groups", { name: "Site B" });
  const inA = new Set(["core", "dist1", "acc1", "acc2", "acc3"]);
  for (const d of network) {
    const cred = await created("/credentials", { name: `v2c ${d.key}`, kind: "snmp_v2c", community: d.key });
    const group_id = inA.has(d.key) ? siteA : siteB;
    ids.set(d.key, await created("/nodes", { name: d.sysName, address: d.address, credential_id: cred, snmp_port: agent.port, group_id }));
  }
  expect(await discovery().discover(null, "All")).toMatchObject({ walked: network.length, failed: 0 });
  await k.kernel.auth.createAccount({ username: "map-viewer", password: PASSWORD, role: "viewer", scope: "All" });
  browser = await launch();
  ({ page } = await openDashboard(browser, k.url));
  await signIn(page, "map-viewer", PASSWORD);
});

afterAll(async () => {
  await browser?.close();
  await k?.stop();
  await agent?.stop();
});

describe("topology map in chromium", () => {
  it("draws every node and the eight links the agents reported, each node a link to its view", async () => {
    await page.goto(`${k.url}/#/map`);
    await map().waitFor();
    await linksIn("up").nth(7).waitFor();
    expect(await linksIn("up").count()).toBe(8);
    expect(await map().locator("a[data-node]").count()).toBe(network.length);
    expect(await page.getByTestId("map-summary").textContent()).toContain(`${network.length} nodes, 8 links up, 0 gone`);
    // Each end of every line sits on a drawn node: the layout placed them, and inside the drawing.
    const inside = await map().evaluate((svg) =>
      [...svg.querySelectorAll("circle")].every((c) => {
        const [x, y] = [Number(c.getAttribute("cx")), Number(c.getAttribute("cy"))];
        return x > 0 && x < 900 && y > 0 && y < 560;
      }),
    );
    expect(inside).toBe(true);
    // The link's tooltip names both ends' ports and the protocol.
    const titles = await map().locator("line title").allTextContents();
    expect(titles).toContainEqual(expect.stringMatching(/^core Gi0\/1 ↔ dist1 Gi0\/1 \(lldp\)$|^dist1 Gi0\/1 ↔ core Gi0\/1 \(lldp\)$/));
    await screenshot(page, "topology-map");
  });

  it("redraws a link that goes as dashed, live, without a reload", async () => {
    await page.evaluate("window.notReloaded = true");
    const dist2 = network.find((d) => d.key === "dist2")!;
    const without: TopoDevice = { ...dist2, lldp: dist2.lldp.filter((n) => n.sysName !== "acc5") };
    await agent.update(without);
    for (let poll = 0; poll < 2; poll++) await discovery().discover([ids.get("dist2")!], "All");
    await linksIn("gone").first().waitFor({ timeout: 15_000 });
    expect(await linksIn("gone").count()).toBe(1);
    expect(await linksIn("up").count()).toBe(7);
    expect(await linksIn("gone").first().locator("title").textContent()).toMatch(/acc5.*gone|gone.*acc5/);
    expect(await page.evaluate("window.notReloaded")).toBe(true);
    await screenshot(page, "topology-map-gone");
    await agent.update(dist2);
  });

  it("narrows to one folder with the folder picker, and a click on a node opens it", async () => {
    await page.getByRole("combobox", { name: "Folder" }).fill("Site B");
    await page.getByRole("option", { name: /Site B/ }).click();
    // Site B: dist2 and acc4–acc6 (acc5's link is gone): the links between them only.
    await page.getByTestId("map-summary").filter({ hasText: "4 nodes" }).waitFor();
    expect(await map().locator("a[data-node]").count()).toBe(4);
    expect(await linksIn("up").count()).toBe(2);
    await map()
      .locator(`a[data-node="${ids.get("dist2")}"]`)
      .click();
    await page.waitForURL(`**/#/node/${ids.get("dist2")}`);
  });
});
