/**
 * The operator console's graphs, events, reports, findings and flows in real Chromium against a real kernel: a node
 * polled from snmpsim (CPU, memory and storage rows, two interfaces, round-trip time), a real snmptrap linkDown and a
 * private trap, softflowd's export of a pcap, a report run and downloaded, an analysis run's findings. Also the first
 * page load: uPlot is not in the entry chunk. Writes docs/screenshots/console-graphs-*.png.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page, Request } from "playwright-core";
import { projectRoot } from "../../core/paths.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { analysisPlugin } from "../../plugins/analysis/index.js";
import { dashboardPlugin } from "../../plugins/dashboard/index.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { flowsPlugin } from "../../plugins/flows/index.js";
import { inventoryPlugin, NodeAddresses } from "../../plugins/inventory/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { reportsPlugin } from "../../plugins/reports/index.js";
import { cleanupFlowPeers, flowTempDir, generateTraffic, runSoftflowd, writePcap } from "../support/flowPeers.js";
import { startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { snmptrap } from "../support/trapSenders.js";
import { until } from "../support/wait.js";
import { ensureWebBuilt, launch, openDashboard, screenshot, signIn } from "./browser.js";

const INTERVAL_SECS = 5;
const PASSWORD = "console-graphs-pw-1";
const PRIVATE_TRAP = "1.3.6.1.4.1.99999.0.7";

let k: TestKernel;
let agent: SnmpsimAgent;
let browser: Browser;
let page: Page;
let nodeA: string;
let quietNode: string;
let folderA: string;
let folderB: string;
let trapPort: number;
let flowPort: number;

type Row = Record<string, unknown>;

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

/** Points of a node's series in the last hour (at least `min`), as the graphs will ask for them. */
async function hasPoints(metric: string, query: string, min = 2): Promise<boolean> {
  const res = await k.request("GET", `/nodes/${nodeA}/metrics/${metric}/history?${query}`);
  return res.status === 200 && (res.body as { points: unknown[] }).points.length >= min;
}

/** The history requests a page makes from now on (their query parameters). */
function recordHistory(p: Page): { seen: URLSearchParams[]; stop: () => void } {
  const seen: URLSearchParams[] = [];
  const on = (r: Request) => {
    const u = new URL(r.url());
    if (/\/metrics\/[^/]+\/history$/.test(u.pathname)) seen.push(u.searchParams);
  };
  p.on("request", on);
  return { seen, stop: () => p.off("request", on) };
}
const span = (q: URLSearchParams) => Number(q.get("to")) - Number(q.get("from"));

beforeAll(async () => {
  ensureWebBuilt();
  agent = await startSnmpsim({
    devices: [
      {
        community: "graphs-a",
        sysName: "graph-a",
        interfaces: [
          { name: "eth0", inBytesPerSec: 125_000, outBytesPerSec: 20_000, speedMbps: 1000 },
          { name: "eth1", inBytesPerSec: 1000, outBytesPerSec: 2000, speedMbps: 100 },
        ],
        hc: true,
        hostResources: true,
      },
    ],
  });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin, eventsPlugin, flowsPlugin, reportsPlugin, analysisPlugin, dashboardPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS },
        events: { syslog: { udp: 0, tcp: 0, bindAddress: "127.0.0.1" }, traps: { udp: 0, bindAddress: "127.0.0.1" }, flushMs: 50 },
        flows: { udp: 0, bindAddress: "127.0.0.1", flushMs: 200 },
      },
    },
  });
  const listeners = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners;
  trapPort = listeners.find((l) => l.name === "traps.udp")!.port as number;
  flowPort = listeners.find((l) => l.name === "flows.udp")!.port as number;
  folderA = await created("/node-groups", { name: "Graphs Alpha" });
  folderB = await created("/node-groups", { name: "Graphs Bravo" });
  const cred = await created("/credentials", { name: "graphs a", kind: "snmp_v2c", community: "graphs-a" });
  // 127.0.0.1 is graph-a: traps and flows from loopback are attributed to it.
  nodeA = await created("/nodes", { name: "graph-a", address: agent.host, snmp_port: agent.port, credential_id: cred, group_id: folderA });
  // A node in a pool no poller serves: never heard from (the silent_nodes analysis finds it).
  quietNode = await created("/nodes", { name: "quiet-c", address: "127.0.0.3", group_id: folderA, pool: "unserved" });
  await created("/nodes", { name: "other-b", address: "127.0.0.2", group_id: folderB });
  await k.context("inventory").get(NodeAddresses).reload();
  await k.kernel.auth.createAccount({ username: "graphs-op", password: PASSWORD, role: "operator", scope: "All" });
  await k.kernel.auth.createAccount({ username: "graphs-viewer", password: PASSWORD, role: "viewer", scope: "All" });
  await k.kernel.auth.createAccount({ username: "graphs-scoped", password: PASSWORD, role: "viewer", scope: { folders: [folderB] } });
  browser = await launch();
  ({ page } = await openDashboard(browser, k.url));
  await signIn(page, "graphs-op", PASSWORD);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await k?.stop();
  await stopAllSnmpAgents();
  await cleanupFlowPeers();
});

describe("node graphs", () => {
  it("draws CPU, memory, storage, round-trip time and each interface with uPlot from real polls", async () => {
    await until(
      "CPU, storage, RTT and interface samples",
      async () =>
        (await hasPoints("cpu_load_pct", "row=196608")) &&
        (await hasPoints("storage_used_pct", "row=1")) &&
        (await hasPoints("rtt_ms", "")) &&
        (await hasPoints("if_in_bps", "ifindex=1")),
      4 * INTERVAL_SECS * 1000 + 20_000,
    );
    await page.goto(`${k.url}/#/node/${nodeA}`);
    await page.getByRole("link", { name: "Graphs" }).click();
    await page.waitForURL(/#\/node\/[^/]+\/graphs/);
    for (const gid of ["cpu", "memory", "storage", "rtt", "if-1", "if-2"]) {
      const chart = page.getByTestId(`chart-${gid}`);
      await chart.locator(".uplot canvas").waitFor();
      expect(Number(await chart.getAttribute("data-points"))).toBeGreaterThan(0);
    }
    // Memory is the storage row named "Physical memory"; CPU has one series per processor.
    expect(await page.getByTestId("chart-memory").locator(".u-legend").textContent()).toContain("Physical memory");
    expect(await page.getByTestId("chart-cpu").locator(".u-legend .u-series").count()).toBe(3);
  }, 90_000);

  it("a preset changes the range the requests carry; a drag across a chart zooms (a shorter range), and Reset zoom goes back", async () => {
    const rec = recordHistory(page);
    await page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "6h" }).click();
    await until("6 h history requests", async () => rec.seen.some((q) => Math.abs(span(q) - 6 * 3600) <= 2));
    const sixHours = rec.seen.filter((q) => Math.abs(span(q) - 6 * 3600) <= 2);
    // Each carries a step (the range in about 600 buckets).
    expect(sixHours.every((q) => Number(q.get("step")) === 36)).toBe(true);
    expect(page.url()).toMatch(/from=\d+&to=\d+/);

    // The charts are drawn again when their 6 h data arrives: wait until the interface chart stays the same element.
    const over = page.getByTestId("chart-if-1").locator(".u-over");
    const mark = `document.querySelector('[data-testid="chart-if-1"] .u-over')`;
    await until("the interface chart drawn with the 6 h data", async () => {
      await page.evaluate(`${mark} && (${mark}.dataset.mark = "1")`);
      await new Promise((r) => setTimeout(r, 500));
      return (await page.evaluate(`${mark}?.dataset.mark === "1"`)) as boolean;
    });
    rec.seen.length = 0;
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2, { steps: 8 });
    await page.mouse.move(box.x + box.width * 0.95, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
    await until("zoomed requests", async () => rec.seen.some((q) => span(q) < 6 * 3600 * 0.6));
    const zoomed = rec.seen.find((q) => span(q) < 6 * 3600 * 0.6)!;
    expect(span(zoomed)).toBeGreaterThan(60);
    await page.getByRole("button", { name: "Reset zoom" }).click();
    await until("the 6 h range again", async () => rec.seen.some((q) => Math.abs(span(q) - 6 * 3600) <= 2));
    rec.stop();
  }, 60_000);

  it("a custom range from the From/To inputs is what the requests ask for", async () => {
    const rec = recordHistory(page);
    const form = page.getByRole("form", { name: "Custom range" });
    const local = (t: number) => new Date(t - new Date(t).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    const to = Date.now();
    await form.getByLabel("From").fill(local(to - 10 * 60_000));
    await form.getByLabel("To").fill(local(to + 60_000));
    await form.getByRole("button", { name: "Apply" }).click();
    await until("11 min requests", async () => rec.seen.some((q) => Math.abs(span(q) - 11 * 60) <= 60));
    rec.stop();
    await page.getByTestId("chart-if-1").locator(".uplot canvas").waitFor();
    await new Promise((r) => setTimeout(r, 500));
    await screenshot(page, "console-graphs-node");
  }, 30_000);

  it("one click from an alert row opens that interface's graph", async () => {
    await created("/thresholds", { metric: "if_in_bps", scope_level: "global", warning_above: 500_000 });
    await page.goto(`${k.url}/#/overview`);
    const row = page.locator(`tr[data-node="${nodeA}"]`).first();
    await row.waitFor({ timeout: 3 * INTERVAL_SECS * 1000 + 10_000 });
    await row.getByRole("link", { name: /^Graph of/ }).click();
    await page.waitForURL(/\/graphs\?metric=if_in_bps&ifindex=1/);
    await page.locator("#graph-if-1.focus").getByTestId("chart-if-1").locator(".uplot canvas").waitFor();
  }, 60_000);
});

describe("events", () => {
  it("names a linkDown trap, shows its varbinds and the node's name; the chart's axis is times; q narrows the list", async () => {
    await snmptrap([
      "-v2c",
      "-c",
      "public",
      `127.0.0.1:${trapPort}`,
      "",
      "1.3.6.1.6.3.1.1.5.3",
      "1.3.6.1.2.1.2.2.1.1.2",
      "i",
      "2",
      "1.3.6.1.2.1.2.2.1.8.2",
      "i",
      "2",
    ]);
    await snmptrap(["-v2c", "-c", "public", `127.0.0.1:${trapPort}`, "", PRIVATE_TRAP, "1.3.6.1.4.1.99999.1.1.0", "s", "fan 2"]);
    await until("both traps stored", async () => ((await k.request("GET", "/events?kind=trap")).body as Row[]).length === 2);
    await page.goto(`${k.url}/#/events`);
    const linkDown = page.locator('tr[data-kind="trap"]').filter({ hasText: "IF-MIB::linkDown" });
    await linkDown.waitFor();
    expect(await linkDown.getByTestId("event-source").textContent()).toBe("graph-a");
    await linkDown.getByRole("button", { name: /Show 2 varbinds/ }).click();
    const varbinds = page.getByTestId("varbinds");
    await varbinds.waitFor();
    expect(await varbinds.textContent()).toContain("IF-MIB::ifIndex.2");
    expect(await varbinds.textContent()).toContain("IF-MIB::ifOperStatus.2");

    const chart = page.getByTestId("events-chart");
    await chart.locator(".uplot canvas").waitFor();
    // An hour's axis: several distinct clock times.
    await until("time labels on the x axis", async () => {
      const ticks = ((await chart.getAttribute("data-x-ticks")) ?? "").split("|");
      return ticks.length >= 3 && new Set(ticks).size === ticks.length && ticks.every((t) => /^\d{1,2}:\d{2}( [AP]M)?$/.test(t));
    });

    // The private trap has no name yet: its OID is shown.
    const privateRow = page.locator('tr[data-kind="trap"]').filter({ hasText: PRIVATE_TRAP });
    await privateRow.waitFor();
    const filters = page.getByRole("form", { name: "Event filters" });
    await filters.getByLabel("Search events").fill("99999");
    await filters.getByRole("button", { name: "Search", exact: true }).click();
    await until("only the private trap listed", async () => (await page.locator("tr[data-event]").count()) === 1);
    expect(await page.locator("tr[data-event]").textContent()).toContain(PRIVATE_TRAP);
  }, 60_000);

  it("a trap OID named in the UI shows by that name", async () => {
    const form = page.locator("#trap-name-new");
    await form.getByLabel("OID *").fill(PRIVATE_TRAP);
    await form.getByLabel("Name *").fill("ACME-MIB::fanFailure");
    await form.getByRole("button", { name: "Add trap name" }).click();
    await page.getByTestId("trap-names").locator(`tr[data-oid="${PRIVATE_TRAP}"]`).waitFor();
    await page.reload();
    await signIn(page, "graphs-op", PASSWORD);
    await page.goto(`${k.url}/#/events`);
    await page.locator('tr[data-kind="trap"]').filter({ hasText: "ACME-MIB::fanFailure" }).waitFor();
    await page.getByTestId("events-chart").locator(".uplot canvas").waitFor();
    await page
      .locator('tr[data-kind="trap"]')
      .filter({ hasText: "IF-MIB::linkDown" })
      .getByRole("button", { name: /Show 2 varbinds/ })
      .click();
    await page.getByTestId("varbinds").waitFor();
    await screenshot(page, "console-graphs-events");
  }, 30_000);
});

describe("reports, findings, flows", () => {
  it("runs a report from the UI, follows its progress, and downloads the file", async () => {
    await created("/reports/definitions", { name: "Weekly inventory", spec: { sections: [{ kind: "inventory" }], range_days: 7 } });
    await page.goto(`${k.url}/#/reports`);
    await page.getByRole("button", { name: "Run Weekly inventory" }).click();
    await page.getByTestId("run-progress").filter({ hasText: "succeeded" }).waitFor({ timeout: 60_000 });
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByTestId("run-progress").locator("..").getByRole("button", { name: "Download HTML of Weekly inventory" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^report-Weekly-inventory-[0-9a-f]{8}\.html$/);
    const path = await download.path();
    // The inventory section counts the nodes by folder.
    expect(readFileSync(path, "utf8")).toContain("<td>Graphs Alpha</td>");
    await page.getByTestId("report-runs").locator("tr[data-status=succeeded]").waitFor();
    await screenshot(page, "console-graphs-reports");
  }, 90_000);

  it("lists analysis findings (the silent node)", async () => {
    const res = await k.request("POST", "/analysis/jobs", { body: { tool: "silent_nodes", scope_kind: "all" } });
    expect(res.status).toBe(202);
    const job = (res.body as { id: string }).id;
    await until("the analysis job", async () => ((await k.request("GET", `/analysis/jobs/${job}`)).body as Row).status === "succeeded");
    await page.goto(`${k.url}/#/reports/findings`);
    const finding = page.getByTestId("findings").locator("tr[data-finding]").filter({ hasText: "quiet-c" });
    await finding.waitFor();
    expect(await finding.textContent()).toContain("silent_nodes");
    expect(await finding.getByRole("link", { name: "quiet-c" }).getAttribute("href")).toBe(`#/node/${quietNode}`);
  }, 60_000);

  it("shows flows over a range and drills down from a conversation to its exporter and interface graphs", async () => {
    const traffic = generateTraffic(40, { startMs: Date.now() - 20 * 60_000, spreadMs: 5 * 60_000 });
    const pcap = join(flowTempDir(), "console.pcap");
    writePcap(pcap, traffic.packets);
    await runSoftflowd({ version: 9, pcap, port: flowPort });
    await until("flows stored", async () => ((await k.request("GET", "/flow/conversations?limit=5")).body as Row[]).length > 0);
    await page.goto(`${k.url}/#/reports/flows`);
    await page.getByRole("group", { name: "Flow range" }).getByRole("button", { name: "6h" }).click();
    const first = page.getByTestId("flow-conversations").locator("tbody tr").first();
    await first.getByRole("button", { name: /^Exporters of/ }).click();
    const exporters = page.getByTestId("conversation-exporters");
    await exporters.getByText("graph-a").waitFor();
    expect(await exporters.getByRole("link", { name: "interface graphs" }).getAttribute("href")).toMatch(
      new RegExp(`^#/node/${nodeA}/graphs\\?from=\\d+&to=\\d+$`),
    );
  }, 90_000);
});

describe("roles and scope", () => {
  it("a viewer sees the graphs and events but no write controls (no Run now, no trap-name form)", async () => {
    const { page: viewer, context } = await openDashboard(browser, k.url);
    await signIn(viewer, "graphs-viewer", PASSWORD);
    await viewer.goto(`${k.url}/#/node/${nodeA}/graphs`);
    await viewer.getByTestId("chart-cpu").locator(".uplot canvas").waitFor();
    await viewer.goto(`${k.url}/#/events`);
    await viewer.getByTestId("trap-names").waitFor();
    expect(await viewer.locator("#trap-name-new").count()).toBe(0);
    expect(await viewer.getByRole("button", { name: /^Delete / }).count()).toBe(0);
    await viewer.goto(`${k.url}/#/reports`);
    await viewer.getByTestId("report-definitions").locator("tr[data-definition]").first().waitFor();
    expect(await viewer.getByRole("button", { name: /^Run / }).count()).toBe(0);
    // Downloads are reads: a viewer may download a finished run.
    expect(await viewer.getByRole("button", { name: /^Download HTML/ }).count()).toBeGreaterThan(0);
    await context.close();
  }, 30_000);

  it("a folder-scoped account sees only its folders: no graphs of another folder's node, no events or flows of it", async () => {
    const { page: scoped, context } = await openDashboard(browser, k.url);
    await signIn(scoped, "graphs-scoped", PASSWORD);
    await scoped.goto(`${k.url}/#/node/${nodeA}/graphs`);
    await scoped.getByRole("alert").first().waitFor();
    expect(await scoped.locator(".uplot").count()).toBe(0);
    await scoped.goto(`${k.url}/#/events`);
    await scoped.getByText("No events.").waitFor();
    await scoped.goto(`${k.url}/#/reports/flows`);
    await scoped.getByText("No flows in this range.").waitFor();
    await context.close();
  }, 30_000);
});

describe("first page load", () => {
  it("keeps uPlot out of the entry chunk and reports the entry's size and the time to first paint", async () => {
    const web = join(projectRoot(), "dist", "plugins", "dashboard", "web");
    const manifest = JSON.parse(readFileSync(join(web, ".vite", "manifest.json"), "utf8")) as Record<
      string,
      { file: string; css?: string[]; isEntry?: boolean }
    >;
    const entry = Object.values(manifest).find((m) => m.isEntry)!;
    const files = [entry.file, ...(entry.css ?? [])];
    const entryJs = readFileSync(join(web, entry.file), "utf8");
    // uPlot's class and its CSS live in the lazily loaded charts chunk only.
    expect(entryJs).not.toContain('"uplot"');
    expect(readFileSync(join(web, manifest["src/charts.tsx"].file), "utf8")).toContain('"uplot"');
    const size = (suffix: string) => files.reduce((n, f) => n + statSync(join(web, f + suffix)).size, 0);
    const sizes = { raw: size(""), gzip: size(".gz"), brotli: size(".br") };

    const paints: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { page: fresh, context } = await openDashboard(browser, k.url);
      await fresh.getByRole("heading", { name: "Sign in" }).waitFor();
      const p = (await fresh.evaluate("performance.getEntriesByType('paint').map((e) => [e.name, e.startTime])")) as [string, number][];
      const fcp = p.find(([n]) => n === "first-contentful-paint");
      if (fcp) paints.push(fcp[1]);
      await context.close();
    }
    expect(paints.length).toBeGreaterThan(0);
    paints.sort((a, b) => a - b);
    console.log(JSON.stringify({ files, sizes, firstContentfulPaintMs: paints.map((x) => Math.round(x)) }));
  }, 60_000);
});
