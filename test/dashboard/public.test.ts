/**
 * Public-dashboard mode (NMS_PUBLIC_DASHBOARD=true) in chromium: an anonymous visitor gets the read-only views the mode
 * opens (interface top-N, the live alert feed) without signing in, no settings, and can still sign in.
 */
import type { Browser } from "playwright-core";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { dashboardPlugin } from "../../plugins/dashboard/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { ensureWebBuilt, launch, openDashboard, screenshot, signIn } from "./browser.js";

let k: TestKernel;
let browser: Browser;

beforeAll(async () => {
  ensureWebBuilt();
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, dashboardPlugin], env: { NMS_PUBLIC_DASHBOARD: "true" } });
  await k.kernel.auth.createAccount({ username: "pub-admin", password: "public-password-1", role: "admin", scope: "All" });
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await k?.stop();
});

describe("public-dashboard mode", () => {
  it("shows anonymous visitors the open views without a sign-in, and nothing else", async () => {
    const health = await k.request("GET", "/health", { token: null });
    expect((health.body as { public_dashboard: boolean }).public_dashboard).toBe(true);
    const { page, context } = await openDashboard(browser, k.url);
    await page.getByText("public view").waitFor();
    expect(await page.getByRole("heading", { name: "Sign in" }).count()).toBe(0);
    const nav = await page.getByRole("navigation", { name: "Views" }).textContent();
    expect(nav).toContain("Top interfaces");
    expect(nav).not.toContain("Thresholds");
    await page.getByTestId("live-feed").waitFor({ state: "attached" });
    await page.goto(`${k.url}/#/top`);
    await page.getByTestId("top-n").getByText("No interface has samples yet.").waitFor();
    expect(await page.locator(".error").count()).toBe(0);
    await screenshot(page, "public-top-interfaces");
    // A settings route falls back to the overview for anonymous visitors.
    await page.goto(`${k.url}/#/settings/thresholds`);
    await page.getByTestId("live-feed").waitFor({ state: "attached" });
    expect(await page.locator("#threshold-form").count()).toBe(0);
    // Signing in is still possible.
    await page.getByRole("button", { name: "Sign in" }).click();
    await signIn(page, "pub-admin", "public-password-1");
    await page.getByRole("link", { name: "Thresholds" }).waitFor();
    await context.close();
  }, 60_000);

  it("serves the app at /ui/ too, with a CSP that allows nothing from other origins, and precompressed JS", async () => {
    const res = await fetch(`${k.url}/ui/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    const js = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await fetch(`${k.url}/ui/${js}`, { headers: { "Accept-Encoding": "br" } });
    expect(asset.headers.get("content-encoding")).toBe("br");
    expect(asset.headers.get("cache-control")).toContain("immutable");
  });
});
