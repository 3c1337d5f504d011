import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { bearer, folderScope, startInventoryKernel, collection } from "./support.js";
import { expectError } from "../../../test/support/assertions.js";

let k: TestKernel;
let db: string;
let operator: string;
let viewer: string;
let scopedOperator: string;
let scopedViewer: string;

const { post, put, get, del, list } = collection(() => k, "/api/v1/profiles");

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await post(body);
  if (res.status !== 201) throw new Error(`profile create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

// Two kernels in one process share Ts.ED's injector: the skeleton kernel starts only after this one stopped.
describe("full mode", () => {
  beforeAll(async () => {
    k = await startInventoryKernel();
    db = k.databaseUrl!;
    const folder = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.node_groups (name) VALUES ('site') RETURNING id"))[0].id;
    operator = await k.token("operator");
    viewer = await k.token("viewer");
    scopedOperator = await k.token("operator", folderScope(folder));
    scopedViewer = await k.token("viewer", folderScope(folder));
  });
  afterAll(async () => {
    await k?.stop();
  });

  describe("POST /api/v1/profiles", () => {
    it("creates a profile with defaults and answers 201 {id}", async () => {
      const res = await post({ name: "Plain" }, operator);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const got = await get(res.body.id);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        id: res.body.id,
        name: "Plain",
        category: null,
        parent_id: null,
        vendor: null,
        poll_interval_secs: 300,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        updated_at: expect.any(String),
      });
    });

    it("stores every field, parent included", async () => {
      const parent = await create({ name: "Cisco base", vendor: "cisco" });
      const id = await create({ name: "Cisco ISR", category: "router", parent_id: parent, vendor: "cisco", poll_interval_secs: 60 });
      expect((await get(id)).body).toEqual(
        expect.objectContaining({ name: "Cisco ISR", category: "router", parent_id: parent, vendor: "cisco", poll_interval_secs: 60 }),
      );
    });

    it.each([
      ["no name", { vendor: "x" }],
      ["empty name", { name: "" }],
      ["blank name", { name: "   " }],
      ["name too long", { name: "n".repeat(201) }],
      ["poll interval below 10", { name: "p1", poll_interval_secs: 9 }],
      ["poll interval above 86400", { name: "p2", poll_interval_secs: 86401 }],
      ["poll interval not an integer", { name: "p3", poll_interval_secs: 30.5 }],
      ["poll interval a string", { name: "p4", poll_interval_secs: "60" }],
      ["parent_id not a uuid", { name: "p5", parent_id: "nope" }],
      ["unknown field", { name: "p6", colour: "red" }],
      ["category too long", { name: "p7", category: "c".repeat(101) }],
    ])("400 validation_failed: %s", async (_label, body) => {
      expectError(await post(body), 400, "validation_failed");
    });

    it("400 without a body", async () => {
      const res = await k.http.post("/api/v1/profiles").set(bearer(k.adminToken));
      expect(res.status).toBe(400);
    });

    it("400 unknown_reference when the parent does not exist", async () => {
      expectError(await post({ name: "Orphan", parent_id: randomUUID() }), 400, "unknown_reference");
    });

    it("409 name_taken, names compared case-insensitively", async () => {
      await create({ name: "Juniper MX" });
      expectError(await post({ name: "JUNIPER mx" }), 409, "name_taken");
    });

    it("401 without a token", async () => {
      expectError(await k.http.post("/api/v1/profiles").send({ name: "x" }), 401, "unauthorized");
    });

    it("403 for a viewer; 403 scope_unsupported for a folder-scoped operator", async () => {
      expectError(await post({ name: "by viewer" }, viewer), 403, "permission_denied");
      expectError(await post({ name: "by scoped" }, scopedOperator), 403, "scope_unsupported");
      expect(await rawQuery(db, "SELECT 1 FROM inventory.profiles WHERE name LIKE 'by %'")).toEqual([]);
    });
  });

  describe("GET /api/v1/profiles", () => {
    it("pages by (lower(name), id) with X-Next-Cursor", async () => {
      await create({ name: "aaa first" });
      await create({ name: "AAB second" });
      await create({ name: "zz last" });
      const expected = (await rawQuery<{ id: string }>(db, "SELECT id FROM inventory.profiles ORDER BY lower(name), id")).map((r) => r.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await list(cursor ? { limit: 2, cursor } : { limit: 2 }, viewer);
        expect(res.status).toBe(200);
        expect(res.body.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.map((p: { id: string }) => p.id));
        cursor = res.headers["x-next-cursor"];
        pages++;
      } while (cursor && pages < 50);
      expect(seen).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / 2));
    });

    it("answers the whole list under the default limit without a cursor header", async () => {
      const res = await list({}, viewer);
      expect(res.status).toBe(200);
      expect(res.headers["x-next-cursor"]).toBeUndefined();
      expect(res.body[0]).toEqual(
        expect.objectContaining({ id: expect.any(String), name: expect.any(String), poll_interval_secs: expect.any(Number), parent_id: null }),
      );
    });

    it("is readable by folder-scoped callers (profiles are global)", async () => {
      const res = await list({}, scopedViewer);
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThan(0);
    });

    it.each([
      ["limit 0", { limit: 0 }, "validation_failed"],
      ["limit 1001", { limit: 1001 }, "validation_failed"],
      ["limit not a number", { limit: "many" }, "validation_failed"],
      ["cursor garbage", { cursor: "not-a-cursor" }, "invalid_cursor"],
      ["cursor with a non-uuid id", { cursor: Buffer.from(JSON.stringify(["a", "b"])).toString("base64url") }, "invalid_cursor"],
    ])("400 for %s", async (_label, query, code) => {
      expectError(await list(query as Record<string, string | number>), 400, code);
    });

    it("401 without a token", async () => {
      expectError(await k.http.get("/api/v1/profiles"), 401, "unauthorized");
    });
  });

  describe("GET /api/v1/profiles/{id}", () => {
    it("answers one profile to a folder-scoped viewer", async () => {
      const id = await create({ name: "Visible to all" });
      const res = await get(id, scopedViewer);
      expect(res.status).toBe(200);
      expect(res.body.name).toBe("Visible to all");
    });

    it("404 for a missing id; 400 for a malformed one; 401 without a token", async () => {
      expectError(await get(randomUUID()), 404, "not_found");
      expectError(await get("not-a-uuid"), 400, "validation_failed");
      expectError(await k.http.get(`/api/v1/profiles/${randomUUID()}`), 401, "unauthorized");
    });
  });

  describe("PUT /api/v1/profiles/{id}", () => {
    it("replaces the whole document: omitted optional fields return to their defaults", async () => {
      const parent = await create({ name: "Put parent" });
      const id = await create({ name: "Put me", category: "switch", vendor: "acme", poll_interval_secs: 30, parent_id: parent });
      const res = await put(id, { name: "Put me renamed", poll_interval_secs: 900 }, operator);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ id, name: "Put me renamed", category: null, vendor: null, parent_id: null, poll_interval_secs: 900 }));
      const back = await put(id, { name: "put me renamed", parent_id: parent });
      expect(back.status).toBe(200);
      expect(back.body).toEqual(expect.objectContaining({ name: "put me renamed", parent_id: parent, poll_interval_secs: 300 }));
      expect((await get(id)).body).toEqual(back.body);
    });

    it("400 profile_cycle for itself as parent or a descendant as parent", async () => {
      const a = await create({ name: "Cycle A" });
      const b = await create({ name: "Cycle B", parent_id: a });
      const c = await create({ name: "Cycle C", parent_id: b });
      expectError(await put(a, { name: "Cycle A", parent_id: a }), 400, "profile_cycle");
      expectError(await put(a, { name: "Cycle A", parent_id: c }), 400, "profile_cycle");
      expectError(await put(a, { name: "Cycle A", parent_id: b }), 400, "profile_cycle");
      expect((await get(a)).body.parent_id).toBeNull();
      // Moving within the chain the other way is fine.
      expect((await put(c, { name: "Cycle C", parent_id: a })).status).toBe(200);
    });

    it("400 validation_failed and unknown_reference", async () => {
      const id = await create({ name: "Put validation" });
      expectError(await put(id, { name: "Put validation", poll_interval_secs: 5 }), 400, "validation_failed");
      expectError(await put(id, { poll_interval_secs: 60 }), 400, "validation_failed");
      expectError(await put(id, { name: "Put validation", id }), 400, "validation_failed");
      expectError(await put(id, { name: "Put validation", parent_id: randomUUID() }), 400, "unknown_reference");
      expectError(await put("nope", { name: "x" }), 400, "validation_failed");
    });

    it("409 name_taken when renaming onto another profile's name", async () => {
      await create({ name: "Taken name" });
      const id = await create({ name: "Free name" });
      expectError(await put(id, { name: "taken NAME" }), 409, "name_taken");
    });

    it("404 for a missing id", async () => {
      expectError(await put(randomUUID(), { name: "ghost" }), 404, "not_found");
    });

    it("401, 403 viewer, 403 scope_unsupported", async () => {
      const id = await create({ name: "Guarded put" });
      expectError(await k.http.put(`/api/v1/profiles/${id}`).send({ name: "x" }), 401, "unauthorized");
      expectError(await put(id, { name: "x" }, viewer), 403, "permission_denied");
      expectError(await put(id, { name: "x" }, scopedOperator), 403, "scope_unsupported");
      expect((await get(id)).body.name).toBe("Guarded put");
    });
  });

  describe("DELETE /api/v1/profiles/{id}", () => {
    it("deletes an unused profile (204), then 404", async () => {
      const id = await create({ name: "Delete me" });
      const res = await del(id, operator);
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      expectError(await get(id), 404, "not_found");
      expectError(await del(id), 404, "not_found");
    });

    it("409 profile_in_use while a node, a classification rule or a child profile references it", async () => {
      const byNode = await create({ name: "Used by node" });
      await rawQuery(db, "INSERT INTO inventory.nodes (name, address, profile_id) VALUES ('n1', '192.0.2.1', $1)", [byNode]);
      expectError(await del(byNode), 409, "profile_in_use");

      const byRule = await create({ name: "Used by rule" });
      await rawQuery(db, "INSERT INTO inventory.classification_rules (profile_id, sysobjectid_prefix) VALUES ($1, '1.3.6.1.4.1.9')", [byRule]);
      const refused = await del(byRule);
      expectError(refused, 409, "profile_in_use");
      expect(refused.body.error.message).toMatch(/1 classification rule/);
      // The rule survived (the table would otherwise cascade).
      expect(await rawQuery(db, "SELECT 1 FROM inventory.classification_rules WHERE profile_id = $1", [byRule])).toHaveLength(1);

      const parent = await create({ name: "Used as parent" });
      await create({ name: "Child of used", parent_id: parent });
      expectError(await del(parent), 409, "profile_in_use");

      for (const id of [byNode, byRule, parent]) expect((await get(id)).status).toBe(200);
    });

    it("400 for a malformed id, 401, 403 viewer, 403 scope_unsupported", async () => {
      const id = await create({ name: "Guarded delete" });
      expectError(await del("nope"), 400, "validation_failed");
      expectError(await k.http.delete(`/api/v1/profiles/${id}`), 401, "unauthorized");
      expectError(await del(id, viewer), 403, "permission_denied");
      expectError(await del(id, scopedOperator), 403, "scope_unsupported");
      expect((await get(id)).status).toBe(200);
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
    const answers = [
      await s.http.get("/api/v1/profiles").set(auth),
      await s.http.get(`/api/v1/profiles/${id}`).set(auth),
      await s.http.post("/api/v1/profiles").set(auth).send({ name: "x" }),
      await s.http.put(`/api/v1/profiles/${id}`).set(auth).send({ name: "x" }),
      await s.http.delete(`/api/v1/profiles/${id}`).set(auth),
    ];
    for (const res of answers) expectError(res, 503, "store_unavailable");
  });
});
