import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Response } from "supertest";
import { fixtureWidgetsPlugin } from "../fixtures/plugins/widgets/index.js";
import { rawQuery } from "../support/db.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { expectEnvelope } from "../support/assertions.js";

let k: TestKernel;
/** Every response body this file received, to check that no password or token hash ever leaves. */
const seen: string[] = [];

beforeAll(async () => {
  k = await startTestKernel({ plugins: [fixtureWidgetsPlugin] });
});
afterAll(async () => {
  await k?.stop();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const sha256 = (token: string) => createHash("sha256").update(token, "utf8").digest();

function keep(res: Response): Response {
  seen.push(res.text ?? "", JSON.stringify(res.headers));
  return res;
}

const api = {
  get: async (path: string, token = k.adminToken) => keep(await k.http.get(`/api/v1${path}`).set(bearer(token))),
  post: async (path: string, body: unknown, token = k.adminToken) =>
    keep(
      await k.http
        .post(`/api/v1${path}`)
        .set(bearer(token))
        .send(body as object),
    ),
  put: async (path: string, body: unknown, token = k.adminToken) =>
    keep(
      await k.http
        .put(`/api/v1${path}`)
        .set(bearer(token))
        .send(body as object),
    ),
  delete: async (path: string, token = k.adminToken) => keep(await k.http.delete(`/api/v1${path}`).set(bearer(token))),
};

interface AccountView {
  id: string;
  username: string;
  role: string;
  scope: unknown;
  created_at: string;
  updated_at: string;
}

interface TokenView {
  id: string;
  name: string;
  role: string;
  scope: unknown;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

const ACCOUNT_KEYS = ["created_at", "id", "role", "scope", "updated_at", "username"];
const TOKEN_KEYS = ["created_at", "expires_at", "id", "last_used_at", "name", "role", "scope"];
const REPEATED = randomUUID();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function createAccount(body: Record<string, unknown>): Promise<string> {
  const res = await api.post("/accounts", body);
  expect(res.status).toBe(201);
  return (res.body as { id: string }).id;
}

async function allAccounts(): Promise<AccountView[]> {
  const res = await api.get("/accounts?limit=1000");
  expect(res.status).toBe(200);
  return res.body as AccountView[];
}

async function allTokens(): Promise<TokenView[]> {
  const res = await api.get("/tokens?limit=1000");
  expect(res.status).toBe(200);
  return res.body as TokenView[];
}

describe("accounts: create", () => {
  const password = `pw-${randomBytes(12).toString("hex")}`;

  it("creates an account: 201 {id}", async () => {
    const res = await api.post("/accounts", { username: "Alice.Example", password, role: "operator", scope: { folders: [randomUUID()] } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(["id"]);
    expect(res.body.id).toMatch(UUID);
    const got = await api.get(`/accounts/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(Object.keys(got.body).sort()).toEqual(ACCOUNT_KEYS);
    expect(got.body).toMatchObject({ id: res.body.id, username: "Alice.Example", role: "operator" });
    expect(Date.parse(got.body.created_at)).not.toBeNaN();
  });

  it("defaults the scope to All", async () => {
    const id = await createAccount({ username: "scope-default", password, role: "viewer" });
    expect((await api.get(`/accounts/${id}`)).body.scope).toBe("All");
  });

  it("refuses a duplicate username, case-insensitively, with 409 username_taken", async () => {
    for (const username of ["Alice.Example", "alice.example", "ALICE.EXAMPLE"]) {
      const res = await api.post("/accounts", { username, password, role: "viewer" });
      expect({ username, status: res.status }).toEqual({ username, status: 409 });
      expectEnvelope(res.body, "username_taken");
    }
    expect((await allAccounts()).filter((a) => a.username.toLowerCase() === "alice.example")).toHaveLength(1);
  });

  it("refuses a duplicate of the bootstrap admin account", async () => {
    const res = await api.post("/accounts", { username: "Admin", password, role: "admin" });
    expect(res.status).toBe(409);
    expectEnvelope(res.body, "username_taken");
  });

  it.each([
    ["an unknown role", { username: "x-role", password: "password-123", role: "superuser" }, "validation_failed"],
    ["a missing role", { username: "x-role2", password: "password-123" }, "validation_failed"],
    ["a missing password", { username: "x-pw", role: "viewer" }, "validation_failed"],
    ["a short password", { username: "x-pw2", password: "short", role: "viewer" }, "validation_failed"],
    ["a username with spaces", { username: "bad name", password: "password-123", role: "viewer" }, "validation_failed"],
    ["an empty username", { username: "", password: "password-123", role: "viewer" }, "validation_failed"],
    ["a 65-character username", { username: "u".repeat(65), password: "password-123", role: "viewer" }, "validation_failed"],
    ["an extra field", { username: "x-extra", password: "password-123", role: "viewer", is_root: true }, "validation_failed"],
    ["a scope string other than All", { username: "x-s1", password: "password-123", role: "viewer", scope: "Some" }, "invalid_scope"],
    ["an empty folder list", { username: "x-s2", password: "password-123", role: "viewer", scope: { folders: [] } }, "invalid_scope"],
    ["a non-uuid folder", { username: "x-s3", password: "password-123", role: "viewer", scope: { folders: ["lab"] } }, "invalid_scope"],
    ["a repeated folder", { username: "x-s4", password: "password-123", role: "viewer", scope: { folders: [REPEATED, REPEATED] } }, "invalid_scope"],
    ["an extra scope key", { username: "x-s5", password: "password-123", role: "viewer", scope: { folders: [randomUUID()], all: true } }, "invalid_scope"],
    ["a numeric scope", { username: "x-s6", password: "password-123", role: "viewer", scope: 7 }, "validation_failed"],
  ])("refuses %s with 400", async (_what, body, code) => {
    const res = await api.post("/accounts", body);
    expect(res.status).toBe(400);
    expectEnvelope(res.body, code);
    expect((await allAccounts()).some((a) => a.username === (body as { username: string }).username)).toBe(false);
  });

  it("never returns or logs a password, and stores it as scrypt", async () => {
    const secret = `Pw-${randomBytes(16).toString("hex")}`;
    const id = await createAccount({ username: "pw-check", password: secret, role: "viewer" });
    await api.get(`/accounts/${id}`);
    await allAccounts();
    const login = await k.http.post("/api/v1/auth/sessions").send({ username: "pw-check", password: secret });
    keep(login);
    expect(login.status).toBe(201);
    const bad = keep(await k.http.post("/api/v1/auth/sessions").send({ username: "pw-check", password: `${secret}-wrong` }));
    expect(bad.status).toBe(401);
    const newSecret = `Pw2-${randomBytes(16).toString("hex")}`;
    expect((await api.put(`/accounts/${id}`, { role: "viewer", scope: "All", password: newSecret })).status).toBe(204);
    const badBody = await api.post("/accounts", { username: "pw-check-2", password: secret, role: "nope" });
    expect(badBody.status).toBe(400);

    for (const text of [...seen, ...k.logs, ...k.printed]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(newSecret);
      expect(text).not.toContain("password_hash");
      expect(text).not.toContain("scrypt$");
    }
    const rows = await rawQuery<{ username: string; password_hash: string }>(k.databaseUrl!, "SELECT username, password_hash FROM core.accounts");
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) {
      expect(row.password_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]{16,}\$[A-Za-z0-9_-]{40,}$/);
      expect(row.password_hash).not.toContain(secret);
      expect(row.password_hash).not.toContain(newSecret);
    }
    // Same password, different salt: no two accounts share a hash.
    expect(new Set(rows.map((r) => r.password_hash)).size).toBe(rows.length);
  });
});

describe("accounts: list", () => {
  beforeAll(async () => {
    for (const username of ["list-Charlie", "list-alpha", "list-Bravo", "list-delta", "list-echo", "LIST-foxtrot", "list-golf"]) {
      await createAccount({ username, password: "password-123", role: "viewer" });
    }
  });

  it("orders by username, case-insensitively, and never shows a password hash", async () => {
    const rows = await allAccounts();
    const names = rows.map((a) => a.username);
    expect(names).toEqual([...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0)));
    expect(names.filter((n) => n.toLowerCase().startsWith("list-"))).toEqual([
      "list-alpha",
      "list-Bravo",
      "list-Charlie",
      "list-delta",
      "list-echo",
      "LIST-foxtrot",
      "list-golf",
    ]);
    expect(names).toContain("admin");
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(ACCOUNT_KEYS);
  });

  it("walks every account exactly once with keyset `after` pages", async () => {
    const everything = (await allAccounts()).map((a) => a.id);
    for (const size of [1, 2, 3]) {
      const walked: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 100; page++) {
        const res = await api.get(`/accounts?limit=${size}${after ? `&after=${encodeURIComponent(after)}` : ""}`);
        expect(res.status).toBe(200);
        const rows = res.body as AccountView[];
        expect(rows.length).toBeLessThanOrEqual(size);
        walked.push(...rows.map((a) => a.id));
        if (rows.length < size) break;
        after = rows[rows.length - 1].username;
      }
      expect(walked).toEqual(everything);
    }
  });

  it("continues after a username given in another case", async () => {
    const res = await api.get("/accounts?limit=1000&after=LIST-DELTA");
    expect(res.status).toBe(200);
    const names = (res.body as AccountView[]).map((a) => a.username);
    expect(names.slice(0, 3)).toEqual(["list-echo", "LIST-foxtrot", "list-golf"]);
  });

  it("bounds the limit to 1..1000", async () => {
    for (const limit of ["0", "1001", "-1", "1.5", "ten"]) {
      const res = await api.get(`/accounts?limit=${limit}`);
      expect({ limit, status: res.status }).toEqual({ limit, status: 400 });
      expectEnvelope(res.body, "validation_failed");
    }
    expect((await api.get("/accounts?limit=1000")).status).toBe(200);
    expect((await api.get("/accounts?limit=1")).body).toHaveLength(1);
  });

  it("caps the default page at 100", async () => {
    const res = await api.get("/accounts");
    expect(res.status).toBe(200);
    expect((res.body as unknown[]).length).toBeLessThanOrEqual(100);
  });
});

describe("accounts: get, put, delete", () => {
  it("replaces role and scope with PUT, keeping the password unless given", async () => {
    const id = await createAccount({ username: "put-me", password: "first-password", role: "viewer" });
    const before = (await api.get(`/accounts/${id}`)).body as AccountView;
    const scope = { folders: [randomUUID(), randomUUID()] };
    const res = await api.put(`/accounts/${id}`, { role: "operator", scope });
    expect(res.status).toBe(204);
    const after = (await api.get(`/accounts/${id}`)).body as AccountView;
    expect(after).toMatchObject({ id, username: "put-me", role: "operator", scope });
    expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
    expect(after.created_at).toBe(before.created_at);
    const login = await k.http.post("/api/v1/auth/sessions").send({ username: "put-me", password: "first-password" });
    expect(login.status).toBe(201);
    expect((await k.http.get("/api/v1/auth/me").set(bearer(login.body.token))).body).toEqual({
      kind: "session",
      role: "operator",
      scope,
      username: "put-me",
    });

    expect((await api.put(`/accounts/${id}`, { role: "operator", scope: "All", password: "second-password" })).status).toBe(204);
    expect((await k.http.post("/api/v1/auth/sessions").send({ username: "put-me", password: "second-password" })).status).toBe(201);
    expect((await k.http.post("/api/v1/auth/sessions").send({ username: "put-me", password: "first-password" })).status).toBe(401);
  });

  it("refuses an invalid PUT body with 400", async () => {
    const id = await createAccount({ username: "put-bad", password: "password-123", role: "viewer" });
    for (const [body, code] of [
      [{ role: "operator" }, "validation_failed"],
      [{ role: "root", scope: "All" }, "validation_failed"],
      [{ role: "viewer", scope: "All", username: "renamed" }, "validation_failed"],
      [{ role: "viewer", scope: "All", password: "short" }, "validation_failed"],
      [{ role: "viewer", scope: { folders: ["x"] } }, "invalid_scope"],
    ] as [object, string][]) {
      const res = await api.put(`/accounts/${id}`, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expectEnvelope(res.body, code);
    }
    expect((await api.get(`/accounts/${id}`)).body).toMatchObject({ username: "put-bad", role: "viewer", scope: "All" });
  });

  it("deletes an account (204), ending its sessions", async () => {
    const id = await createAccount({ username: "delete-me", password: "password-123", role: "viewer" });
    const login = await k.http.post("/api/v1/auth/sessions").send({ username: "delete-me", password: "password-123" });
    expect(login.status).toBe(201);
    expect((await api.delete(`/accounts/${id}`)).status).toBe(204);
    expect((await api.get(`/accounts/${id}`)).status).toBe(404);
    const me = await k.http.get("/api/v1/auth/me").set(bearer(login.body.token));
    expect(me.status).toBe(401);
    expect((await allAccounts()).some((a) => a.id === id)).toBe(false);
    const again = await api.delete(`/accounts/${id}`);
    expect(again.status).toBe(404);
  });

  it("answers an unknown uuid with 404 not_found", async () => {
    const id = randomUUID();
    for (const res of [
      await api.get(`/accounts/${id}`),
      await api.put(`/accounts/${id}`, { role: "viewer", scope: "All" }),
      await api.delete(`/accounts/${id}`),
    ]) {
      expect(res.status).toBe(404);
      expectEnvelope(res.body, "not_found");
    }
  });

  it("answers a non-uuid id with 400", async () => {
    for (const id of ["42", "admin", "not-a-uuid", `${randomUUID()}x`]) {
      for (const res of [
        await api.get(`/accounts/${id}`),
        await api.put(`/accounts/${id}`, { role: "viewer", scope: "All" }),
        await api.delete(`/accounts/${id}`),
      ]) {
        expect({ id, status: res.status }).toEqual({ id, status: 400 });
        expectEnvelope(res.body, "validation_failed");
      }
    }
  });
});

describe("accounts: the last admin", () => {
  let adminId: string;

  beforeAll(async () => {
    // Leave the bootstrap "admin" account as the only admin.
    for (const a of await allAccounts()) {
      if (a.role === "admin" && a.username !== "admin") expect((await api.delete(`/accounts/${a.id}`)).status).toBe(204);
    }
    const admins = (await allAccounts()).filter((a) => a.role === "admin");
    expect(admins.map((a) => a.username)).toEqual(["admin"]);
    adminId = admins[0].id;
  });

  it("logs in the bootstrap admin with the password printed once at boot", async () => {
    const line = k.printed.find((l) => l.includes('Created account "admin"'));
    expect(line).toBeDefined();
    const password = /generated password: (\S+)/.exec(line!)?.[1];
    expect(password).toBeTruthy();
    expect(k.logs.some((l) => l.includes(password!))).toBe(false);
    const res = await k.http.post("/api/v1/auth/sessions").send({ username: "admin", password });
    expect(res.status).toBe(201);
  });

  it("cannot be demoted or deleted (409 last_admin)", async () => {
    for (const role of ["operator", "viewer"]) {
      const res = await api.put(`/accounts/${adminId}`, { role, scope: "All" });
      expect(res.status).toBe(409);
      expectEnvelope(res.body, "last_admin");
    }
    const del = await api.delete(`/accounts/${adminId}`);
    expect(del.status).toBe(409);
    expectEnvelope(del.body, "last_admin");
    expect((await api.get(`/accounts/${adminId}`)).body).toMatchObject({ username: "admin", role: "admin" });
    // Still an admin: changing its scope or password is fine.
    expect((await api.put(`/accounts/${adminId}`, { role: "admin", scope: "All" })).status).toBe(204);
  });

  it("can be demoted once another admin exists, which then becomes the last", async () => {
    const second = await createAccount({ username: "admin-two", password: "password-123", role: "admin" });
    expect((await api.put(`/accounts/${adminId}`, { role: "operator", scope: "All" })).status).toBe(204);
    const demote = await api.put(`/accounts/${second}`, { role: "viewer", scope: "All" });
    expect(demote.status).toBe(409);
    expectEnvelope(demote.body, "last_admin");
    const del = await api.delete(`/accounts/${second}`);
    expect(del.status).toBe(409);
    expectEnvelope(del.body, "last_admin");
    // Restore: admin back, then admin-two may go.
    expect((await api.put(`/accounts/${adminId}`, { role: "admin", scope: "All" })).status).toBe(204);
    expect((await api.delete(`/accounts/${second}`)).status).toBe(204);
  });

  it("keeps at least one admin when two admins are removed at the same time", async () => {
    for (let round = 0; round < 5; round++) {
      const other = await createAccount({ username: `admin-race-${round}`, password: "password-123", role: "admin" });
      const results = await Promise.all([api.delete(`/accounts/${adminId}`), api.delete(`/accounts/${other}`)]);
      const statuses = results.map((r) => r.status).sort();
      const admins = (await allAccounts()).filter((a) => a.role === "admin");
      expect({ round, statuses, admins: admins.length }).toEqual({ round, statuses: [204, 409], admins: 1 });
      adminId = admins[0].id;
    }
  });
});

describe("tokens", () => {
  it("creates a token (201 {id, token}) shown once; the list never shows values or hashes", async () => {
    const res = await api.post("/tokens", { name: "ci-pipeline", role: "operator", scope: { folders: [randomUUID()] } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["id", "token"]);
    const { id, token } = res.body as { id: string; token: string };
    expect(id).toMatch(UUID);
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect((await k.http.get("/api/v1/auth/me").set(bearer(token))).body).toMatchObject({ kind: "token", username: "ci-pipeline", role: "operator" });

    const list = await api.get("/tokens");
    expect(list.status).toBe(200);
    const rows = list.body as TokenView[];
    const row = rows.find((t) => t.id === id);
    expect(row).toMatchObject({ id, name: "ci-pipeline", role: "operator", expires_at: null });
    for (const r of rows) expect(Object.keys(r).sort()).toEqual(TOKEN_KEYS);
    expect(list.text).not.toContain(token);
    expect(list.text).not.toContain(token.slice(5, 25));
    expect(list.text).not.toContain(sha256(token).toString("hex"));
    expect(list.text).not.toContain(sha256(token).toString("base64"));
    expect(list.text).not.toContain(k.adminToken);
    for (const line of k.logs) expect(line).not.toContain(token);
  });

  it("stores only a hash of the token", async () => {
    const { body } = await api.post("/tokens", { name: "hashed", role: "viewer" });
    const rows = await rawQuery<{ row: string; token_hash: Buffer }>(k.databaseUrl!, "SELECT t::text AS row, token_hash FROM core.api_tokens t WHERE id = $1", [
      body.id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].row).not.toContain(body.token);
    expect(rows[0].row).not.toContain(Buffer.from(body.token).toString("hex"));
    expect(Buffer.compare(rows[0].token_hash, sha256(body.token))).toBe(0);
    const all = await rawQuery<{ dump: string }>(k.databaseUrl!, "SELECT string_agg(t::text, '\n') AS dump FROM core.api_tokens t");
    expect(all[0].dump).not.toContain(body.token);
    expect(all[0].dump).not.toContain(k.adminToken);
    // Sessions likewise: only the hash of the bearer token is kept.
    const session = await k.session("viewer");
    const stored = await rawQuery<{ row: string }>(k.databaseUrl!, "SELECT s::text AS row FROM core.sessions s WHERE token_hash = $1", [sha256(session)]);
    expect(stored).toHaveLength(1);
    expect(stored[0].row).not.toContain(session);
  });

  it.each([
    ["an unknown role", { name: "x", role: "root" }, "validation_failed"],
    ["a missing name", { role: "viewer" }, "validation_failed"],
    ["an empty name", { name: "", role: "viewer" }, "validation_failed"],
    ["a 121-character name", { name: "n".repeat(121), role: "viewer" }, "validation_failed"],
    ["an extra field", { name: "x", role: "viewer", token: "chosen-by-me" }, "validation_failed"],
    ["a bad expiry", { name: "x", role: "viewer", expires_at: "tomorrow" }, "validation_failed"],
    ["a bad scope", { name: "x", role: "viewer", scope: { folders: ["lab"] } }, "invalid_scope"],
    ["a scope string other than All", { name: "x", role: "viewer", scope: "all" }, "invalid_scope"],
  ])("refuses %s with 400", async (_what, body, code) => {
    const before = (await allTokens()).length;
    const res = await api.post("/tokens", body);
    expect(res.status).toBe(400);
    expectEnvelope(res.body, code);
    expect((await allTokens()).length).toBe(before);
  });

  it("revokes a token with DELETE (204); it is then 401", async () => {
    const { body } = await api.post("/tokens", { name: "revoke-me", role: "admin" });
    expect((await k.http.get("/api/v1/auth/me").set(bearer(body.token))).status).toBe(200);
    expect((await api.delete(`/tokens/${body.id}`)).status).toBe(204);
    const me = await k.http.get("/api/v1/auth/me").set(bearer(body.token));
    expect(me.status).toBe(401);
    expectEnvelope(me.body, "unauthorized");
    expect((await allTokens()).some((t) => t.id === body.id)).toBe(false);
    const again = await api.delete(`/tokens/${body.id}`);
    expect(again.status).toBe(404);
    expectEnvelope(again.body, "not_found");
    const bad = await api.delete("/tokens/not-a-uuid");
    expect(bad.status).toBe(400);
    expectEnvelope(bad.body, "validation_failed");
  });

  it("bounds the limit to 1..1000 and wants before with before_id", async () => {
    for (const q of ["limit=0", "limit=1001", "before=yesterday", `before_id=${randomUUID()}`, "before=2024-01-01T00:00:00Z&before_id=7"]) {
      const res = await api.get(`/tokens?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      expectEnvelope(res.body, "validation_failed");
    }
  });

  describe("keyset pagination", () => {
    const inserted: string[] = [];

    beforeAll(async () => {
      for (let i = 0; i < 5; i++) expect((await api.post("/tokens", { name: `page-${i}`, role: "viewer" })).status).toBe(201);
      // Rows sharing a timestamp, and rows sharing a millisecond but not a microsecond.
      const stamps = [
        "2021-06-01 12:00:00.123456+00",
        "2021-06-01 12:00:00.123456+00",
        "2021-06-01 12:00:00.123456+00",
        "2021-06-01 12:00:00.123456+00",
        "2021-06-01 12:00:00.123001+00",
        "2021-06-01 12:00:00.123999+00",
        "2021-06-01 12:00:00.123500+00",
        "2021-06-01 12:00:00.124000+00",
        "2021-06-01 12:00:00.122999+00",
      ];
      for (const [i, at] of stamps.entries()) {
        const rows = await rawQuery<{ id: string }>(
          k.databaseUrl!,
          "INSERT INTO core.api_tokens (name, role, scope, token_hash, created_at) VALUES ($1, 'viewer', '\"All\"', $2, $3) RETURNING id",
          [`same-ms-${i}`, sha256(randomBytes(32).toString("hex")), at],
        );
        inserted.push(rows[0].id);
      }
    });

    async function walk(size: number): Promise<string[]> {
      const ids: string[] = [];
      let cursor: TokenView | undefined;
      for (let page = 0; page < 200; page++) {
        const q = cursor ? `&before=${encodeURIComponent(cursor.created_at)}&before_id=${cursor.id}` : "";
        const res = await api.get(`/tokens?limit=${size}${q}`);
        expect(res.status).toBe(200);
        const rows = res.body as TokenView[];
        expect(rows.length).toBeLessThanOrEqual(size);
        ids.push(...rows.map((t) => t.id));
        if (rows.length < size) break;
        cursor = rows[rows.length - 1];
      }
      return ids;
    }

    it("lists newest first by (created_at, id)", async () => {
      const rows = await allTokens();
      for (let i = 1; i < rows.length; i++) {
        const a = rows[i - 1];
        const b = rows[i];
        expect(a.created_at >= b.created_at).toBe(true);
        if (a.created_at === b.created_at) expect(a.id > b.id).toBe(true);
      }
      expect(rows.filter((r) => r.name.startsWith("same-ms-")).map((r) => r.created_at)).toEqual([
        "2021-06-01T12:00:00.124000Z",
        "2021-06-01T12:00:00.123999Z",
        "2021-06-01T12:00:00.123500Z",
        "2021-06-01T12:00:00.123456Z",
        "2021-06-01T12:00:00.123456Z",
        "2021-06-01T12:00:00.123456Z",
        "2021-06-01T12:00:00.123456Z",
        "2021-06-01T12:00:00.123001Z",
        "2021-06-01T12:00:00.122999Z",
      ]);
    });

    it.each([1, 2, 3, 4, 7])("walks every token exactly once in pages of %i", async (size) => {
      const everything = (await allTokens()).map((t) => t.id);
      expect(everything).toEqual(expect.arrayContaining(inserted));
      const walked = await walk(size);
      expect(new Set(walked).size).toBe(walked.length);
      expect(walked).toEqual(everything);
    });

    it("with `before` alone, lists what is strictly older than that instant", async () => {
      const res = await api.get(`/tokens?limit=1000&before=${encodeURIComponent("2021-06-01T12:00:00.123456Z")}`);
      expect(res.status).toBe(200);
      expect((res.body as TokenView[]).map((t) => t.created_at)).toEqual(["2021-06-01T12:00:00.123001Z", "2021-06-01T12:00:00.122999Z"]);
    });
  });
});
