import { createHash, randomUUID } from "node:crypto";
import type { Role, Scope } from "../../core/auth/Caller.js";
import { fixtureWidgetsPlugin } from "../fixtures/plugins/widgets/index.js";
import { rawQuery } from "../support/db.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { expectEnvelope } from "../support/assertions.js";

// Two kernels never run at once in this process: Ts.ED 8 keeps one process-global DI container, so a second kernel started
// while another runs would serve requests with the first one's services.
let k: TestKernel;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const admin = () => bearer(k.adminToken);
const sha256 = (token: string) => createHash("sha256").update(token, "utf8").digest();

type Method = "get" | "post" | "put" | "delete";

interface Probe {
  method: Method;
  path: string;
  body?: object;
  ok: number;
}

/** One route per permission; `ok` is the status a permitted caller gets. */
const PROBES: Record<string, () => Probe> = {
  read: () => ({ method: "get", path: "/api/v1/widgets", ok: 200 }),
  ManageConfig: () => ({ method: "post", path: "/api/v1/widgets", body: { name: `w-${randomUUID().slice(0, 8)}` }, ok: 201 }),
  ManageSystem: () => ({ method: "get", path: "/api/v1/widgets/system/settings", ok: 200 }),
  AckAlerts: () => ({ method: "post", path: `/api/v1/widgets/${randomUUID()}/ack`, body: {}, ok: 200 }),
  ManageMaintenance: () => ({ method: "put", path: "/api/v1/widgets/maintenance", body: {}, ok: 200 }),
};

const ALLOWED: Record<Role, string[]> = {
  viewer: ["read"],
  operator: ["read", "AckAlerts", "ManageMaintenance", "ManageConfig"],
  admin: ["read", "ManageConfig", "ManageSystem", "AckAlerts", "ManageMaintenance"],
};

function call(p: Probe, headers: Record<string, string> = {}) {
  const req = k.http[p.method](p.path).set(headers);
  return p.body ? req.send(p.body) : req;
}

/** Every fixture route, each with a valid shape, so the only reason to refuse is authentication. */
function everyRoute(): Probe[] {
  const id = randomUUID();
  return [
    ...Object.values(PROBES).map((p) => p()),
    { method: "get", path: `/api/v1/widgets/${id}`, ok: 404 },
    { method: "delete", path: `/api/v1/widgets/${id}`, ok: 404 },
    { method: "put", path: `/api/v1/widgets/pins/${id}`, body: {}, ok: 200 },
    { method: "get", path: "/api/v1/widgets/boom", ok: 500 },
    { method: "get", path: "/api/v1/auth/me", ok: 200 },
    { method: "delete", path: "/api/v1/auth/sessions/current", ok: 204 },
    { method: "get", path: "/api/v1/accounts", ok: 200 },
    { method: "get", path: "/api/v1/tokens", ok: 200 },
  ];
}

describe("on one kernel", () => {
  beforeAll(async () => {
    k = await startTestKernel({ plugins: [fixtureWidgetsPlugin] });
  });
  afterAll(async () => {
    await k?.stop();
  });

  describe("authentication", () => {
    it("answers every guarded route without a token with 401 unauthorized", async () => {
      for (const p of everyRoute()) {
        const res = await call(p);
        expect({ route: `${p.method} ${p.path}`, status: res.status }).toEqual({ route: `${p.method} ${p.path}`, status: 401 });
        expectEnvelope(res.body, "unauthorized");
      }
    });

    it("refuses a malformed Authorization header with 401 unauthorized", async () => {
      const valid = k.adminToken;
      for (const header of [`Token ${valid}`, `Basic ${Buffer.from("admin:x").toString("base64")}`, "Bearer", "Bearer ", `Bearer ${valid} extra`, valid]) {
        const res = await k.http.get("/api/v1/widgets").set("Authorization", header);
        expect({ header, status: res.status }).toEqual({ header, status: 401 });
        expectEnvelope(res.body, "unauthorized");
      }
    });

    it("accepts the scheme case-insensitively", async () => {
      const res = await k.http.get("/api/v1/widgets").set("Authorization", `bearer ${k.adminToken}`);
      expect(res.status).toBe(200);
    });

    it("refuses an unknown token with 401 unauthorized on every guarded route", async () => {
      for (const token of ["nope", `nmst_${"A".repeat(43)}`, `nmss_${"B".repeat(43)}`, `${k.adminToken}x`]) {
        for (const p of everyRoute()) {
          const res = await call(p, bearer(token));
          expect({ token, route: `${p.method} ${p.path}`, status: res.status }).toEqual({ token, route: `${p.method} ${p.path}`, status: 401 });
          expectEnvelope(res.body, "unauthorized");
        }
      }
    });

    it("refuses an expired session with 401 token_expired", async () => {
      const session = await k.session("viewer");
      expect((await k.http.get("/api/v1/widgets").set(bearer(session))).status).toBe(200);
      const updated = await rawQuery(k.databaseUrl!, "UPDATE core.sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1 RETURNING id", [
        sha256(session),
      ]);
      expect(updated).toHaveLength(1);
      for (const path of ["/api/v1/widgets", "/api/v1/auth/me"]) {
        const res = await k.http.get(path).set(bearer(session));
        expect(res.status).toBe(401);
        expectEnvelope(res.body, "token_expired");
      }
      const pin = await k.http.put(`/api/v1/widgets/pins/${randomUUID()}`).set(bearer(session)).send({});
      expect(pin.status).toBe(401);
      expectEnvelope(pin.body, "token_expired");
    });

    it("refuses an expired API token with 401 token_expired", async () => {
      const expiresAt = new Date(Date.now() + 3600_000).toISOString();
      const created = await k.http.post("/api/v1/tokens").set(admin()).send({ name: "expiring", role: "viewer", expires_at: expiresAt });
      expect(created.status).toBe(201);
      const { id, token } = created.body as { id: string; token: string };
      expect((await k.http.get("/api/v1/widgets").set(bearer(token))).status).toBe(200);
      const listed = await k.http.get("/api/v1/tokens?limit=1000").set(admin());
      const row = (listed.body as { id: string; expires_at: string | null }[]).find((t) => t.id === id);
      expect(row?.expires_at).not.toBeNull();
      expect(Date.parse(row!.expires_at!)).toBe(Date.parse(expiresAt));

      const updated = await rawQuery(k.databaseUrl!, "UPDATE core.api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1 RETURNING id", [id]);
      expect(updated).toHaveLength(1);
      const res = await k.http.get("/api/v1/widgets").set(bearer(token));
      expect(res.status).toBe(401);
      expectEnvelope(res.body, "token_expired");
      const me = await k.http.get("/api/v1/auth/me").set(bearer(token));
      expect(me.status).toBe(401);
      expectEnvelope(me.body, "token_expired");
    });

    it("refuses to create an API token that is already expired", async () => {
      const res = await k.http
        .post("/api/v1/tokens")
        .set(admin())
        .send({ name: "stale", role: "viewer", expires_at: new Date(Date.now() - 60_000).toISOString() });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, "validation_failed");
    });
  });

  describe("role → permission matrix", () => {
    const roles: Role[] = ["viewer", "operator", "admin"];
    for (const kind of ["token", "session"] as const) {
      for (const role of roles) {
        describe(`${role} ${kind}`, () => {
          let credential: string;
          beforeAll(async () => {
            credential = kind === "token" ? await k.token(role) : await k.session(role);
          });
          for (const permission of Object.keys(PROBES)) {
            const allowed = ALLOWED[role].includes(permission);
            it(`${allowed ? "may" : "may not"} use a ${permission} route`, async () => {
              const probe = PROBES[permission]();
              const res = await call(probe, bearer(credential));
              if (allowed) {
                expect(res.status).toBe(probe.ok);
              } else {
                expect(res.status).toBe(403);
                expectEnvelope(res.body, "permission_denied");
              }
            });
          }
        });
      }
    }

    it("refuses core ManageSystem routes to operators", async () => {
      const operator = await k.token("operator");
      for (const [method, path, body] of [
        ["get", "/api/v1/accounts", undefined],
        ["post", "/api/v1/accounts", { username: "nope-op", password: "password-123", role: "admin" }],
        ["get", "/api/v1/tokens", undefined],
        ["post", "/api/v1/tokens", { name: "nope", role: "admin" }],
      ] as [Method, string, object | undefined][]) {
        const req = k.http[method](path).set(bearer(operator));
        const res = await (body ? req.send(body) : req);
        expect({ path, method, status: res.status }).toEqual({ path, method, status: 403 });
        expectEnvelope(res.body, "permission_denied");
      }
    });
  });

  describe("folder scope", () => {
    const f1 = randomUUID();
    const f2 = randomUUID();
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      for (const [name, folder] of [
        ["in-f1-a", f1],
        ["in-f1-b", f1],
        ["in-f2", f2],
        ["at-root", null],
      ] as [string, string | null][]) {
        const res = await k.http.post("/api/v1/widgets").set(admin()).send({ name, folder_id: folder });
        expect(res.status).toBe(201);
        ids[name] = (res.body as { id: string }).id;
      }
    });

    const listIds = async (token: string) => {
      const res = await k.http.get("/api/v1/widgets").set(bearer(token));
      expect(res.status).toBe(200);
      return (res.body as { id: string; folder_id: string | null }[]).map((w) => w.id).sort();
    };

    it("refuses a folder-scoped admin on a scope_unsupported route with 403 scope_unsupported", async () => {
      for (const credential of [await k.token("admin", { folders: [f1] }), await k.session("admin", { folders: [f1, f2] })]) {
        const res = await k.http.get("/api/v1/widgets/system/settings").set(bearer(credential));
        expect(res.status).toBe(403);
        expectEnvelope(res.body, "scope_unsupported");
      }
      const unrestricted = await k.token("admin", "All");
      expect((await k.http.get("/api/v1/widgets/system/settings").set(bearer(unrestricted))).status).toBe(200);
    });

    it("refuses a folder-scoped admin on the core account and token routes", async () => {
      const scoped = await k.token("admin", { folders: [f1] });
      for (const path of ["/api/v1/accounts", "/api/v1/tokens"]) {
        const res = await k.http.get(path).set(bearer(scoped));
        expect(res.status).toBe(403);
        expectEnvelope(res.body, "scope_unsupported");
      }
    });

    it("checks the permission before the scope (a scoped viewer gets permission_denied)", async () => {
      const res = await k.http.get("/api/v1/widgets/system/settings").set(bearer(await k.token("viewer", { folders: [f1] })));
      expect(res.status).toBe(403);
      expectEnvelope(res.body, "permission_denied");
    });

    it("lists only the widgets in the caller's folders", async () => {
      expect(await listIds(await k.token("viewer", { folders: [f1] }))).toEqual([ids["in-f1-a"], ids["in-f1-b"]].sort());
      expect(await listIds(await k.session("operator", { folders: [f2] }))).toEqual([ids["in-f2"]]);
      expect(await listIds(await k.token("viewer", { folders: [f1, f2] }))).toEqual([ids["in-f1-a"], ids["in-f1-b"], ids["in-f2"]].sort());
      expect(await listIds(await k.token("viewer", { folders: [randomUUID()] }))).toEqual([]);
      const all = await listIds(await k.token("viewer", "All"));
      expect(all).toEqual(expect.arrayContaining(Object.values(ids)));
    });

    it("answers an out-of-scope widget with 404, exactly as a missing one", async () => {
      const scoped = await k.token("viewer", { folders: [f1] });
      const inScope = await k.http.get(`/api/v1/widgets/${ids["in-f1-a"]}`).set(bearer(scoped));
      expect(inScope.status).toBe(200);
      expect(inScope.body).toEqual({ id: ids["in-f1-a"], name: "in-f1-a", folder_id: f1, has_secret: false });

      const missing = await k.http.get(`/api/v1/widgets/${randomUUID()}`).set(bearer(scoped));
      expect(missing.status).toBe(404);
      for (const name of ["in-f2", "at-root"]) {
        const res = await k.http.get(`/api/v1/widgets/${ids[name]}`).set(bearer(scoped));
        expect(res.status).toBe(404);
        expect(res.body).toEqual(missing.body);
      }
    });

    it("does not let a folder-scoped operator delete an out-of-scope widget", async () => {
      const scoped = await k.token("operator", { folders: [f1] });
      const res = await k.http.delete(`/api/v1/widgets/${ids["in-f2"]}`).set(bearer(scoped));
      expect(res.status).toBe(404);
      expect((await k.http.get(`/api/v1/widgets/${ids["in-f2"]}`).set(admin())).status).toBe(200);
    });
  });

  describe("sessions vs API tokens", () => {
    it("refuses API tokens on a person-only route with 403 person_required", async () => {
      for (const token of [k.adminToken, await k.token("viewer"), await k.token("admin")]) {
        const res = await k.http.put(`/api/v1/widgets/pins/${randomUUID()}`).set(bearer(token)).send({});
        expect(res.status).toBe(403);
        expectEnvelope(res.body, "person_required");
      }
    });

    it("lets a session of any role use a person-only route", async () => {
      for (const role of ["viewer", "operator", "admin"] as Role[]) {
        const username = `pin-${role}-${randomUUID().slice(0, 6)}`;
        const session = await k.session(role, "All", username);
        const id = randomUUID();
        const res = await k.http.put(`/api/v1/widgets/pins/${id}`).set(bearer(session)).send({});
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ ok: true, pinned: id, by: username });
      }
    });
  });

  describe("GET /auth/me", () => {
    it("identifies a session as a person", async () => {
      const scope: Scope = { folders: [randomUUID()] };
      const session = await k.session("operator", scope, "Me-Person");
      const res = await k.http.get("/api/v1/auth/me").set(bearer(session));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ kind: "session", role: "operator", scope, username: "Me-Person" });
    });

    it("identifies an API token by its name", async () => {
      const token = await k.token("viewer", "All", "grafana-reader");
      const res = await k.http.get("/api/v1/auth/me").set(bearer(token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ kind: "token", role: "viewer", scope: "All", username: "grafana-reader" });
    });

    it("identifies the bootstrap token", async () => {
      const res = await k.http.get("/api/v1/auth/me").set(admin());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ kind: "token", role: "admin", scope: "All", username: "bootstrap" });
    });

    it("answers an anonymous caller with 401", async () => {
      const res = await k.http.get("/api/v1/auth/me");
      expect(res.status).toBe(401);
      expectEnvelope(res.body, "unauthorized");
    });
  });

  describe("login and logout over HTTP", () => {
    const username = "Login-Person";
    const password = "correct horse battery";

    beforeAll(async () => {
      const res = await k.http.post("/api/v1/accounts").set(admin()).send({ username, password, role: "viewer" });
      expect(res.status).toBe(201);
    });

    it("opens a session with POST /auth/sessions (username case-insensitive)", async () => {
      const res = await k.http.post("/api/v1/auth/sessions").send({ username: username.toLowerCase(), password });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(["expires_at", "token"]);
      const expires = Date.parse(res.body.expires_at);
      expect(expires).toBeGreaterThan(Date.now() + 43200_000 - 120_000);
      expect(expires).toBeLessThan(Date.now() + 43200_000 + 120_000);
      const me = await k.http.get("/api/v1/auth/me").set(bearer(res.body.token));
      expect(me.body).toEqual({ kind: "session", role: "viewer", scope: "All", username });
    });

    it("answers a wrong password with 401 and does not say which part was wrong", async () => {
      const wrong = await k.http.post("/api/v1/auth/sessions").send({ username, password: "not the password" });
      const unknown = await k.http.post("/api/v1/auth/sessions").send({ username: "nobody-here", password: "not the password" });
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expectEnvelope(wrong.body, "unauthorized");
      expect(wrong.body).toEqual(unknown.body);
    });

    it("ends the calling session with DELETE /auth/sessions/current; the token is then 401", async () => {
      const login = await k.http.post("/api/v1/auth/sessions").send({ username, password });
      expect(login.status).toBe(201);
      const token = login.body.token as string;
      const other = await k.http.post("/api/v1/auth/sessions").send({ username, password });
      expect(other.status).toBe(201);

      const out = await k.http.delete("/api/v1/auth/sessions/current").set(bearer(token));
      expect(out.status).toBe(204);
      for (const path of ["/api/v1/auth/me", "/api/v1/widgets"]) {
        const res = await k.http.get(path).set(bearer(token));
        expect(res.status).toBe(401);
        expectEnvelope(res.body, "unauthorized");
      }
      const again = await k.http.delete("/api/v1/auth/sessions/current").set(bearer(token));
      expect(again.status).toBe(401);
      // Only that session ended.
      expect((await k.http.get("/api/v1/auth/me").set(bearer(other.body.token))).status).toBe(200);
    });

    it("refuses to end a session with an API token (403) and leaves the token valid", async () => {
      const token = await k.token("admin");
      const res = await k.http.delete("/api/v1/auth/sessions/current").set(bearer(token));
      expect(res.status).toBe(403);
      expectEnvelope(res.body, "person_required");
      expect((await k.http.get("/api/v1/auth/me").set(bearer(token))).status).toBe(200);
    });
  });
});

describe("login rate limit", () => {
  // Its own kernel, started after the one above has stopped: the address limit counts every failure from 127.0.0.1.
  let r: TestKernel;
  const max = 5;

  beforeAll(async () => {
    r = await startTestKernel({ plugins: [fixtureWidgetsPlugin] });
    expect(r.kernel.config.auth.loginMaxFailures).toBe(max);
    for (const username of ["limited", "other", "addr-victim"]) {
      const res = await r.http.post("/api/v1/accounts").set(bearer(r.adminToken)).send({ username, password: "right-password", role: "viewer" });
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => {
    await r?.stop();
  });

  const login = (username: string, password: string) => r.http.post("/api/v1/auth/sessions").send({ username, password });

  it("limits failures per username, refusing even the right password, with 429 and Retry-After", async () => {
    for (let i = 0; i < max; i++) {
      const res = await login(i % 2 ? "limited" : "LIMITED", "wrong-password");
      expect(res.status).toBe(401);
    }
    for (const password of ["wrong-password", "right-password"]) {
      const res = await login("limited", password);
      expect(res.status).toBe(429);
      expectEnvelope(res.body, "too_many_attempts");
      const retry = Number(res.headers["retry-after"]);
      expect(Number.isInteger(retry)).toBe(true);
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(r.kernel.config.auth.loginWindowSecs);
      expect(res.body.error.message).toContain(String(retry));
    }
    // Another username from the same address is not limited.
    expect((await login("other", "right-password")).status).toBe(201);
  });

  it("limits failures per address at four times the per-username allowance", async () => {
    // 5 failures from the test above already count for this address.
    const already = max;
    const perAddress = max * 4;
    for (let i = already; i < perAddress; i++) {
      const res = await login(`ghost-${i}`, "wrong-password");
      expect({ i, status: res.status }).toEqual({ i, status: 401 });
    }
    for (const [username, password] of [
      ["ghost-new", "wrong-password"],
      ["addr-victim", "right-password"],
    ]) {
      const res = await login(username, password);
      expect({ username, status: res.status }).toEqual({ username, status: 429 });
      expectEnvelope(res.body, "too_many_attempts");
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    }
    // The same account from another address is not refused: the limit is per address.
    await expect(r.kernel.auth.login("addr-victim", "right-password", "192.0.2.10")).resolves.toEqual({
      token: expect.any(String),
      expires_at: expect.any(String),
    });
  });
});
