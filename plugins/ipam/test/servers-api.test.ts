import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { selfSignedCert } from "../../../test/support/httpTarget.js";
import { responseProblems, type Operation } from "../../../test/support/openapi.js";
import type { TestResponse } from "../../../core/testing/index.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { ipamPlugin } from "../index.js";

const TOKEN = "ipam-t0ken-s3cret-4b1d9e";
const TOKEN2 = "ipam-t0ken-s3cret-second-77c0";
const CA = selfSignedCert().cert;
const CA2 = selfSignedCert().cert;
const SECRET_MARKERS = [TOKEN, TOKEN2, "sealed:v1:"];

let k: TestKernel;
let stopped = false;
const answered: string[] = [];

async function call(method: string, path: string, body?: unknown, token: string | null = k.adminToken): Promise<TestResponse> {
  const res = await k.request(method, path, { body, token });
  answered.push(JSON.stringify(res.body));
  return res;
}

const server = (extra: Record<string, unknown> = {}) => ({ name: "Main IPAM", base_url: "https://ipam.example.net", token: TOKEN, ...extra });

async function create(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await call("POST", "/ipam/servers", server(extra));
  expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: { id: expect.any(String) } });
  return (res.body as { id: string }).id;
}

const sealedToken = async (id: string) =>
  (await k.context("ipam").store.query<{ token: string }>(`SELECT token FROM ipam.servers WHERE id = $1`, [id])).rows[0].token;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, ipamPlugin] });
});

afterAll(async () => {
  if (!stopped) await k?.stop();
  // Nothing ever answered or logged carries the token (nor its sealed form).
  const everything = [...answered, ...(k?.logs ?? [])].join("\n");
  for (const marker of SECRET_MARKERS) expect(everything).not.toContain(marker);
});

describe("ipam servers", () => {
  it("creates (201 {id}), gets and lists a server without its token, with has_token and a status", async () => {
    const id = await create({ site_id_field: "site_ref", ca_cert_pem: CA, sync_interval_secs: 600, enabled: false });
    const got = await call("GET", `/ipam/servers/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id,
      name: "Main IPAM",
      base_url: "https://ipam.example.net",
      enabled: false,
      sync_interval_secs: 600,
      site_id_field: "site_ref",
      has_token: true,
      ca_cert_pem: CA.endsWith("\n") ? CA : `${CA}\n`,
      status: { last_sync_at: null, last_success_at: null, last_error_class: null, site_count: null, prefix_count: null, next_sync_at: expect.any(String) },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(got.body).not.toHaveProperty("token");
    expect(await sealedToken(id)).toMatch(/^sealed:v1:/);
    const list = await call("GET", "/ipam/servers");
    expect(list.status).toBe(200);
    expect((list.body as { id: string }[]).map((s) => s.id)).toContain(id);
  });

  it("lists by name with a keyset cursor", async () => {
    for (const n of ["pg-a", "pg-b", "pg-c"]) await create({ name: n, enabled: false });
    const first = await k.request("GET", "/ipam/servers?limit=2");
    expect(first.status).toBe(200);
    const cursor = first.headers.get("x-next-cursor");
    expect(cursor).toBeTruthy();
    const second = await k.request("GET", `/ipam/servers?limit=2&cursor=${cursor}`);
    const names = [...(first.body as { name: string }[]), ...(second.body as { name: string }[])].map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    expectError(await k.request("GET", "/ipam/servers?cursor=bad"), 400, "invalid_cursor");
  });

  it("refuses bad bodies with stable codes and writes nothing", async () => {
    const before = (await k.context("ipam").store.query<{ n: number }>("SELECT count(*)::int AS n FROM ipam.servers")).rows[0].n;
    expectError(await call("POST", "/ipam/servers", server({ base_url: "http://ipam.example.net" })), 400, "invalid_base_url");
    expectError(await call("POST", "/ipam/servers", server({ base_url: "not a url" })), 400, "invalid_base_url");
    expectError(await call("POST", "/ipam/servers", server({ base_url: "https://u:p@ipam.example.net" })), 400, "invalid_base_url");
    expectError(await call("POST", "/ipam/servers", server({ base_url: "https://ipam.example.net/?x=1" })), 400, "invalid_base_url");
    expectError(await call("POST", "/ipam/servers", server({ ca_cert_pem: "not a certificate" })), 400, "invalid_ca_cert");
    expectError(await call("POST", "/ipam/servers", server({ token: undefined })), 400, "validation_failed");
    expectError(await call("POST", "/ipam/servers", server({ token: "   " })), 400, "validation_failed");
    expectError(await call("POST", "/ipam/servers", server({ name: " " })), 400, "validation_failed");
    expectError(await call("POST", "/ipam/servers", server({ sync_interval_secs: 5 })), 400, "validation_failed");
    expectError(await call("POST", "/ipam/servers", server({ site_id_field: "has space" })), 400, "validation_failed");
    expectError(await call("POST", "/ipam/servers", server({ extra: 1 })), 400, "validation_failed");
    const after = (await k.context("ipam").store.query<{ n: number }>("SELECT count(*)::int AS n FROM ipam.servers")).rows[0].n;
    expect(after).toBe(before);
  });

  it("404 for an unknown server on every route", async () => {
    const id = randomUUID();
    const body = { name: "x", base_url: "https://ipam.example.net", enabled: true };
    expectError(await call("GET", `/ipam/servers/${id}`), 404, "not_found");
    expectError(await call("PUT", `/ipam/servers/${id}`, body), 404, "not_found");
    expectError(await call("DELETE", `/ipam/servers/${id}`), 404, "not_found");
    expectError(await call("POST", `/ipam/servers/${id}/sync`), 404, "not_found");
    expectError(await call("GET", `/ipam/servers/${id}/sites`), 404, "not_found");
    expectError(await call("GET", `/ipam/servers/${id}/site-mappings`), 404, "not_found");
    expectError(await call("PUT", `/ipam/servers/${id}/site-mappings`, { mappings: [] }), 404, "not_found");
    expectError(await call("GET", `/ipam/servers/not-a-uuid`), 400, "validation_failed");
  });

  describe("PUT (full document)", () => {
    const put = (id: string, body: Record<string, unknown>) => call("PUT", `/ipam/servers/${id}`, body);
    const doc = (extra: Record<string, unknown> = {}) => ({ name: "Main IPAM", base_url: "https://ipam.example.net", enabled: false, ...extra });

    it("keeps the token when it is omitted or null, replaces it when sent", async () => {
      const id = await create({ enabled: false });
      const sealed = await sealedToken(id);
      expect((await put(id, doc())).status).toBe(200);
      expect(await sealedToken(id)).toBe(sealed);
      expect((await put(id, doc({ token: null }))).status).toBe(200);
      expect(await sealedToken(id)).toBe(sealed);
      const res = await put(id, doc({ token: TOKEN2 }));
      expect(res.status).toBe(200);
      expect((res.body as { has_token: boolean }).has_token).toBe(true);
      const now = await sealedToken(id);
      expect(now).not.toBe(sealed);
      expect(k.context("ipam").secrets.unseal(now)).toBe(TOKEN2);
    });

    it("token_required_for_new_address: another scheme, host or port without a token; a new path keeps it", async () => {
      const id = await create({ base_url: "https://ipam.example.net:8443", enabled: false });
      const sealed = await sealedToken(id);
      for (const base_url of ["https://other.example.net:8443", "https://ipam.example.net", "https://ipam.example.net:9443"]) {
        expectError(await put(id, doc({ base_url })), 400, "token_required_for_new_address");
        expectError(await put(id, doc({ base_url, token: null })), 400, "token_required_for_new_address");
      }
      expect(((await call("GET", `/ipam/servers/${id}`)).body as { base_url: string }).base_url).toBe("https://ipam.example.net:8443");
      // Same origin, spelt differently, or another path: the stored token stays.
      expect((await put(id, doc({ base_url: "https://IPAM.example.net:8443/netbox" }))).status).toBe(200);
      expect(await sealedToken(id)).toBe(sealed);
      // A new address with its token.
      const moved = await put(id, doc({ base_url: "https://new.example.net", token: TOKEN2 }));
      expect(moved.status).toBe(200);
      expect((moved.body as { base_url: string }).base_url).toBe("https://new.example.net");
      // Moving https://host to https://host:443 is the same address.
      expect((await put(id, doc({ base_url: "https://new.example.net:443" }))).status).toBe(200);
    });

    it("site_id_field is two-state: omitting clears it", async () => {
      const id = await create({ site_id_field: "site_ref", enabled: false });
      const kept = await put(id, doc({ site_id_field: "other_ref" }));
      expect((kept.body as { site_id_field: string }).site_id_field).toBe("other_ref");
      const cleared = await put(id, doc());
      expect((cleared.body as { site_id_field: string | null }).site_id_field).toBeNull();
      expect((await put(id, doc({ site_id_field: "x" }))).status).toBe(200);
      expect(((await put(id, doc({ site_id_field: null }))).body as { site_id_field: string | null }).site_id_field).toBeNull();
    });

    it("ca_cert_pem is three-state: absent keeps, null clears, a string replaces", async () => {
      const id = await create({ ca_cert_pem: CA, enabled: false });
      const ca = (r: TestResponse) => (r.body as { ca_cert_pem: string | null }).ca_cert_pem;
      expect(ca(await put(id, doc()))).toContain(CA.trim().split("\n")[1]);
      expect(ca(await put(id, doc({ ca_cert_pem: CA2 })))).toContain(CA2.trim().split("\n")[1]);
      expect(ca(await put(id, doc()))).toContain(CA2.trim().split("\n")[1]);
      expect(ca(await put(id, doc({ ca_cert_pem: null })))).toBeNull();
      expect(ca(await put(id, doc()))).toBeNull();
      expectError(await put(id, doc({ ca_cert_pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----" })), 400, "invalid_ca_cert");
    });

    it("needs name, base_url and enabled; refuses unknown fields", async () => {
      const id = await create({ enabled: false });
      expectError(await put(id, { name: "x", base_url: "https://ipam.example.net" }), 400, "validation_failed");
      expectError(await put(id, { base_url: "https://ipam.example.net", enabled: true }), 400, "validation_failed");
      expectError(await put(id, doc({ bogus: true })), 400, "validation_failed");
      expectError(await put(id, doc({ base_url: "ftp://ipam.example.net" })), 400, "invalid_base_url");
      expectError(await put(id, doc({ token: "" })), 400, "validation_failed");
    });
  });

  it("deletes (204), then 404", async () => {
    const id = await create({ enabled: false });
    expect((await call("DELETE", `/ipam/servers/${id}`)).status).toBe(204);
    expectError(await call("GET", `/ipam/servers/${id}`), 404, "not_found");
    expectError(await call("DELETE", `/ipam/servers/${id}`), 404, "not_found");
  });

  it("subnet overlap acks: overlap_not_found, text_too_long, validation", async () => {
    expectError(await call("PUT", "/subnet-overlaps/acks", { key: "0".repeat(32) }), 404, "overlap_not_found");
    expectError(await call("PUT", "/subnet-overlaps/acks", { key: "whatever" }), 404, "overlap_not_found");
    expectError(await call("PUT", "/subnet-overlaps/acks", { key: "0".repeat(32), note: "x".repeat(1001) }), 400, "text_too_long");
    expectError(await call("PUT", "/subnet-overlaps/acks", { note: "x" }), 400, "validation_failed");
    expectError(await call("PUT", "/subnet-overlaps/acks", { key: "a", bogus: 1 }), 400, "validation_failed");
    const list = await call("GET", "/subnet-overlaps");
    expect(list).toMatchObject({ status: 200, body: [] });
  });
});

describe("access", () => {
  it("every route: 401 without or with a bad token; writes need ManageConfig; reads need read; folder-scoped callers get scope_unsupported", async () => {
    const id = await create({ name: "Access", enabled: false });
    const doc = { name: "Access", base_url: "https://ipam.example.net", enabled: false };
    const writes: [string, string, unknown?][] = [
      ["POST", "/ipam/servers", server({ name: "Access 2", enabled: false })],
      ["PUT", `/ipam/servers/${id}`, doc],
      ["DELETE", `/ipam/servers/${randomUUID()}`],
      ["POST", `/ipam/servers/${id}/sync`],
      ["PUT", `/ipam/servers/${id}/site-mappings`, { mappings: [] }],
      ["PUT", "/subnet-overlaps/acks", { key: "0".repeat(32) }],
    ];
    const reads: [string, string][] = [
      ["GET", "/ipam/servers"],
      ["GET", `/ipam/servers/${id}`],
      ["GET", `/ipam/servers/${id}/sites`],
      ["GET", `/ipam/servers/${id}/site-mappings`],
      ["GET", "/subnet-overlaps"],
    ];
    const viewerToken = await k.token("viewer");
    const viewerSession = await k.session("viewer");
    const operatorToken = await k.token("operator");
    const operatorSession = await k.session("operator");
    const adminSession = await k.session("admin");
    const scopedAdmin = await k.token("admin", { folders: [randomUUID()] });
    const scopedAdminSession = await k.session("admin", { folders: [randomUUID()] });
    const scopedViewer = await k.token("viewer", { folders: [randomUUID()] });
    for (const [method, path, body] of [...writes, ...reads]) {
      expectError(await call(method, path, body, null), 401, "unauthorized");
      expectError(await call(method, path, body, "not-a-token"), 401, "unauthorized");
      expectError(await call(method, path, body, scopedAdmin), 403, "scope_unsupported");
      expectError(await call(method, path, body, scopedAdminSession), 403, "scope_unsupported");
    }
    for (const [method, path, body] of writes) {
      expectError(await call(method, path, body, viewerToken), 403, "permission_denied");
      expectError(await call(method, path, body, viewerSession), 403, "permission_denied");
    }
    for (const [method, path] of reads) {
      for (const t of [viewerToken, viewerSession, operatorToken, operatorSession, adminSession])
        expect((await call(method, path, undefined, t)).status).toBe(200);
      expectError(await call(method, path, undefined, scopedViewer), 403, "scope_unsupported");
    }
    // Operators hold ManageConfig: the writes pass for them (token and session alike).
    expect((await call("POST", "/ipam/servers", server({ name: "By operator", enabled: false }), operatorToken)).status).toBe(201);
    expect((await call("PUT", `/ipam/servers/${id}`, doc, operatorSession)).status).toBe(200);
    expect((await call("POST", "/ipam/servers", server({ name: "By admin session", enabled: false }), adminSession)).status).toBe(201);
    expectError(await call("PUT", "/subnet-overlaps/acks", { key: "0".repeat(32) }, operatorToken), 404, "overlap_not_found");
  });
});

describe("OpenAPI", () => {
  it("documents every route with its envelopes and codes, and no token in any view", async () => {
    const doc = (await k.request("GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const paths = Object.fromEntries(Object.entries(doc.paths).filter(([p]) => p.startsWith("/api/v1/ipam/") || p.startsWith("/api/v1/subnet-overlaps")));
    expect(Object.keys(paths).sort()).toEqual([
      "/api/v1/ipam/servers",
      "/api/v1/ipam/servers/{id}",
      "/api/v1/ipam/servers/{id}/site-mappings",
      "/api/v1/ipam/servers/{id}/sites",
      "/api/v1/ipam/servers/{id}/sync",
      "/api/v1/subnet-overlaps",
      "/api/v1/subnet-overlaps/acks",
    ]);
    expect(responseProblems({ paths, components: doc.components as never })).toEqual([]);
    const described = (op: Operation, code: string) => (op.responses[code] as { description?: string }).description ?? "";
    expect(described(doc.paths["/api/v1/ipam/servers/{id}"].put, "400")).toContain("token_required_for_new_address");
    expect(described(doc.paths["/api/v1/subnet-overlaps/acks"].put, "400")).toContain("text_too_long");
    expect(described(doc.paths["/api/v1/subnet-overlaps/acks"].put, "404")).toContain("overlap_not_found");
    expect(Object.keys(doc.paths["/api/v1/subnet-overlaps/acks"].put.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "404", "503"]));
    expect(Object.keys(doc.components.schemas.IpamServerView.properties ?? {})).not.toContain("token");
    expect(Object.keys(doc.components.schemas.IpamServerView.properties ?? {})).toContain("has_token");
  });
});

describe("skeleton mode", () => {
  let s: TestKernel;
  beforeAll(async () => {
    await k.stop();
    stopped = true;
    s = await startTestKernel({ skeleton: true, plugins: [inventoryPlugin, ipamPlugin] });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("writes answer 503 store_unavailable; the lists answer empty; a single server 503", async () => {
    const id = randomUUID();
    const doc = { name: "x", base_url: "https://ipam.example.net", enabled: true };
    expectError(await s.request("POST", "/ipam/servers", { body: server() }), 503, "store_unavailable");
    expectError(await s.request("PUT", `/ipam/servers/${id}`, { body: doc }), 503, "store_unavailable");
    expectError(await s.request("DELETE", `/ipam/servers/${id}`), 503, "store_unavailable");
    expectError(await s.request("POST", `/ipam/servers/${id}/sync`), 503, "store_unavailable");
    expectError(await s.request("PUT", `/ipam/servers/${id}/site-mappings`, { body: { mappings: [] } }), 503, "store_unavailable");
    expectError(await s.request("PUT", "/subnet-overlaps/acks", { body: { key: "0".repeat(32) } }), 503, "store_unavailable");
    expectError(await s.request("GET", `/ipam/servers/${id}`), 503, "store_unavailable");
    expect(await s.request("GET", "/ipam/servers")).toMatchObject({ status: 200, body: [] });
    expect(await s.request("GET", "/subnet-overlaps")).toMatchObject({ status: 200, body: [] });
  });
});
