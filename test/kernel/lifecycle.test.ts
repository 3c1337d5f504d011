import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { BOOTSTRAP_TOKEN, startTestKernel } from "../support/testKernel.js";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A gzip-encoded JSON POST with exactly these bytes (supertest re-serialises buffers). */
function rawPost(url: string, body: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", headers: { "Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": body.length } },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("bootstrap across restarts", () => {
  it("revokes the bootstrap token when NMS_BOOTSTRAP_TOKEN is removed or changed", async () => {
    const db = await createTestDatabase();
    const first = await startTestKernel({ databaseUrl: db });
    expect((await first.http.get("/api/v1/auth/me").set(bearer(BOOTSTRAP_TOKEN))).status).toBe(200);
    await first.stop();

    const changed = await startTestKernel({ databaseUrl: db, env: { NMS_BOOTSTRAP_TOKEN: "another-bootstrap-token-9876543210" } });
    expect((await changed.http.get("/api/v1/auth/me").set(bearer(BOOTSTRAP_TOKEN))).status).toBe(401);
    expect((await changed.http.get("/api/v1/auth/me").set(bearer("another-bootstrap-token-9876543210"))).status).toBe(200);
    await changed.stop();

    const none = await startTestKernel({ databaseUrl: db, env: { NMS_BOOTSTRAP_TOKEN: "" } });
    expect((await none.http.get("/api/v1/auth/me").set(bearer("another-bootstrap-token-9876543210"))).status).toBe(401);
    expect(await rawQuery(db, "SELECT 1 FROM core.api_tokens WHERE bootstrap")).toHaveLength(0);
    await none.stop();
  });

  it("creates the admin account only on a store with no accounts: a deleted admin stays deleted", async () => {
    const db = await createTestDatabase();
    const first = await startTestKernel({ databaseUrl: db });
    expect(first.printed.filter((l) => l.includes('Created account "admin"'))).toHaveLength(1);
    const id = (await first.http.post("/api/v1/accounts").set(bearer(BOOTSTRAP_TOKEN)).send({ username: "chief", password: "chief-password", role: "admin" }))
      .body.id;
    expect(id).toBeTruthy();
    const admin = (await first.http.get("/api/v1/accounts").set(bearer(BOOTSTRAP_TOKEN))).body.find((a: { username: string }) => a.username === "admin");
    expect((await first.http.delete(`/api/v1/accounts/${admin.id}`).set(bearer(BOOTSTRAP_TOKEN))).status).toBe(204);
    await first.stop();

    const second = await startTestKernel({ databaseUrl: db });
    expect(second.printed.some((l) => l.includes('Created account "admin"'))).toBe(false);
    expect(await rawQuery(db, "SELECT username FROM core.accounts ORDER BY username")).toEqual([{ username: "chief" }]);
    await second.stop();
  });
});

describe("sessions", () => {
  it("ends an account's sessions when its password changes, and prunes expired sessions in a core job", async () => {
    const k = await startTestKernel();
    try {
      const created = await k.http
        .post("/api/v1/accounts")
        .set(bearer(BOOTSTRAP_TOKEN))
        .send({ username: "dora", password: "dora-password-1", role: "viewer" });
      const login = await k.http.post("/api/v1/auth/sessions").send({ username: "dora", password: "dora-password-1" });
      expect(login.status).toBe(201);
      expect((await k.http.get("/api/v1/auth/me").set(bearer(login.body.token))).status).toBe(200);
      const unchanged = await k.http.put(`/api/v1/accounts/${created.body.id}`).set(bearer(BOOTSTRAP_TOKEN)).send({ role: "operator", scope: "All" });
      expect(unchanged.status).toBe(204);
      expect((await k.http.get("/api/v1/auth/me").set(bearer(login.body.token))).body.role).toBe("operator");
      const changed = await k.http
        .put(`/api/v1/accounts/${created.body.id}`)
        .set(bearer(BOOTSTRAP_TOKEN))
        .send({ role: "operator", scope: "All", password: "dora-password-2" });
      expect(changed.status).toBe(204);
      expect((await k.http.get("/api/v1/auth/me").set(bearer(login.body.token))).status).toBe(401);

      const again = await k.http.post("/api/v1/auth/sessions").send({ username: "dora", password: "dora-password-2" });
      await rawQuery(k.databaseUrl!, "UPDATE core.sessions SET expires_at = now() - interval '1 minute'");
      expect(await k.kernel.auth.pruneSessions()).toBe(1);
      expect((await k.http.get("/api/v1/auth/me").set(bearer(again.body.token))).status).toBe(401);
      const jobs = await rawQuery<{ name: string; repeat_interval: string }>(
        k.databaseUrl!,
        "SELECT name, repeat_interval FROM nms_agenda_jobs WHERE name = 'core.prune-sessions'",
      );
      expect(jobs).toEqual([{ name: "core.prune-sessions", repeat_interval: "1 hour" }]);
    } finally {
      await k.stop();
    }
  });
});

describe("public routes and odd bodies", () => {
  it("never refuses a public route for a stale or malformed Authorization header", async () => {
    const k = await startTestKernel();
    try {
      expect((await k.http.get("/api/v1/health").set("Authorization", "Bearer stale-token")).status).toBe(200);
      expect((await k.http.get("/api/v1/health").set("Authorization", "Basic abc")).status).toBe(200);
      expect((await k.http.get("/api/v1/openapi.json").set("Authorization", "Bearer stale-token")).status).toBe(200);
      // Login with an old header still works (the body is what counts).
      await k.kernel.auth.createAccount({ username: "eve", password: "eve-password-1", role: "viewer", scope: "All" });
      expect(
        (await k.http.post("/api/v1/auth/sessions").set("Authorization", "Bearer stale").send({ username: "eve", password: "eve-password-1" })).status,
      ).toBe(201);
    } finally {
      await k.stop();
    }
  });

  it("answers a body that does not decompress with 400 malformed_body, and a good gzip body normally", async () => {
    const k = await startTestKernel();
    try {
      const bad = await rawPost(`${k.url}/api/v1/auth/sessions`, Buffer.from("definitely not gzip"));
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body)).toEqual({ error: { code: "malformed_body", message: expect.any(String) } });
      const good = await rawPost(`${k.url}/api/v1/auth/sessions`, gzipSync(JSON.stringify({ username: "nobody", password: "wrong-password" })));
      expect(good.status).toBe(401);
      expect(k.logs.some((l) => l.includes('"request failed"'))).toBe(false);
    } finally {
      await k.stop();
    }
  });
});
