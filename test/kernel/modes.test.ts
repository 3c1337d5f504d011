import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { fixtureWidgetsPlugin } from "../fixtures/plugins/widgets/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { expectEnvelope } from "../support/assertions.js";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe("skeleton mode", () => {
  let k: TestKernel;

  beforeAll(async () => {
    k = await startTestKernel({ skeleton: true, plugins: [fixtureWidgetsPlugin] });
  });
  afterAll(async () => {
    await k?.stop();
  });

  const admin = () => bearer(k.adminToken);

  it("starts no store: no database URL, no embedded server in the data directory", () => {
    expect(k.databaseUrl).toBeNull();
    expect(k.kernel.store.available).toBe(false);
    expect(existsSync(join(k.dataDir, "pg"))).toBe(false);
    expect(readdirSync(k.dataDir).filter((f) => f.startsWith("pg"))).toEqual([]);
    expect(k.printed.some((l) => /mode skeleton, store none/.test(l))).toBe(true);
    expect(k.printed.some((l) => l.includes('Created account "admin"'))).toBe(false);
  });

  it("reports mode skeleton and store absent in health", async () => {
    const res = await k.http.get("/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok", mode: "skeleton", public_dashboard: false, store: { kind: "none", status: "absent" } });
    expect(res.body.plugins).toEqual([{ id: "fixture-widgets", version: "1.0.0" }]);
  });

  it("accepts the bootstrap token for GET /auth/me", async () => {
    const res = await k.http.get("/api/v1/auth/me").set(admin());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ kind: "token", role: "admin", scope: "All", username: "bootstrap" });
  });

  it("refuses any other token (401) and anonymous callers (401)", async () => {
    for (const headers of [bearer("not-the-bootstrap-token"), bearer(`${k.adminToken}0`), {}]) {
      for (const path of ["/api/v1/auth/me", "/api/v1/widgets"]) {
        const res = await k.http.get(path).set(headers);
        expect(res.status).toBe(401);
        expectEnvelope(res.body, "unauthorized");
      }
    }
  });

  it("answers a declared skeleton read with its answer (GET /widgets → [])", async () => {
    const res = await k.http.get("/api/v1/widgets").set(admin());
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it("answers a read without a skeleton answer with 503 store_unavailable", async () => {
    for (const path of [`/api/v1/widgets/${randomUUID()}`, "/api/v1/accounts", "/api/v1/tokens"]) {
      const res = await k.http.get(path).set(admin());
      expect({ path, status: res.status }).toEqual({ path, status: 503 });
      expectEnvelope(res.body, "store_unavailable");
    }
  });

  it("still authenticates before answering 503", async () => {
    // No other account can exist here, so only anonymity can be refused: 401 before 503.
    const res = await k.http.post("/api/v1/widgets").send({ name: "w" });
    expect(res.status).toBe(401);
    expectEnvelope(res.body, "unauthorized");
  });

  it.each([
    ["post", "/api/v1/widgets", { name: "w1", secret: "s3cret" }],
    ["delete", `/api/v1/widgets/${randomUUID()}`, undefined],
    ["post", `/api/v1/widgets/${randomUUID()}/ack`, {}],
    ["put", "/api/v1/widgets/maintenance", {}],
    ["post", "/api/v1/accounts", { username: "someone", password: "password-123", role: "viewer" }],
    ["put", `/api/v1/accounts/${randomUUID()}`, { role: "viewer", scope: "All" }],
    ["delete", `/api/v1/accounts/${randomUUID()}`, undefined],
    ["post", "/api/v1/tokens", { name: "ci", role: "viewer" }],
    ["delete", `/api/v1/tokens/${randomUUID()}`, undefined],
  ] as ["post" | "put" | "delete", string, object | undefined][])("answers %s %s with 503 and the envelope", async (method, path, body) => {
    const req = k.http[method](path).set(admin());
    const res = await (body ? req.send(body) : req);
    expect(res.status).toBe(503);
    expect(res.headers["content-type"]).toMatch(/application\/json/);
    expectEnvelope(res.body, "store_unavailable");
  });

  it("answers a login (POST /auth/sessions) with 503 and the envelope", async () => {
    const res = await k.http.post("/api/v1/auth/sessions").send({ username: "admin", password: "whatever-password" });
    expect(res.status).toBe(503);
    expectEnvelope(res.body, "store_unavailable");
  });
});

describe("public-dashboard mode", () => {
  let k: TestKernel;
  const folder = randomUUID();
  let rootWidget: string;
  let folderWidget: string;

  beforeAll(async () => {
    k = await startTestKernel({ plugins: [fixtureWidgetsPlugin], overrides: { publicDashboard: true } });
    for (const [name, folder_id] of [
      ["dash-root", null],
      ["dash-folder", folder],
    ] as [string, string | null][]) {
      const res = await k.http.post("/api/v1/widgets").set(bearer(k.adminToken)).send({ name, folder_id });
      expect(res.status).toBe(201);
      if (folder_id) folderWidget = res.body.id;
      else rootWidget = res.body.id;
    }
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("reports public_dashboard in health", async () => {
    const res = await k.http.get("/api/v1/health");
    expect(res.body).toMatchObject({ mode: "full", public_dashboard: true, store: { status: "ok" } });
  });

  it("lets an anonymous visitor use a dashboard read, as a viewer with scope All", async () => {
    const res = await k.http.get("/api/v1/widgets");
    expect(res.status).toBe(200);
    expect((res.body as { id: string }[]).map((w) => w.id).sort()).toEqual([rootWidget, folderWidget].sort());
  });

  it("answers anonymous callers on routes that are not dashboard reads with 401", async () => {
    for (const [method, path, body] of [
      ["get", `/api/v1/widgets/${rootWidget}`, undefined],
      ["post", "/api/v1/widgets", { name: "anon" }],
      ["delete", `/api/v1/widgets/${rootWidget}`, undefined],
      ["post", `/api/v1/widgets/${rootWidget}/ack`, {}],
      ["put", "/api/v1/widgets/maintenance", {}],
      ["get", "/api/v1/widgets/system/settings", undefined],
      ["put", `/api/v1/widgets/pins/${rootWidget}`, {}],
      ["get", "/api/v1/accounts", undefined],
      ["get", "/api/v1/tokens", undefined],
    ] as ["get" | "post" | "put" | "delete", string, object | undefined][]) {
      const req = k.http[method](path);
      const res = await (body ? req.send(body) : req);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
      expectEnvelope(res.body, "unauthorized");
    }
    expect((await k.http.get(`/api/v1/widgets/${rootWidget}`).set(bearer(k.adminToken))).status).toBe(200);
  });

  it("answers an anonymous GET /auth/me with 401", async () => {
    const res = await k.http.get("/api/v1/auth/me");
    expect(res.status).toBe(401);
    expectEnvelope(res.body, "unauthorized");
  });

  it("answers a bad or expired-looking token on the dashboard route with 401, not as anonymous", async () => {
    for (const header of ["Bearer not-a-token", "Bearer", "Basic YWRtaW46eA=="]) {
      const res = await k.http.get("/api/v1/widgets").set("Authorization", header);
      expect({ header, status: res.status }).toEqual({ header, status: 401 });
      expectEnvelope(res.body, "unauthorized");
    }
  });

  it("applies a caller's own scope when a token is given on the dashboard route", async () => {
    const scoped = await k.token("viewer", { folders: [folder] });
    const res = await k.http.get("/api/v1/widgets").set(bearer(scoped));
    expect(res.status).toBe(200);
    expect((res.body as { id: string }[]).map((w) => w.id)).toEqual([folderWidget]);
  });
});
