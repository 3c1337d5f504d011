/**
 * The failed-login limit holds across replicas: two service processes on one PostgreSQL count one window of failures
 * (core.login_failures), so two replicas allow what one does, not twice as much.
 */
import { rmSync } from "node:fs";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";

const MAX = 4;
let a: SpawnedKernel | undefined;
let b: SpawnedKernel | undefined;
let url: string;

async function login(k: SpawnedKernel, username: string, password: string): Promise<{ status: number; code: string | null; retry: string | null }> {
  const res = await fetch(`${k.url}/api/v1/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code ?? null, retry: res.headers.get("retry-after") };
}

beforeAll(async () => {
  url = await createTestDatabase();
  const env = { DATABASE_URL: url, NMS_LOGIN_MAX_FAILURES: String(MAX), NMS_LOGIN_WINDOW_SECS: "300", NMS_ADMIN_PASSWORD: "replica-admin-password-1" };
  a = await spawnKernel({ env });
  b = await spawnKernel({ env });
}, 90_000);

afterAll(async () => {
  for (const k of [a, b]) {
    await k?.stop();
    if (k) rmSync(k.dataDir, { recursive: true, force: true });
  }
});

describe("the login limit across replicas", () => {
  it("counts failures made on either replica in one window, and refuses on both once reached", async () => {
    // Two failures on each replica: four in all, the limit.
    for (const k of [a!, b!, a!, b!]) expect((await login(k, "admin", "wrong-password")).status).toBe(401);
    for (const k of [a!, b!]) {
      const refused = await login(k, "admin", "replica-admin-password-1");
      expect(refused).toMatchObject({ status: 429, code: "too_many_attempts" });
      expect(Number(refused.retry)).toBeGreaterThan(0);
      expect(Number(refused.retry)).toBeLessThanOrEqual(300);
    }
    expect(await rawQuery(url, "SELECT count(*)::int AS n FROM core.login_failures WHERE key = 'u:admin'")).toEqual([{ n: MAX }]);
  });

  it("forgets a username's failures on a successful login, on every replica", async () => {
    await rawQuery(url, "DELETE FROM core.login_failures");
    for (const k of [a!, b!, a!]) expect((await login(k, "admin", "wrong-password")).status).toBe(401);
    expect((await login(b!, "admin", "replica-admin-password-1")).status).toBe(201);
    // The window starts again: three more failures are allowed before the fourth is the limit.
    for (const k of [a!, b!, a!]) expect((await login(k, "admin", "wrong-password")).status).toBe(401);
    expect((await login(b!, "admin", "replica-admin-password-1")).status).toBe(201);
  });
});
