import { randomUUID } from "node:crypto";
import type { Response } from "supertest";
import { expectError } from "../../../test/support/assertions.js";
import { responseProblems } from "../../../test/support/openapi.js";
import { startNetcloudServer, type CloudOrgDef, type NetcloudServer } from "../../../test/support/netcloudServer.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { netcloudPlugin } from "../index.js";

const KEY_A = "nc-key-A-5f0e9d1c7b3a4e2f8d6c";
const KEY_B = "nc-key-B-a93b7e11c04d5f62e8b0";
const WRONG = "nc-key-wrong-0d7c3b9e2a1f";

let k: TestKernel;
let cloud: NetcloudServer;
let other: NetcloudServer;
const answered: string[] = [];
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const BASE = "/api/v1/netcloud/orgs";

const org = (id: string, name: string, devices = 0, networks = 2): CloudOrgDef => ({
  id,
  name,
  networks: Array.from({ length: networks }, (_, i) => ({ id: `${id}-N${i}`, name: `${name} net ${i}` })),
  devices: Array.from({ length: devices }, (_, i) => ({
    serial: `${id}-S${String(i).padStart(5, "0")}`,
    name: `${name} sw ${i}`,
    networkId: `${id}-N${i % networks}`,
    model: "MS120-8",
    lanIp: `10.${Number(id.replace(/\D/g, "")) % 250}.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    status: "online",
  })),
});

async function keep(t: Promise<Response>): Promise<Response> {
  const res = await t;
  answered.push(res.text ?? "", JSON.stringify(res.headers));
  return res;
}
const post = (path: string, body: unknown, token = k.adminToken) =>
  keep(
    k.http
      .post(`${BASE}${path}`)
      .set(bearer(token))
      .send(body as object),
  );
const put = (path: string, body: unknown, token = k.adminToken) =>
  keep(
    k.http
      .put(`${BASE}${path}`)
      .set(bearer(token))
      .send(body as object),
  );
const get = (path: string, token = k.adminToken) => keep(k.http.get(`${BASE}${path}`).set(bearer(token)));
const del = (path: string, token = k.adminToken) => keep(k.http.delete(`${BASE}${path}`).set(bearer(token)));

async function addOrg(orgId: string, key = KEY_A): Promise<string> {
  const res = await post("", { org_id: orgId, api_key: key });
  expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: { id: expect.any(String), skipped: false } });
  return res.body.id as string;
}

beforeAll(async () => {
  cloud = await startNetcloudServer();
  other = await startNetcloudServer({ cert: cloud.cert });
  cloud.addOrg(org("o-101", "Acme Corp", 5, 3), KEY_A);
  cloud.addOrg(org("o-102", "Bravo Retail"), KEY_A, KEY_B);
  cloud.addOrg(org("o-103", "Charlie Labs"), KEY_B);
  other.addOrg(org("o-909", "Elsewhere"), KEY_A);
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, netcloudPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        netcloud: {
          allowedHosts: ["127.0.0.1"],
          defaultBaseUrl: cloud.url,
          caCertPem: cloud.cert.cert,
          requestTimeoutMs: 1500,
          maxRetryWaitSecs: 2,
          maxRetries: 2,
          maxOrganizations: 4,
        },
      },
    },
  });
});
afterAll(async () => {
  await k?.stop();
  await cloud?.stop();
  await other?.stop();
});
afterEach(() => {
  cloud.delayMs = 0;
  cloud.redirectTo = null;
  cloud.rateLimit(0, "1");
});

describe("discover", () => {
  it("lists the organizations a typed key reaches, each with already_added, and persists nothing", async () => {
    const res = await post("/discover", { api_key: KEY_A });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: "o-101", name: "Acme Corp", already_added: false },
      { id: "o-102", name: "Bravo Retail", already_added: false },
    ]);
    expect((await get("")).body).toEqual([]);
    expect(cloud.requests.at(-1)).toEqual({ method: "GET", path: "/api/v1/organizations", authorized: true });
  });

  it("says already_added under any key once an organization is monitored", async () => {
    const id = await addOrg("o-102", KEY_A);
    const res = await post("/discover", { api_key: KEY_B, base_url: cloud.url });
    expect(res.body).toEqual([
      { id: "o-102", name: "Bravo Retail", already_added: true },
      { id: "o-103", name: "Charlie Labs", already_added: false },
    ]);
    expect((await del(`/${id}`)).status).toBe(204);
  });

  it("takes the key of a stored netcloud_api credential", async () => {
    const cred = await keep(k.http.post("/api/v1/credentials").set(bearer(k.adminToken)).send({ name: "cloud key B", kind: "netcloud_api", api_key: KEY_B }));
    expect(cred.status).toBe(201);
    const res = await post("/discover", { credential_id: cred.body.id });
    expect(res.status).toBe(200);
    expect(res.body.map((o: { id: string }) => o.id)).toEqual(["o-102", "o-103"]);
  });

  it("answers the spec's 400s: no key, both, a credential that is not a netcloud key, a bad base_url", async () => {
    expectError(await post("/discover", {}), 400, "invalid_api_key");
    expectError(await post("/discover", { api_key: null, credential_id: null }), 400, "invalid_api_key");
    expectError(await post("/discover", { api_key: "  " }), 400, "invalid_api_key");
    expectError(await post("/discover", { api_key: KEY_A, credential_id: randomUUID() }), 400, "invalid_request");
    expectError(await post("/discover", { credential_id: randomUUID() }), 400, "invalid_credential");
    const snmp = await keep(k.http.post("/api/v1/credentials").set(bearer(k.adminToken)).send({ name: "snmp", kind: "snmp_v2c", community: "public-c0mm" }));
    expect(snmp.status).toBe(201);
    expectError(await post("/discover", { credential_id: snmp.body.id }), 400, "invalid_credential");
    expectError(await post("/discover", { credential_id: "not-a-uuid" }), 400, "validation_failed");
    expectError(await post("/discover", { api_key: KEY_A, extra: 1 }), 400, "validation_failed");
    const before = cloud.requests.length;
    for (const base_url of [
      cloud.url.replace("https:", "http:"),
      cloud.url.replace("127.0.0.1", "localhost"),
      "ftp://127.0.0.1/api/v1",
      "https://user:pw@127.0.0.1:1/api/v1",
      `${cloud.url}?x=1`,
      "not a url",
    ]) {
      expectError(await post("/discover", { api_key: KEY_A, base_url }), 400, "invalid_base_url");
    }
    expect(cloud.requests.length).toBe(before);
  });

  it("answers a refused key with a 502-class envelope, the detail only in the log", async () => {
    expectError(await post("/discover", { api_key: WRONG }), 502, "upstream_key_refused");
    expect(k.logs.some((l) => l.includes("netcloud: upstream call failed") && l.includes('"kind":"key_refused"') && l.includes('"status":401'))).toBe(true);
  });

  it("waits out a 429's Retry-After, and gives up past the retries or a wait too long", async () => {
    cloud.rateLimit(2, "1");
    const before = cloud.requests.length;
    const t0 = Date.now();
    const res = await post("/discover", { api_key: KEY_A });
    expect(res.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(cloud.requests.length - before).toBe(3);

    cloud.rateLimit(5, "0");
    expectError(await post("/discover", { api_key: KEY_A }), 502, "upstream_failed");
    cloud.rateLimit(1, "120");
    const t1 = Date.now();
    expectError(await post("/discover", { api_key: KEY_A }), 502, "upstream_failed");
    expect(Date.now() - t1).toBeLessThan(1500);
    expect(k.logs.some((l) => l.includes('"kind":"rate_limited"'))).toBe(true);
  });

  it("answers 504 upstream_timeout when the platform does not answer in time", async () => {
    cloud.delayMs = 3000;
    const t0 = Date.now();
    expectError(await post("/discover", { api_key: KEY_A }), 504, "upstream_timeout");
    expect(Date.now() - t0).toBeLessThan(2900);
  });

  it("answers 502 when nothing listens at the base URL", async () => {
    expectError(await post("/discover", { api_key: KEY_A, base_url: "https://127.0.0.1:1/api/v1" }), 502, "upstream_failed");
  });

  it("never follows a redirect to another host or scheme, and never sends the key there", async () => {
    cloud.redirectTo = `https://localhost:${other.port}/api/v1`;
    const seen = other.requests.length;
    expectError(await post("/discover", { api_key: KEY_A }), 502, "upstream_failed");
    cloud.redirectTo = `http://127.0.0.1:${other.port}/api/v1`;
    expectError(await post("/discover", { api_key: KEY_A }), 502, "upstream_failed");
    // Same host, other port: another origin too.
    cloud.redirectTo = other.url;
    expectError(await post("/discover", { api_key: KEY_A }), 502, "upstream_failed");
    expect(other.requests.length).toBe(seen);
    expect(k.logs.some((l) => l.includes('"kind":"redirect_refused"'))).toBe(true);
  });
});

describe("organizations", () => {
  it("adds, gets, lists (keyset) and deletes; a second add of the same organization is skipped", async () => {
    const a = await addOrg("o-101");
    const again = await post("", { org_id: "o-101", api_key: KEY_A });
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: { id: a, skipped: true } });
    const b = await addOrg("o-103", KEY_B);

    const one = await get(`/${a}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      id: a,
      org_id: "o-101",
      name: "Acme Corp",
      base_url: cloud.url,
      key_source: "api_key",
      credential_id: null,
      import_devices: false,
      file_by_prefix: false,
      max_devices: null,
      last_sync_at: one.body.last_sync_at,
      last_sync_status: one.body.last_sync_status,
      networks: expect.any(Number),
      devices: expect.any(Number),
      devices_as_nodes: 0,
      created_at: expect.stringMatching(/Z$/),
    });

    const first = await get("?limit=1");
    expect(first.body.map((o: { name: string }) => o.name)).toEqual(["Acme Corp"]);
    const cursor = first.headers["x-next-cursor"];
    expect(cursor).toEqual(expect.any(String));
    const second = await get(`?limit=1&cursor=${cursor}`);
    expect(second.body.map((o: { name: string }) => o.name)).toEqual(["Charlie Labs"]);
    expect(second.headers["x-next-cursor"]).toBeUndefined();
    expectError(await get("?cursor=bm9wZQ"), 400, "invalid_cursor");

    expect((await del(`/${b}`)).status).toBe(204);
    expectError(await del(`/${b}`), 404, "not_found");
    expectError(await get(`/${b}`), 404, "not_found");
    expectError(await get("/not-a-uuid"), 400, "validation_failed");
  });

  it("refuses an organization the key does not reach, a body without a key or org_id, a refused key", async () => {
    expectError(await post("", { org_id: "o-103", api_key: KEY_A }), 400, "unknown_organization");
    expectError(await post("", { org_id: "o-101" }), 400, "invalid_api_key");
    expectError(await post("", { api_key: KEY_A }), 400, "validation_failed");
    expectError(await post("", { org_id: "o-101", api_key: WRONG }), 502, "upstream_key_refused");
  });

  it("adds with a stored credential: the key follows the credential and is never copied", async () => {
    const cred = await keep(k.http.post("/api/v1/credentials").set(bearer(k.adminToken)).send({ name: "cloud key B2", kind: "netcloud_api", api_key: KEY_B }));
    const res = await post("", { org_id: "o-102", credential_id: cred.body.id });
    expect(res.status).toBe(201);
    const view = (await get(`/${res.body.id}`)).body;
    expect(view).toMatchObject({ key_source: "credential", credential_id: cred.body.id });
    const { rows } = await k.context("netcloud").store.query<{ api_key: string | null }>(`SELECT api_key FROM netcloud.orgs WHERE id = $1`, [res.body.id]);
    expect(rows[0].api_key).toBeNull();
    expect((await del(`/${res.body.id}`)).status).toBe(204);
  });

  it("stores a typed key sealed", async () => {
    const { rows } = await k.context("netcloud").store.query<{ api_key: string }>(`SELECT api_key FROM netcloud.orgs WHERE org_id = 'o-101'`);
    expect(rows[0].api_key).toMatch(/^sealed:v1:/);
    expect(rows[0].api_key).not.toContain(KEY_A);
  });
});

describe("import settings", () => {
  it("stores the settings; an absent max_devices keeps the current value, null clears it", async () => {
    const id = (await get("")).body.find((o: { org_id: string }) => o.org_id === "o-101").id as string;
    const set = await put(`/${id}/import-settings`, { import_devices: true, file_by_prefix: true, max_devices: 250 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ import_devices: true, file_by_prefix: true, max_devices: 250 });
    expect((await put(`/${id}/import-settings`, { import_devices: false, file_by_prefix: true })).body).toMatchObject({
      import_devices: false,
      max_devices: 250,
    });
    expect((await put(`/${id}/import-settings`, { import_devices: false, file_by_prefix: false, max_devices: null })).body).toMatchObject({
      max_devices: null,
    });
  });

  it("answers invalid_max_devices outside 1 to 50000, validation_failed for a missing flag, 404 for no organization", async () => {
    const id = (await get("")).body[0].id as string;
    for (const max_devices of [0, -1, 50001, 1.5, 1e12]) {
      expectError(await put(`/${id}/import-settings`, { import_devices: true, file_by_prefix: false, max_devices }), 400, "invalid_max_devices");
    }
    expect((await put(`/${id}/import-settings`, { import_devices: true, file_by_prefix: false, max_devices: 50000 })).status).toBe(200);
    expect((await put(`/${id}/import-settings`, { import_devices: true, file_by_prefix: false, max_devices: 1 })).status).toBe(200);
    expectError(await put(`/${id}/import-settings`, { import_devices: true }), 400, "validation_failed");
    expectError(await put(`/${id}/import-settings`, { import_devices: "yes", file_by_prefix: false }), 400, "validation_failed");
    expectError(await put(`/${id}/import-settings`, { import_devices: true, file_by_prefix: false, max_devices: "7" }), 400, "validation_failed");
    expectError(await put(`/${randomUUID()}/import-settings`, { import_devices: true, file_by_prefix: false }), 404, "not_found");
    await put(`/${id}/import-settings`, { import_devices: false, file_by_prefix: false, max_devices: null });
  });
});

describe("networks", () => {
  it("lists the networks a sync found, watched by default; the flag is settable and survives a sync", async () => {
    const id = (await get("")).body.find((o: { org_id: string }) => o.org_id === "o-101").id as string;
    await k.context("netcloud").jobs.now("sync-org", { id });
    let nets: Response | undefined;
    for (let i = 0; i < 100 && (!nets || nets.body.length < 3); i++) {
      await new Promise((r) => setTimeout(r, 100));
      nets = await get(`/${id}/networks`);
    }
    expect(nets!.body).toEqual([
      { network_id: "o-101-N0", name: "Acme Corp net 0", watched: true, devices: 2 },
      { network_id: "o-101-N1", name: "Acme Corp net 1", watched: true, devices: 2 },
      { network_id: "o-101-N2", name: "Acme Corp net 2", watched: true, devices: 1 },
    ]);
    const off = await put(`/${id}/networks/o-101-N1`, { watched: false });
    expect(off.body).toEqual({ network_id: "o-101-N1", name: "Acme Corp net 1", watched: false, devices: 2 });
    const page1 = await get(`/${id}/networks?limit=2`);
    expect(page1.body).toHaveLength(2);
    expect((await get(`/${id}/networks?cursor=${page1.headers["x-next-cursor"]}`)).body.map((n: { network_id: string }) => n.network_id)).toEqual(["o-101-N2"]);
    expectError(await put(`/${id}/networks/o-101-N9`, { watched: false }), 404, "not_found");
    expectError(await put(`/${id}/networks/o-101-N1`, { watched: "no" }), 400, "validation_failed");
    expectError(await get(`/${randomUUID()}/networks`), 404, "not_found");
  });
});

describe("access", () => {
  it("needs ManageConfig and an unrestricted account on every route", async () => {
    const id = (await get("")).body[0].id as string;
    const routes: [string, string, unknown?][] = [
      ["post", "/discover", { api_key: KEY_A }],
      ["post", "", { org_id: "o-101", api_key: KEY_A }],
      ["get", ""],
      ["get", `/${id}`],
      ["put", `/${id}/import-settings`, { import_devices: false, file_by_prefix: false }],
      ["get", `/${id}/networks`],
      ["post", `/${id}/sync`],
      ["put", `/${id}/networks/o-101-N0`, { watched: true }],
      ["delete", `/${randomUUID()}`],
    ];
    const viewer = await k.token("viewer");
    const viewerSession = await k.session("viewer");
    const operator = await k.token("operator");
    const operatorSession = await k.session("operator");
    const adminSession = await k.session("admin");
    const scopedAdmin = await k.token("admin", { folders: [randomUUID()] });
    const scopedOperatorSession = await k.session("operator", { folders: [randomUUID()] });
    const call = (method: string, path: string, body: unknown, token: string | null) => {
      const req = (k.http as unknown as Record<string, (p: string) => import("supertest").Test>)[method](`${BASE}${path}`);
      if (token !== null) req.set(bearer(token));
      return keep(body === undefined ? req : req.send(body as object));
    };
    for (const [method, path, body] of routes) {
      expectError(await call(method, path, body, null), 401, "unauthorized");
      expectError(await call(method, path, body, "not-a-token"), 401, "unauthorized");
      expectError(await call(method, path, body, viewer), 403, "permission_denied");
      expectError(await call(method, path, body, viewerSession), 403, "permission_denied");
      expectError(await call(method, path, body, scopedAdmin), 403, "scope_unsupported");
      expectError(await call(method, path, body, scopedOperatorSession), 403, "scope_unsupported");
      for (const token of [operator, operatorSession, adminSession]) {
        const res = await call(method, path, body, token);
        // Let in: the route's own answer (a 404 for the unknown organization deleted), never 401 or 403.
        expect([method, path, res.status]).toEqual([method, path, method === "delete" ? 404 : path.endsWith("/sync") ? 202 : 200]);
      }
    }
  });
});

describe("openapi", () => {
  it("documents every route with its answers, and no key field in any answer", async () => {
    const doc = (await k.http.get("/api/v1/openapi.json")).body;
    const paths = Object.fromEntries(Object.entries(doc.paths).filter(([p]) => p.startsWith("/api/v1/netcloud/")));
    expect(Object.keys(paths).sort()).toEqual([
      "/api/v1/netcloud/orgs",
      "/api/v1/netcloud/orgs/discover",
      "/api/v1/netcloud/orgs/{id}",
      "/api/v1/netcloud/orgs/{id}/import-settings",
      "/api/v1/netcloud/orgs/{id}/networks",
      "/api/v1/netcloud/orgs/{id}/networks/{network_id}",
      "/api/v1/netcloud/orgs/{id}/sync",
    ]);
    expect(responseProblems({ ...doc, paths })).toEqual([]);
    const described = (doc.paths["/api/v1/netcloud/orgs/discover"].post.responses["400"].description as string) ?? "";
    for (const c of ["invalid_api_key", "invalid_request", "invalid_credential", "invalid_base_url"]) expect(described).toContain(c);
    expect(doc.paths["/api/v1/netcloud/orgs/{id}/import-settings"].put.responses["400"].description).toContain("invalid_max_devices");
    expect(Object.keys(doc.components.schemas.OrgView.properties)).not.toContain("api_key");
  });
});

describe("secrets", () => {
  it("never puts a key in a response, a header or a log line", () => {
    const everything = answered.join("\n") + k.logs.join("\n");
    for (const key of [KEY_A, KEY_B, WRONG]) expect(everything).not.toContain(key);
    expect(answered.join("\n")).not.toContain("sealed:v1:");
  });
});
