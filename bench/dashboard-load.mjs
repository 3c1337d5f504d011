/* global fetch */
// Dashboard cold load in chromium (`npm run bench:dashboard-load`; needs `npm run build` first, which builds the app).
//
// The service: `node dist/core/main.js` as a child process on a fresh database (DATABASE_URL, else an embedded
// PostgreSQL), every built-in plugin, no embedded poller, no passive listener; an operator account; 200 nodes and one
// active alert per 10 nodes are NOT seeded: the page's cost is the app's, the data's cost is the API's (bench/http-load).
// Each of BENCH_RUNS (default 5) runs opens a new browser context (empty cache) on `/` in Debian's chromium (headless,
// playwright-core) and records: first contentful paint (the sign-in form), the bytes of JavaScript and CSS as they
// crossed the wire (compressed: the service sends the .br files vite's build wrote), and the time from pressing
// "Sign in" to the overview showing its alert list (three API calls and the Socket.IO handshake).
// Prints the median and the worst run, and the raw (uncompressed) JS size.
import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { benchStore, bootKernel, load, MAIN, print } from "./lib/kernel.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CHROMIUM = process.env.NMS_CHROMIUM ?? "/usr/bin/chromium";

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first (npm run bench:dashboard-load does).`);
  process.exit(1);
}

const admin = randomBytes(24).toString("hex");
const { dataDir, database, cleanup } = benchStore("dashboard");
let browser;
try {
  const configFile = join(dataDir, "bench-config.json");
  writeFileSync(
    configFile,
    JSON.stringify({
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: null, tcp: null, tls: null }, traps: { udp: null } },
        flows: { udp: null },
      },
    }),
  );
  const kernel = await bootKernel({
    DATABASE_URL: await database(),
    NMS_DATA_DIR: dataDir,
    NMS_BOOTSTRAP_TOKEN: admin,
    NMS_CONFIG: configFile,
    NMS_LOG_LEVEL: "warn",
  });
  const res = await fetch(`${kernel.url}/api/v1/accounts`, {
    method: "POST",
    headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
    body: JSON.stringify({ username: "bench-op", password: "bench-password-1", role: "operator", scope: "All" }),
  });
  if (res.status !== 201) throw new Error(`account: ${res.status} ${await res.text()}`);

  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"] });
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
    const types = new Map();
    const bytes = { Script: 0, Stylesheet: 0, Document: 0 };
    cdp.on("Network.responseReceived", (e) => types.set(e.requestId, e.type));
    cdp.on("Network.loadingFinished", (e) => {
      const t = types.get(e.requestId);
      if (t in bytes) bytes[t] += e.encodedDataLength;
    });
    await page.goto(`${kernel.url}/`, { waitUntil: "load" });
    await page.getByLabel("Username").waitFor();
    const fcp = await page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null");
    const js = bytes.Script;
    const css = bytes.Stylesheet;
    await page.getByLabel("Username").fill("bench-op");
    await page.getByLabel("Password").fill("bench-password-1");
    const t0 = Date.now();
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("No active alerts.").waitFor();
    const overviewMs = Date.now() - t0;
    runs.push({ fcp, js, css, overviewMs, doc: bytes.Document });
    await context.close();
  }
  const rawJs = await (async () => {
    const html = await (await fetch(`${kernel.url}/`, { headers: { "Accept-Encoding": "identity" } })).text();
    let total = 0;
    for (const m of html.matchAll(/src="\.\/(assets\/[^"]+\.js)"/g))
      total += (await (await fetch(`${kernel.url}/${m[1]}`, { headers: { "Accept-Encoding": "identity" } })).arrayBuffer()).byteLength;
    return total;
  })();
  await browser.close();
  browser = null;
  await kernel.stop();

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const worst = (xs) => Math.max(...xs);
  print("dashboard_runs", RUNS);
  print("dashboard_fcp_ms_median", Math.round(median(runs.map((r) => r.fcp))));
  print("dashboard_fcp_ms_worst", Math.round(worst(runs.map((r) => r.fcp))));
  print("dashboard_js_bytes_compressed", median(runs.map((r) => r.js)));
  print("dashboard_js_bytes_raw", rawJs);
  print("dashboard_css_bytes_compressed", median(runs.map((r) => r.css)));
  print("dashboard_html_bytes_compressed", median(runs.map((r) => r.doc)));
  print("dashboard_signin_to_overview_ms_median", median(runs.map((r) => r.overviewMs)));
  print("dashboard_signin_to_overview_ms_worst", worst(runs.map((r) => r.overviewMs)));
  print("load", load());
} finally {
  await browser?.close().catch(() => undefined);
  await cleanup();
}
process.exit(0);
