/**
 * Each service process caches the callers its bearer tokens resolve to (core/auth/CredentialCache.ts). Whatever it
 * cached, a change made through either replica is refused or applied at once by both: a revoked API token, an ended
 * session, an account's new role or scope, a deleted account. Two service processes on one PostgreSQL; every check
 * runs right after the change's answer, with both caches warmed with the credential first.
 */
import { rmSync } from "node:fs";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";

const PASSWORD = "replica-admin-password-1";
let a: SpawnedKernel;
let b: SpawnedKernel;
let url: string;

/** An answer's body as the checks read it (an envelope, an identity, a created id or token). */
interface Answer {
  error?: { code: string };
  id?: string;
  token?: string;
  [field: string]: unknown;
}

async function call(k: SpawnedKernel, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: Answer }> {
  const res = await fetch(`${k.url}${path}`, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Answer) : {} };
}

async function login(k: SpawnedKernel, username: string, password: string): Promise<string> {
  const res = await call(k, "POST", "/api/v1/auth/sessions", undefined, { username, password });
  expect(res.status).toBe(201);
  return res.body.token!;
}

/** Uses `token` on both replicas a few times (each caches it) and expects `status` everywhere. */
async function warm(token: string, path: string, status: number): Promise<void> {
  for (let i = 0; i < 3; i++) for (const k of [a, b]) expect((await call(k, "GET", path, token)).status).toBe(status);
}

let admin: string;

beforeAll(async () => {
  url = await createTestDatabase();
  const env = { DATABASE_URL: url, NMS_ADMIN_PASSWORD: PASSWORD };
  a = await spawnKernel({ env });
  b = await spawnKernel({ env });
  admin = await login(a, "admin", PASSWORD);
}, 90_000);

afterAll(async () => {
  for (const k of [a, b]) {
    await k?.stop();
    if (k) rmSync(k.dataDir, { recursive: true, force: true });
  }
});

describe("cached credentials across replicas", () => {
  it("a revoked API token is refused at once by both replicas", async () => {
    const made = await call(a, "POST", "/api/v1/tokens", admin, { name: "to revoke", role: "admin", scope: "All" });
    expect(made.status).toBe(201);
    await warm(made.body.token!, "/api/v1/tokens", 200);
    expect((await call(a, "DELETE", `/api/v1/tokens/${made.body.id}`, admin)).status).toBe(204);
    for (const k of [b, a]) {
      const res = await call(k, "GET", "/api/v1/auth/me", made.body.token!);
      expect(res.status).toBe(401);
      expect(res.body.error?.code).toBe("unauthorized");
    }
  });

  it("a changed role or scope applies at once on both replicas; a deleted account's sessions end at once", async () => {
    const created = await call(a, "POST", "/api/v1/accounts", admin, { username: "ops", password: "ops-password-123456", role: "admin", scope: "All" });
    expect(created.status).toBe(201);
    const id = created.body.id!;
    const session = await login(b, "ops", "ops-password-123456");
    await warm(session, "/api/v1/accounts", 200);

    // Demoted through replica B: replica A refuses the admin route at once, and both report the new role.
    expect((await call(b, "PUT", `/api/v1/accounts/${id}`, admin, { role: "viewer", scope: "All" })).status).toBe(204);
    for (const k of [a, b]) {
      const refused = await call(k, "GET", "/api/v1/accounts", session);
      expect(refused.status).toBe(403);
      expect(refused.body.error?.code).toBe("permission_denied");
      expect((await call(k, "GET", "/api/v1/auth/me", session)).body).toMatchObject({ role: "viewer", scope: "All" });
    }

    // Narrowed to a folder through replica A: replica B answers with the new scope at once.
    const folder = "00000000-0000-4000-8000-00000000f01d";
    expect((await call(a, "PUT", `/api/v1/accounts/${id}`, admin, { role: "viewer", scope: { folders: [folder] } })).status).toBe(204);
    for (const k of [b, a]) expect((await call(k, "GET", "/api/v1/auth/me", session)).body).toMatchObject({ scope: { folders: [folder] } });

    // Deleted through replica A: its session is refused by both at once.
    await warm(session, "/api/v1/auth/me", 200);
    expect((await call(a, "DELETE", `/api/v1/accounts/${id}`, admin)).status).toBe(204);
    for (const k of [b, a]) expect((await call(k, "GET", "/api/v1/auth/me", session)).status).toBe(401);
  });

  it("a session ended on one replica (logout) is refused at once by the other", async () => {
    const session = await login(a, "admin", PASSWORD);
    await warm(session, "/api/v1/auth/me", 200);
    expect((await call(a, "DELETE", "/api/v1/auth/sessions/current", session)).status).toBe(204);
    expect((await call(b, "GET", "/api/v1/auth/me", session)).status).toBe(401);
  });

  it("a change made straight in the database (a revoke by SQL, an expiry) is seen at once too", async () => {
    const made = await call(b, "POST", "/api/v1/tokens", admin, { name: "expires by hand", role: "viewer", scope: "All" });
    await warm(made.body.token!, "/api/v1/auth/me", 200);
    await rawQuery(url, "UPDATE core.api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [made.body.id]);
    for (const k of [a, b]) {
      const res = await call(k, "GET", "/api/v1/auth/me", made.body.token!);
      expect(res.status).toBe(401);
      expect(res.body.error?.code).toBe("token_expired");
    }
  });

  it("under concurrent use, no request that starts after a revoke's answer is let in", async () => {
    const made = await call(a, "POST", "/api/v1/tokens", admin, { name: "busy", role: "viewer", scope: "All" });
    await warm(made.body.token!, "/api/v1/auth/me", 200);
    let revoked = false;
    const after: number[] = [];
    // Both replicas hammered with the token while replica A revokes it; requests sent once the revoke answered must all fail.
    const hammer = async (k: SpawnedKernel) => {
      for (let i = 0; i < 60; i++) {
        const sentAfter = revoked;
        const { status } = await call(k, "GET", "/api/v1/auth/me", made.body.token!);
        if (sentAfter) after.push(status);
      }
    };
    const load = Promise.all([hammer(a), hammer(b), hammer(a), hammer(b)]);
    await new Promise((r) => setTimeout(r, 30));
    expect((await call(a, "DELETE", `/api/v1/tokens/${made.body.id}`, admin)).status).toBe(204);
    revoked = true;
    await load;
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(after)).toEqual(new Set([401]));
  });
});
