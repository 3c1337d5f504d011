/**
 * nms_store_embedded_up with the embedded PostgreSQL (no DATABASE_URL): 1 while it runs, 0 while the kernel's
 * supervisor restarts it after it was killed, then 1 again. (With DATABASE_URL the gauge is absent: kernel-metrics.test.ts.)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKernel, type Kernel } from "../../core/kernel/Kernel.js";
import { sampleValue, scrape } from "./exposition.js";

let k: Kernel | undefined;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "nms-metrics-embedded-"));
  k = await startKernel({
    env: { NMS_BOOTSTRAP_TOKEN: "metrics-embedded-token-0123456789" },
    overrides: {
      port: 0,
      host: "127.0.0.1",
      dataDir,
      databaseUrl: null,
      mode: "full",
      builtinPlugins: false,
      logLevel: "warn",
      jobs: { drainMs: 2000, processEvery: "1 second", lockLifetimeMs: 2000 },
    },
    plugins: [],
    print: () => undefined,
    logSink: () => undefined,
  });
}, 120_000);

afterAll(async () => {
  await k?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

it("reports the embedded server up, down while it is restarted after a kill, and up again", async () => {
  const f = await scrape(k!.url);
  expect(sampleValue(f, "nms_store_info", { kind: "embedded" })).toBe(1);
  expect(sampleValue(f, "nms_store_embedded_up")).toBe(1);

  const postmaster = Number(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
  expect(postmaster).toBeGreaterThan(1);
  const seen: number[] = [];
  process.kill(postmaster, "SIGKILL");
  // Scraped every 20 ms: the restart (a PostgreSQL start-up) takes longer than that.
  const deadline = Date.now() + 60_000;
  while (!(seen.includes(0) && seen[seen.length - 1] === 1) && Date.now() < deadline) {
    seen.push(sampleValue(await scrape(k!.url), "nms_store_embedded_up")!);
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(seen.indexOf(0)).toBeLessThan(seen.lastIndexOf(1));
}, 90_000);
