import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { CredentialService } from "../services/CredentialService.js";
import { bearer, folderScope, startInventoryKernel, collection } from "./support.js";
import { expectError } from "../../../test/support/assertions.js";

let k: TestKernel;
let db: string;
let operator: string;
let viewer: string;
let scopedOperator: string;
let scopedAdmin: string;

/** Every secret value any test sends: none may ever appear in a response, a log line or a row in clear. */
const SECRETS = {
  community: "c0mmunity-Zebra-7781",
  community2: "c0mmunity-Okapi-1209",
  authKey: "authKey-Walrus-4410",
  authKey2: "authKey-Narwhal-5521",
  privKey: "privKey-Heron-9932",
  apiKey: "apiKey-Lynx-0087-abcdef",
  password: "passw0rd-Quokka-3321",
  token: "bearer-Tapir-6654-xyz",
  shortKey: "Sh0rtK7",
} as const;
const ALL_SECRETS = Object.values(SECRETS);

function expectNoSecret(text: string): void {
  for (const s of ALL_SECRETS) expect(text).not.toContain(s);
}

const { post, put, get, del, list } = collection(() => k, "/api/v1/credentials");

let seq = 0;
const uniqueName = (label: string) => `${label}-${++seq}`;

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await post(body);
  if (res.status !== 201) throw new Error(`credential create failed: ${res.status} ${res.text}`);
  expectNoSecret(res.text);
  return res.body.id as string;
}

async function rawRow(id: string): Promise<{ kind: string; settings: Record<string, unknown>; secret_sealed: string | null }> {
  return (
    await rawQuery<{ kind: string; settings: Record<string, unknown>; secret_sealed: string | null }>(
      db,
      "SELECT kind, settings, secret_sealed FROM inventory.credentials WHERE id = $1",
      [id],
    )
  )[0];
}

/** The secrets stored for a credential, opened with the kernel's key. */
async function storedSecrets(id: string): Promise<Record<string, string> | null> {
  const row = await rawRow(id);
  return row.secret_sealed === null ? null : (JSON.parse(k.kernel.secrets.unseal(row.secret_sealed)) as Record<string, string>);
}

const v3AuthPriv = (name: string) => ({
  name,
  kind: "snmp_v3",
  user: "monitor",
  security_level: "authPriv",
  auth_protocol: "SHA256",
  auth_key: SECRETS.authKey,
  priv_protocol: "AES",
  priv_key: SECRETS.privKey,
});

// Two kernels in one process share Ts.ED's injector: the skeleton kernel starts only after this one stopped.
describe("full mode", () => {
  beforeAll(async () => {
    k = await startInventoryKernel();
    db = k.databaseUrl!;
    const folder = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.node_groups (name) VALUES ('site') RETURNING id"))[0].id;
    operator = await k.token("operator");
    viewer = await k.token("viewer");
    scopedOperator = await k.token("operator", folderScope(folder));
    scopedAdmin = await k.token("admin", folderScope(folder));
  });
  afterAll(async () => {
    // Nothing any test sent as a secret reached a log line.
    expect(k.logs.length).toBeGreaterThan(0);
    expectNoSecret(k.logs.join("\n"));
    await k?.stop();
  });

  describe("POST /api/v1/credentials", () => {
    it.each([
      ["snmp_v2c", { kind: "snmp_v2c", community: SECRETS.community }, {}, ["community"]],
      [
        "snmp_v3 authPriv",
        v3AuthPriv(""),
        { user: "monitor", security_level: "authPriv", auth_protocol: "SHA256", priv_protocol: "AES" },
        ["auth_key", "priv_key"],
      ],
      [
        "snmp_v3 authNoPriv",
        { kind: "snmp_v3", user: "u2", security_level: "authNoPriv", auth_protocol: "MD5", auth_key: SECRETS.authKey },
        { user: "u2", security_level: "authNoPriv", auth_protocol: "MD5" },
        ["auth_key"],
      ],
      ["netcloud_api", { kind: "netcloud_api", api_key: SECRETS.apiKey }, {}, ["api_key"]],
      ["http basic", { kind: "http", mode: "basic", username: "ops", password: SECRETS.password }, { mode: "basic", username: "ops" }, ["password"]],
      ["http bearer", { kind: "http", mode: "bearer", token: SECRETS.token }, { mode: "bearer" }, ["token"]],
    ])("creates %s: settings answered, secrets sealed and never answered", async (label, fields, settings, secretFields) => {
      const name = uniqueName(label.replace(/ /g, "-"));
      const res = await post({ ...fields, name }, operator);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(String) });
      const id = res.body.id as string;

      const got = await get(id);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        id,
        name,
        kind: (fields as { kind: string }).kind,
        settings,
        has_secret: true,
        secret_fields: secretFields,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.any(String),
      });
      expectNoSecret(got.text);

      const row = await rawRow(id);
      expect(row.secret_sealed).toMatch(/^sealed:v1:/);
      expectNoSecret(JSON.stringify(row));
      const opened = await storedSecrets(id);
      expect(Object.keys(opened!).sort()).toEqual([...secretFields].sort());
      for (const f of secretFields) expect(opened![f]).toBe((fields as Record<string, string>)[f]);
    });

    it("creates snmp_v3 noAuthNoPriv with no secret at all", async () => {
      const id = await create({ name: uniqueName("v3-none"), kind: "snmp_v3", user: "public-user", security_level: "noAuthNoPriv" });
      const got = await get(id);
      expect(got.body).toEqual(
        expect.objectContaining({ settings: { user: "public-user", security_level: "noAuthNoPriv" }, has_secret: false, secret_fields: [] }),
      );
      expect((await rawRow(id)).secret_sealed).toBeNull();
    });

    const v3 = (extra: Record<string, unknown>) => ({ name: "v3-bad", kind: "snmp_v3", user: "u", ...extra });
    it.each([
      ["no name", { kind: "snmp_v2c", community: SECRETS.community }],
      ["blank name", { name: " ", kind: "snmp_v2c", community: SECRETS.community }],
      ["no kind", { name: "x", community: SECRETS.community }],
      ["unknown kind", { name: "x", kind: "snmp_v1", community: SECRETS.community }],
      ["unknown field", { name: "x", kind: "snmp_v2c", community: SECRETS.community, colour: "red" }],
      ["snmp_v2c without community", { name: "x", kind: "snmp_v2c" }],
      ["snmp_v2c with empty community", { name: "x", kind: "snmp_v2c", community: "" }],
      ["snmp_v2c with a v3 field", { name: "x", kind: "snmp_v2c", community: SECRETS.community, user: "u" }],
      ["snmp_v3 without user", { name: "x", kind: "snmp_v3", security_level: "noAuthNoPriv" }],
      ["snmp_v3 without security_level", v3({})],
      ["snmp_v3 with an unknown security_level", v3({ security_level: "authAndPriv" })],
      ["snmp_v3 noAuthNoPriv with auth_key", v3({ security_level: "noAuthNoPriv", auth_key: SECRETS.authKey })],
      ["snmp_v3 noAuthNoPriv with auth_protocol", v3({ security_level: "noAuthNoPriv", auth_protocol: "SHA" })],
      ["snmp_v3 authNoPriv without auth_key", v3({ security_level: "authNoPriv", auth_protocol: "SHA" })],
      ["snmp_v3 authNoPriv without auth_protocol", v3({ security_level: "authNoPriv", auth_key: SECRETS.authKey })],
      ["snmp_v3 authNoPriv with a 7-character auth_key", v3({ security_level: "authNoPriv", auth_protocol: "SHA", auth_key: SECRETS.shortKey })],
      ["snmp_v3 authNoPriv with priv_key", v3({ security_level: "authNoPriv", auth_protocol: "SHA", auth_key: SECRETS.authKey, priv_key: SECRETS.privKey })],
      ["snmp_v3 authNoPriv with priv_protocol", v3({ security_level: "authNoPriv", auth_protocol: "SHA", auth_key: SECRETS.authKey, priv_protocol: "AES" })],
      ["snmp_v3 authPriv without priv_key", v3({ security_level: "authPriv", auth_protocol: "SHA", auth_key: SECRETS.authKey, priv_protocol: "AES" })],
      [
        "snmp_v3 authPriv without priv_protocol",
        v3({ security_level: "authPriv", auth_protocol: "SHA", auth_key: SECRETS.authKey, priv_key: SECRETS.privKey }),
      ],
      ["snmp_v3 authPriv without auth_key", v3({ security_level: "authPriv", auth_protocol: "SHA", priv_protocol: "AES", priv_key: SECRETS.privKey })],
      [
        "snmp_v3 authPriv with a 7-character priv_key",
        v3({ security_level: "authPriv", auth_protocol: "SHA", auth_key: SECRETS.authKey, priv_protocol: "AES", priv_key: SECRETS.shortKey }),
      ],
      ["snmp_v3 unknown auth_protocol", v3({ security_level: "authNoPriv", auth_protocol: "SHA1", auth_key: SECRETS.authKey })],
      [
        "snmp_v3 unknown priv_protocol",
        v3({ security_level: "authPriv", auth_protocol: "SHA", auth_key: SECRETS.authKey, priv_protocol: "3DES", priv_key: SECRETS.privKey }),
      ],
      ["snmp_v3 user longer than 32", { ...v3({ security_level: "noAuthNoPriv" }), user: "u".repeat(33) }],
      ["netcloud_api without api_key", { name: "x", kind: "netcloud_api" }],
      ["netcloud_api with a community", { name: "x", kind: "netcloud_api", api_key: SECRETS.apiKey, community: SECRETS.community }],
      ["http without mode", { name: "x", kind: "http", token: SECRETS.token }],
      ["http with an unknown mode", { name: "x", kind: "http", mode: "digest", token: SECRETS.token }],
      ["http basic without username", { name: "x", kind: "http", mode: "basic", password: SECRETS.password }],
      ["http basic without password", { name: "x", kind: "http", mode: "basic", username: "ops" }],
      ["http basic with a token", { name: "x", kind: "http", mode: "basic", username: "ops", password: SECRETS.password, token: SECRETS.token }],
      ["http bearer without token", { name: "x", kind: "http", mode: "bearer" }],
      ["http bearer with a username", { name: "x", kind: "http", mode: "bearer", token: SECRETS.token, username: "ops" }],
      ["a secret that is not a string", { name: "x", kind: "snmp_v2c", community: 12345 }],
    ])("400 validation_failed: %s (the message carries no secret)", async (_label, body) => {
      const res = await post(body);
      expectError(res, 400, "validation_failed");
      expectNoSecret(res.text);
    });

    it("400 without a body", async () => {
      expect((await k.http.post("/api/v1/credentials").set(bearer(k.adminToken))).status).toBe(400);
    });

    it("nothing was written by the refused requests", async () => {
      expect(await rawQuery(db, "SELECT 1 FROM inventory.credentials WHERE name IN ('x', 'v3-bad')")).toEqual([]);
    });

    it("409 name_taken, names compared case-insensitively", async () => {
      await create({ name: "Core SNMP", kind: "snmp_v2c", community: SECRETS.community });
      const res = await post({ name: "core snmp", kind: "netcloud_api", api_key: SECRETS.apiKey });
      expectError(res, 409, "name_taken");
      expectNoSecret(res.text);
    });

    it("401 without a token; 403 for a viewer; 403 scope_unsupported for folder-scoped callers", async () => {
      const body = { name: "guarded", kind: "snmp_v2c", community: SECRETS.community };
      expectError(await k.http.post("/api/v1/credentials").send(body), 401, "unauthorized");
      expectError(await post(body, viewer), 403, "permission_denied");
      expectError(await post(body, scopedOperator), 403, "scope_unsupported");
      expectError(await post(body, scopedAdmin), 403, "scope_unsupported");
      expect(await rawQuery(db, "SELECT 1 FROM inventory.credentials WHERE name = 'guarded'")).toEqual([]);
    });
  });

  describe("GET /api/v1/credentials", () => {
    it("pages by (lower(name), id) with X-Next-Cursor, never answering a secret", async () => {
      const expected = (await rawQuery<{ id: string }>(db, "SELECT id FROM inventory.credentials ORDER BY lower(name), id")).map((r) => r.id);
      expect(expected.length).toBeGreaterThan(3);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await list(cursor ? { limit: 3, cursor } : { limit: 3 }, operator);
        expect(res.status).toBe(200);
        expectNoSecret(res.text);
        seen.push(...res.body.map((c: { id: string }) => c.id));
        cursor = res.headers["x-next-cursor"];
        pages++;
      } while (cursor && pages < 50);
      expect(seen).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / 3));
    });

    it("filters by kind", async () => {
      const res = await list({ kind: "http" });
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThanOrEqual(2);
      expect(res.body.every((c: { kind: string }) => c.kind === "http")).toBe(true);
      expectNoSecret(res.text);
    });

    it.each([
      ["limit 0", { limit: 0 }, "validation_failed"],
      ["limit 1001", { limit: 1001 }, "validation_failed"],
      ["an unknown kind", { kind: "ftp" }, "validation_failed"],
      ["a garbage cursor", { cursor: "%%%" }, "invalid_cursor"],
      ["a cursor with a non-uuid id", { cursor: Buffer.from(JSON.stringify(["a", "b"])).toString("base64url") }, "invalid_cursor"],
    ])("400 for %s", async (_label, query, code) => {
      expectError(await list(query as Record<string, string | number>), 400, code);
    });

    it("401 without a token; 403 for a viewer (credentials are sensitive); 403 scope_unsupported for folder-scoped callers", async () => {
      expectError(await k.http.get("/api/v1/credentials"), 401, "unauthorized");
      expectError(await list({}, viewer), 403, "permission_denied");
      expectError(await list({}, scopedOperator), 403, "scope_unsupported");
      expectError(await list({}, scopedAdmin), 403, "scope_unsupported");
    });
  });

  describe("GET /api/v1/credentials/{id}", () => {
    it("200 for an operator; 404 missing; 400 malformed; 401; 403 viewer; 403 scope_unsupported", async () => {
      const id = await create({ name: uniqueName("get-one"), kind: "netcloud_api", api_key: SECRETS.apiKey });
      const ok = await get(id, operator);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual(expect.objectContaining({ id, kind: "netcloud_api", settings: {}, has_secret: true, secret_fields: ["api_key"] }));
      expectNoSecret(ok.text);
      expectError(await get(randomUUID()), 404, "not_found");
      expectError(await get("not-a-uuid"), 400, "validation_failed");
      expectError(await k.http.get(`/api/v1/credentials/${id}`), 401, "unauthorized");
      expectError(await get(id, viewer), 403, "permission_denied");
      expectError(await get(id, scopedOperator), 403, "scope_unsupported");
    });
  });

  describe("PUT /api/v1/credentials/{id}", () => {
    it("keeps a stored secret the update leaves out, and replaces one it sends", async () => {
      const name = uniqueName("v3-keep");
      const id = await create(v3AuthPriv(name));
      const before = await rawRow(id);

      // No secrets sent: both kept; non-secret fields replaced.
      const res = await put(id, { name, kind: "snmp_v3", user: "monitor2", security_level: "authPriv", auth_protocol: "SHA512", priv_protocol: "AES256" });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          id,
          settings: { user: "monitor2", security_level: "authPriv", auth_protocol: "SHA512", priv_protocol: "AES256" },
          has_secret: true,
          secret_fields: ["auth_key", "priv_key"],
        }),
      );
      expectNoSecret(res.text);
      expect(await storedSecrets(id)).toEqual({ auth_key: SECRETS.authKey, priv_key: SECRETS.privKey });
      expect((await rawRow(id)).secret_sealed).not.toBe(before.secret_sealed);

      // One secret sent: it replaces the stored one, the other is kept.
      const res2 = await put(id, {
        name,
        kind: "snmp_v3",
        user: "monitor2",
        security_level: "authPriv",
        auth_protocol: "SHA",
        auth_key: SECRETS.authKey2,
        priv_protocol: "DES",
      });
      expect(res2.status).toBe(200);
      expectNoSecret(res2.text);
      expect(await storedSecrets(id)).toEqual({ auth_key: SECRETS.authKey2, priv_key: SECRETS.privKey });

      // Through the service other parts of the plugin use (never over HTTP).
      const revealed = await k.kernel.context("inventory")!.get(CredentialService).reveal(id);
      expect(revealed).toEqual({
        id,
        name,
        kind: "snmp_v3",
        settings: { user: "monitor2", security_level: "authPriv", auth_protocol: "SHA", priv_protocol: "DES" },
        secrets: { auth_key: SECRETS.authKey2, priv_key: SECRETS.privKey },
      });
    });

    it("keeps the community of an snmp_v2c credential across a rename", async () => {
      const id = await create({ name: uniqueName("v2c"), kind: "snmp_v2c", community: SECRETS.community });
      const renamed = uniqueName("v2c-renamed");
      const res = await put(id, { name: renamed, kind: "snmp_v2c" }, operator);
      expect(res.status).toBe(200);
      expect(res.body.name).toBe(renamed);
      expect(await storedSecrets(id)).toEqual({ community: SECRETS.community });
      expect((await put(id, { name: renamed, kind: "snmp_v2c", community: SECRETS.community2 })).status).toBe(200);
      expect(await storedSecrets(id)).toEqual({ community: SECRETS.community2 });
    });

    it("lowering the SNMPv3 level drops the secrets it no longer uses; raising it needs the new ones", async () => {
      const name = uniqueName("v3-levels");
      const id = await create(v3AuthPriv(name));
      const down = await put(id, { name, kind: "snmp_v3", user: "monitor", security_level: "authNoPriv", auth_protocol: "SHA256" });
      expect(down.status).toBe(200);
      expect(down.body.secret_fields).toEqual(["auth_key"]);
      expect(await storedSecrets(id)).toEqual({ auth_key: SECRETS.authKey });

      const upRefused = await put(id, { name, kind: "snmp_v3", user: "monitor", security_level: "authPriv", auth_protocol: "SHA256", priv_protocol: "AES" });
      expectError(upRefused, 400, "validation_failed");
      expect(upRefused.body.error.message).toMatch(/priv_key/);
      expect(await storedSecrets(id)).toEqual({ auth_key: SECRETS.authKey });

      const none = await put(id, { name, kind: "snmp_v3", user: "monitor", security_level: "noAuthNoPriv" });
      expect(none.status).toBe(200);
      expect(none.body).toEqual(expect.objectContaining({ has_secret: false, secret_fields: [] }));
      expect((await rawRow(id)).secret_sealed).toBeNull();
    });

    it("refuses a kind change without the new kind's secrets, and accepts it with them", async () => {
      const name = uniqueName("kind-change");
      const id = await create({ name, kind: "http", mode: "basic", username: "ops", password: SECRETS.password });
      const before = await rawRow(id);

      const refused = await put(id, { name, kind: "netcloud_api" });
      expectError(refused, 400, "validation_failed");
      expect(refused.body.error.message).toMatch(/api_key/);
      expect(await rawRow(id)).toEqual(before);

      // Same kind, other mode: the bearer token is not stored yet.
      expectError(await put(id, { name, kind: "http", mode: "bearer" }), 400, "validation_failed");
      expect(await rawRow(id)).toEqual(before);

      const changed = await put(id, { name, kind: "netcloud_api", api_key: SECRETS.apiKey });
      expect(changed.status).toBe(200);
      expect(changed.body).toEqual(expect.objectContaining({ kind: "netcloud_api", settings: {}, secret_fields: ["api_key"] }));
      expect(await storedSecrets(id)).toEqual({ api_key: SECRETS.apiKey });
      expectNoSecret(JSON.stringify(await rawRow(id)));
    });

    it("400 for fields outside the kind, a short key, a malformed id", async () => {
      const name = uniqueName("put-bad");
      const id = await create({ name, kind: "snmp_v2c", community: SECRETS.community });
      expectError(await put(id, { name, kind: "snmp_v2c", api_key: SECRETS.apiKey }), 400, "validation_failed");
      expectError(
        await put(id, { name, kind: "snmp_v3", user: "u", security_level: "authNoPriv", auth_protocol: "MD5", auth_key: SECRETS.shortKey }),
        400,
        "validation_failed",
      );
      expectError(await put(id, { kind: "snmp_v2c" }), 400, "validation_failed");
      expectError(await put("nope", { name, kind: "snmp_v2c" }), 400, "validation_failed");
      expect(await storedSecrets(id)).toEqual({ community: SECRETS.community });
    });

    it("409 name_taken when renaming onto another credential's name", async () => {
      await create({ name: "Taken cred", kind: "snmp_v2c", community: SECRETS.community });
      const name = uniqueName("free-cred");
      const id = await create({ name, kind: "snmp_v2c", community: SECRETS.community });
      expectError(await put(id, { name: "TAKEN cred", kind: "snmp_v2c" }), 409, "name_taken");
    });

    it("404 for a missing id", async () => {
      expectError(await put(randomUUID(), { name: "ghost", kind: "snmp_v2c", community: SECRETS.community }), 404, "not_found");
    });

    it("401, 403 viewer, 403 scope_unsupported", async () => {
      const name = uniqueName("put-guarded");
      const id = await create({ name, kind: "snmp_v2c", community: SECRETS.community });
      const body = { name: "changed", kind: "snmp_v2c" };
      expectError(await k.http.put(`/api/v1/credentials/${id}`).send(body), 401, "unauthorized");
      expectError(await put(id, body, viewer), 403, "permission_denied");
      expectError(await put(id, body, scopedAdmin), 403, "scope_unsupported");
      expect((await get(id)).body.name).toBe(name);
    });
  });

  describe("DELETE /api/v1/credentials/{id}", () => {
    it("deletes an unused credential (204), then 404", async () => {
      const id = await create({ name: uniqueName("delete-me"), kind: "snmp_v2c", community: SECRETS.community });
      const res = await del(id, operator);
      expect(res.status).toBe(204);
      expect(await rawQuery(db, "SELECT 1 FROM inventory.credentials WHERE id = $1", [id])).toEqual([]);
      expectError(await del(id), 404, "not_found");
      expectError(await get(id), 404, "not_found");
    });

    it("409 credential_in_use while a node or a URL check references it", async () => {
      const byNode = await create({ name: uniqueName("used-by-node"), kind: "snmp_v2c", community: SECRETS.community });
      await rawQuery(db, "INSERT INTO inventory.nodes (name, address, credential_id) VALUES ('n1', '192.0.2.10', $1)", [byNode]);
      expectError(await del(byNode), 409, "credential_in_use");

      const byCheck = await create({ name: uniqueName("used-by-check"), kind: "http", mode: "bearer", token: SECRETS.token });
      const node = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.nodes (name, address) VALUES ('web', '192.0.2.11') RETURNING id"))[0].id;
      await rawQuery(db, "INSERT INTO inventory.url_checks (node_id, url, credential_id) VALUES ($1, 'https://web.example/', $2)", [node, byCheck]);
      const refused = await del(byCheck);
      expectError(refused, 409, "credential_in_use");
      expect(refused.body.error.message).toMatch(/URL check/);

      for (const id of [byNode, byCheck]) expect((await get(id)).status).toBe(200);
    });

    it("400 malformed id, 401, 403 viewer, 403 scope_unsupported", async () => {
      const id = await create({ name: uniqueName("delete-guarded"), kind: "snmp_v2c", community: SECRETS.community });
      expectError(await del("nope"), 400, "validation_failed");
      expectError(await k.http.delete(`/api/v1/credentials/${id}`), 401, "unauthorized");
      expectError(await del(id, viewer), 403, "permission_denied");
      expectError(await del(id, scopedOperator), 403, "scope_unsupported");
      expect((await get(id)).status).toBe(200);
    });
  });

  describe("CredentialService.reveal", () => {
    it("answers the unsealed secrets to the plugin's services, null for an unknown id", async () => {
      const service = k.kernel.context("inventory")!.get(CredentialService);
      const id = await create({ name: uniqueName("reveal"), kind: "http", mode: "basic", username: "ops", password: SECRETS.password });
      expect(await service.reveal(id)).toEqual(
        expect.objectContaining({ id, kind: "http", settings: { mode: "basic", username: "ops" }, secrets: { password: SECRETS.password } }),
      );
      expect(await service.reveal(randomUUID())).toBeNull();
      expect(await service.reveal("not-a-uuid")).toBeNull();
    });

    it("is not reachable over HTTP", async () => {
      const id = await create({ name: uniqueName("no-reveal-route"), kind: "netcloud_api", api_key: SECRETS.apiKey });
      for (const path of [`/api/v1/credentials/${id}/reveal`, `/api/v1/credentials/${id}/secret`, `/api/v1/credentials/${id}?reveal=true`]) {
        const res = await k.http.get(path).set(bearer(k.adminToken));
        expect(res.status).not.toBe(500);
        expectNoSecret(res.text);
      }
      const doc = await k.http.get("/api/v1/openapi.json").set(bearer(k.adminToken));
      const paths = Object.keys((doc.body as { paths?: Record<string, unknown> }).paths ?? {}).filter((p) => p.includes("credentials"));
      expect(paths.sort()).toEqual(["/api/v1/credentials", "/api/v1/credentials/{id}"]);
    });
  });
});

describe("skeleton mode", () => {
  let s: TestKernel;
  beforeAll(async () => {
    s = await startInventoryKernel({ skeleton: true });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("answers 503 to reads and writes", async () => {
    const auth = bearer(s.adminToken);
    const id = randomUUID();
    const body = { name: "x", kind: "snmp_v2c", community: SECRETS.community };
    const answers = [
      await s.http.get("/api/v1/credentials").set(auth),
      await s.http.get(`/api/v1/credentials/${id}`).set(auth),
      await s.http.post("/api/v1/credentials").set(auth).send(body),
      await s.http.put(`/api/v1/credentials/${id}`).set(auth).send(body),
      await s.http.delete(`/api/v1/credentials/${id}`).set(auth),
    ];
    for (const res of answers) expectError(res, 503, "store_unavailable");
    expectNoSecret(s.logs.join("\n"));
  });
});
