/**
 * http.stopDrainMs (NMS_STOP_DRAIN_MS): on SIGTERM the replica first only says it is not ready (the health routes
 * answer `stopping`, /health/ready 503) while it still serves API requests, so a balancer's check takes it out of
 * rotation before anything is refused; after the drain time it stops as without one (test/boot/readiness.test.ts).
 */
import { rmSync } from "node:fs";
import { createTestDatabase } from "../support/db.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";

const TOKEN = "stop-drain-bootstrap-token-0123456789abcdef";
const DRAIN_MS = 1500;
let k: SpawnedKernel;

beforeAll(async () => {
  k = await spawnKernel({ env: { DATABASE_URL: await createTestDatabase(), NMS_BOOTSTRAP_TOKEN: TOKEN, NMS_STOP_DRAIN_MS: String(DRAIN_MS) } });
}, 60_000);

afterAll(async () => {
  await k?.stop("SIGKILL");
  if (k) rmSync(k.dataDir, { recursive: true, force: true });
});

it("reports not ready while it still serves for the drain time, then stops", async () => {
  const get = (path: string, auth = false) => fetch(`${k.url}/api/v1${path}`, auth ? { headers: { authorization: `Bearer ${TOKEN}` } } : {});
  expect((await get("/health/ready")).status).toBe(200);
  const signalled = Date.now();
  const exit = k.stop("SIGTERM");
  // Give the signal a moment to arrive; well inside the drain time.
  await new Promise((r) => setTimeout(r, 200));

  const ready = await get("/health/ready");
  expect(ready.status).toBe(503);
  expect(await ready.json()).toEqual({ ready: false, status: "stopping" });
  const live = await get("/health/live");
  expect(live.status).toBe(200);
  expect(await live.json()).toMatchObject({ status: "alive", phase: "stopping" });
  const health = await get("/health");
  expect(health.status).toBe(503);
  expect(await health.json()).toMatchObject({ status: "stopping", ready: false });
  // The API still answers as usual.
  const accounts = await get("/accounts", true);
  expect(accounts.status).toBe(200);
  expect(Date.now() - signalled).toBeLessThan(DRAIN_MS);

  expect(await exit).toBe(0);
  expect(Date.now() - signalled).toBeGreaterThanOrEqual(DRAIN_MS);
  expect(k.stdout()).toContain("draining: not ready, still serving");
});
