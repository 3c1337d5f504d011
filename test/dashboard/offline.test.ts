/**
 * Every page the service serves loads only from the service itself: the dashboard and Swagger UI (/api/docs) in real
 * chromium, with every request to another origin recorded and refused. Offline such a request breaks the page; online
 * it tells a third party who opened it.
 */
import type { Browser, BrowserContext } from "playwright-core";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { dashboardPlugin } from "../../plugins/dashboard/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { ensureWebBuilt, launch } from "./browser.js";

let k: TestKernel;
let browser: Browser;

beforeAll(async () => {
  ensureWebBuilt();
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, dashboardPlugin] });
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await k?.stop();
});

/** A browser context that refuses, and lists, every request that leaves the service's origin. */
async function sameOriginOnly(): Promise<{ context: BrowserContext; elsewhere: string[] }> {
  const context = await browser.newContext();
  const origin = new URL(k.url).origin;
  const elsewhere: string[] = [];
  await context.route("**/*", async (route) => {
    const url = route.request().url();
    if (url.startsWith("data:") || new URL(url).origin === origin) return route.continue();
    elsewhere.push(url);
    return route.abort("blockedbyclient");
  });
  return { context, elsewhere };
}

describe("pages the service serves", () => {
  it("Swagger UI renders the document from this origin alone", async () => {
    const { context, elsewhere } = await sameOriginOnly();
    const page = await context.newPage();
    await page.goto(`${k.url}/api/docs/`);
    await page.locator(".opblock").first().waitFor();
    // One tag per plugin with routes, from the document the kernel built (GET /api/v1/openapi.json).
    const tags = await page.locator(".opblock-tag").evaluateAll((els) => els.map((e) => e.getAttribute("data-tag")));
    expect(tags).toEqual(["core", "inventory", "polling", "alerts"]);
    expect(await page.locator(".opblock-summary-path", { hasText: "/api/v1/nodes" }).count()).toBeGreaterThan(0);
    await page.waitForLoadState("networkidle");
    expect(elsewhere).toEqual([]);
    await context.close();
  });

  it("the dashboard loads from this origin alone", async () => {
    const { context, elsewhere } = await sameOriginOnly();
    const page = await context.newPage();
    await page.goto(`${k.url}/`);
    await page.getByLabel("Username").waitFor();
    await page.waitForLoadState("networkidle");
    expect(elsewhere).toEqual([]);
    await context.close();
  });

  it("refuses and lists a request to another origin (the check can fail)", async () => {
    const { context, elsewhere } = await sameOriginOnly();
    const page = await context.newPage();
    await page.goto(`${k.url}/api/docs/`);
    await page.evaluate(() => fetch("http://127.0.0.2:9/elsewhere").catch(() => undefined));
    expect(elsewhere).toEqual(["http://127.0.0.2:9/elsewhere"]);
    await context.close();
  });
});
