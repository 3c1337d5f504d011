/**
 * The dashboard's browser tests' tools: the built web app (built with vite when missing or older than its sources),
 * Debian's chromium through playwright-core, and screenshots into docs/screenshots/.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { projectRoot } from "../../core/paths.js";

const root = projectRoot();
const webSrc = join(root, "plugins", "dashboard", "web");
const webOut = join(root, "dist", "plugins", "dashboard", "web");

function newest(dir: string): number {
  let t = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    t = Math.max(t, s.isDirectory() ? newest(p) : s.mtimeMs);
  }
  return t;
}

/** Builds the web app unless dist/plugins/dashboard/web is newer than every source (the app's and the typed client's). */
export function ensureWebBuilt(): void {
  const manifest = join(webOut, ".vite", "manifest.json");
  const sources = Math.max(newest(webSrc), newest(join(root, "clients", "typescript", "src")));
  if (existsSync(manifest) && statSync(manifest).mtimeMs > sources) return;
  execFileSync(process.execPath, [join(root, "node_modules", "vite", "bin", "vite.js"), "build", "--config", join(webSrc, "vite.config.mjs")], {
    cwd: root,
    stdio: "pipe",
    // jest sets NODE_ENV=test, which would make vite build the development bundle: test what npm run build serves.
    env: { ...process.env, NODE_ENV: "production" },
  });
}

export const CHROMIUM = process.env.NMS_CHROMIUM ?? "/usr/bin/chromium";

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"] });
}

/** A fresh browser context (its own cookies and storage: a second person) with a page on the dashboard. */
export async function openDashboard(browser: Browser, url: string, viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${url}/`);
  return { context, page };
}

export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("whoami").waitFor();
}

const shots = join(root, "docs", "screenshots");

/** Writes docs/screenshots/<name>.png (the docs show the main views). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}
