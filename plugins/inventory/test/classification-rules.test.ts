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
let profile: string;
let profile2: string;

const BASE = "/api/v1/classification-rules";
const { post, put, get, del, list } = collection(() => k, BASE);

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await post(body);
  if (res.status !== 201) throw new Error(`rule create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

// Two kernels in one process share Ts.ED's injector: the skeleton kernel starts only after this one stopped.
describe("full mode", () => {
  beforeAll(async () => {
    k = await startInventoryKernel();
    db = k.databaseUrl!;
    const folder = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.node_groups (name) VALUES ('site') RETURNING id"))[0].id;
    profile = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.profiles (name) VALUES ('Cisco IOS') RETURNING id"))[0].id;
    profile2 = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.profiles (name) VALUES ('Linux host') RETURNING id"))[0].id;
    operator = await k.token("operator");
    viewer = await k.token("viewer");
    scopedOperator = await k.token("operator", folderScope(folder));
  });
  afterAll(async () => {
    await k?.stop();
  });

  describe("POST /api/v1/classification-rules", () => {
    it("creates a rule with defaults (enabled, priority 100) and answers 201 {id}", async () => {
      const res = await post({ profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.9" }, operator);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(String) });
      const got = await get(res.body.id);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        id: res.body.id,
        enabled: true,
        priority: 100,
        profile_id: profile,
        sysobjectid_prefix: "1.3.6.1.4.1.9",
        sysdescr_regex: null,
        vendor: null,
        model: null,
      });
    });

    it("stores every field and drops a leading dot from the OID prefix", async () => {
      const id = await create({
        enabled: false,
        priority: -5,
        profile_id: profile2,
        sysobjectid_prefix: ".1.3.6.1.4.1.8072",
        sysdescr_regex: "^Linux \\S+ 5\\.",
        vendor: "net-snmp",
        model: "Linux",
      });
      expect((await get(id)).body).toEqual({
        id,
        enabled: false,
        priority: -5,
        profile_id: profile2,
        sysobjectid_prefix: "1.3.6.1.4.1.8072",
        sysdescr_regex: "^Linux \\S+ 5\\.",
        vendor: "net-snmp",
        model: "Linux",
      });
    });

    it("accepts a regex alone, and the int32 bounds of priority", async () => {
      expect((await post({ profile_id: profile, sysdescr_regex: "Cisco IOS", priority: 2147483647 })).status).toBe(201);
      expect((await post({ profile_id: profile, sysdescr_regex: "x".repeat(500), priority: -2147483648 })).status).toBe(201);
    });

    it("400 validation_failed when neither sysobjectid_prefix nor sysdescr_regex is set", async () => {
      for (const body of [
        { profile_id: profile },
        { profile_id: profile, sysobjectid_prefix: null, sysdescr_regex: null },
        { profile_id: profile, vendor: "x" },
      ]) {
        const res = await post(body);
        expectError(res, 400, "validation_failed");
        expect(res.body.error.message).toMatch(/sysobjectid_prefix.*sysdescr_regex/);
      }
    });

    it.each([
      ["no profile_id", { sysobjectid_prefix: "1.3" }],
      ["profile_id not a uuid", { profile_id: "cisco", sysobjectid_prefix: "1.3" }],
      ["prefix with letters", { sysobjectid_prefix: "1.3.six" }],
      ["prefix with a trailing dot", { sysobjectid_prefix: "1.3.6." }],
      ["prefix with two dots in a row", { sysobjectid_prefix: "1..3" }],
      ["prefix empty", { sysobjectid_prefix: "" }],
      ["prefix a lone dot", { sysobjectid_prefix: "." }],
      ["regex empty", { sysdescr_regex: "" }],
      ["regex over 500 characters", { sysdescr_regex: "x".repeat(501) }],
      ["priority above int32", { sysobjectid_prefix: "1.3", priority: 2147483648 }],
      ["priority below int32", { sysobjectid_prefix: "1.3", priority: -2147483649 }],
      ["priority not an integer", { sysobjectid_prefix: "1.3", priority: 1.5 }],
      ["enabled not a boolean", { sysobjectid_prefix: "1.3", enabled: "yes" }],
      ["vendor too long", { sysobjectid_prefix: "1.3", vendor: "v".repeat(201) }],
      ["unknown field", { sysobjectid_prefix: "1.3", name: "rule" }],
    ])("400 validation_failed: %s", async (label, body) => {
      // Every case but the first names the (existing) profile, so only the field under test is wrong.
      const withProfile = "profile_id" in body || label === "no profile_id" ? body : { profile_id: profile, ...body };
      expectError(await post(withProfile), 400, "validation_failed");
    });

    it.each([["(unclosed"], ["[a-"], ["a{2,1}"], ["*x"], ["(?<n>a)(?<n>b)"]])("400 invalid_regex for %s", async (regex) => {
      expectError(await post({ profile_id: profile, sysdescr_regex: regex }), 400, "invalid_regex");
    });

    it("400 unknown_reference when the profile does not exist", async () => {
      expectError(await post({ profile_id: randomUUID(), sysobjectid_prefix: "1.3.6.1.4.1.9" }), 400, "unknown_reference");
    });

    it("400 without a body", async () => {
      expect((await k.http.post(BASE).set(bearer(k.adminToken))).status).toBe(400);
    });

    it("nothing was written by the refused requests", async () => {
      const rows = await rawQuery(db, "SELECT 1 FROM inventory.classification_rules WHERE sysobjectid_prefix = '1.3' OR sysdescr_regex IN ('(unclosed', '')");
      expect(rows).toEqual([]);
    });

    it("401 without a token; 403 for a viewer; 403 scope_unsupported for a folder-scoped operator", async () => {
      const body = { profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.2636" };
      expectError(await k.http.post(BASE).send(body), 401, "unauthorized");
      expectError(await post(body, viewer), 403, "permission_denied");
      expectError(await post(body, scopedOperator), 403, "scope_unsupported");
      expect(await rawQuery(db, "SELECT 1 FROM inventory.classification_rules WHERE sysobjectid_prefix = '1.3.6.1.4.1.2636'")).toEqual([]);
    });
  });

  describe("GET /api/v1/classification-rules", () => {
    it("answers the rules in evaluation order: priority ascending, then id", async () => {
      await create({ profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.11", priority: 7 });
      await create({ profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.12", priority: 7 });
      await create({ profile_id: profile2, sysdescr_regex: "FreeBSD", priority: 3, enabled: false });
      const res = await list({}, operator);
      expect(res.status).toBe(200);
      expect(res.headers["x-next-cursor"]).toBeUndefined();
      const expected = await rawQuery<{ id: string; priority: number }>(db, "SELECT id, priority FROM inventory.classification_rules ORDER BY priority, id");
      expect(res.body.map((r: { id: string }) => r.id)).toEqual(expected.map((r) => r.id));
      const priorities = res.body.map((r: { priority: number }) => r.priority);
      expect(priorities).toEqual([...priorities].sort((a: number, b: number) => a - b));
      // Disabled rules are listed too (the classifier skips them).
      expect(res.body.some((r: { enabled: boolean }) => !r.enabled)).toBe(true);
      expect(Object.keys(res.body[0]).sort()).toEqual(["enabled", "id", "model", "priority", "profile_id", "sysdescr_regex", "sysobjectid_prefix", "vendor"]);
    });

    it("pages in the same order with X-Next-Cursor", async () => {
      const expected = (await rawQuery<{ id: string }>(db, "SELECT id FROM inventory.classification_rules ORDER BY priority, id")).map((r) => r.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await list(cursor ? { limit: 2, cursor } : { limit: 2 });
        expect(res.status).toBe(200);
        seen.push(...res.body.map((r: { id: string }) => r.id));
        cursor = res.headers["x-next-cursor"];
        pages++;
      } while (cursor && pages < 50);
      expect(seen).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / 2));
    });

    it("answers every rule in evaluation order, beyond 1000, when no limit is asked (the spec's list has no cap)", async () => {
      // 1205 rules in one INSERT, priorities repeating out of order so that ties fall back to the id.
      await rawQuery(
        db,
        `INSERT INTO inventory.classification_rules (priority, profile_id, sysobjectid_prefix, vendor)
         SELECT (i * 7919) % 97 - 48, $1, '1.3.6.1.4.1.' || i, 'bulk' FROM generate_series(1, 1205) AS i`,
        [profile],
      );
      try {
        const expected = (await rawQuery<{ id: string }>(db, "SELECT id FROM inventory.classification_rules ORDER BY priority, id")).map((r) => r.id);
        expect(expected.length).toBeGreaterThanOrEqual(1205);
        const res = await list({}, operator);
        expect(res.status).toBe(200);
        expect(res.headers["x-next-cursor"]).toBeUndefined();
        expect(res.body.map((r: { id: string }) => r.id)).toEqual(expected);
        // Asked for pages, the walk gives the same order.
        const first = await list({ limit: 1000 }, operator);
        expect(first.body).toHaveLength(1000);
        const rest = await list({ cursor: first.headers["x-next-cursor"] }, operator);
        expect(rest.headers["x-next-cursor"]).toBeUndefined();
        expect([...first.body, ...rest.body].map((r: { id: string }) => r.id)).toEqual(expected);
      } finally {
        await rawQuery(db, "DELETE FROM inventory.classification_rules WHERE vendor = 'bulk'");
      }
    });

    it("is readable by a folder-scoped operator (rules are global, writes are not)", async () => {
      expect((await list({}, scopedOperator)).status).toBe(200);
    });

    it.each([
      ["limit 0", { limit: 0 }, "validation_failed"],
      ["limit 1001", { limit: 1001 }, "validation_failed"],
      ["a garbage cursor", { cursor: "garbage" }, "invalid_cursor"],
      ["a cursor with a non-numeric priority", { cursor: Buffer.from(JSON.stringify(["high", randomUUID()])).toString("base64url") }, "invalid_cursor"],
      ["a cursor with an out-of-range priority", { cursor: Buffer.from(JSON.stringify(["9999999999", randomUUID()])).toString("base64url") }, "invalid_cursor"],
      ["a cursor with a non-uuid id", { cursor: Buffer.from(JSON.stringify(["1", "x"])).toString("base64url") }, "invalid_cursor"],
    ])("400 for %s", async (_label, query, code) => {
      expectError(await list(query as Record<string, string | number>), 400, code);
    });

    it("401 without a token; 403 for a viewer (ManageConfig)", async () => {
      expectError(await k.http.get(BASE), 401, "unauthorized");
      expectError(await list({}, viewer), 403, "permission_denied");
    });
  });

  describe("GET /api/v1/classification-rules/{id}", () => {
    it("200; 404 missing; 400 malformed; 401; 403 viewer", async () => {
      const id = await create({ profile_id: profile, sysdescr_regex: "IOS XE" });
      expect((await get(id, scopedOperator)).status).toBe(200);
      expectError(await get(randomUUID()), 404, "not_found");
      expectError(await get("nope"), 400, "validation_failed");
      expectError(await k.http.get(`${BASE}/${id}`), 401, "unauthorized");
      expectError(await get(id, viewer), 403, "permission_denied");
    });
  });

  describe("PUT /api/v1/classification-rules/{id}", () => {
    it("replaces the whole document: omitted fields return to their defaults", async () => {
      const id = await create({ profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.9.1", priority: 5, enabled: false, vendor: "cisco", model: "ISR" });
      const res = await put(id, { profile_id: profile2, sysdescr_regex: "^Linux" }, operator);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id,
        enabled: true,
        priority: 100,
        profile_id: profile2,
        sysobjectid_prefix: null,
        sysdescr_regex: "^Linux",
        vendor: null,
        model: null,
      });
      expect((await get(id)).body).toEqual(res.body);
      const again = await put(id, { profile_id: profile, sysobjectid_prefix: ".1.3.6.1.4.1.9.12", priority: 1 });
      expect(again.body).toEqual(expect.objectContaining({ sysobjectid_prefix: "1.3.6.1.4.1.9.12", priority: 1, sysdescr_regex: null }));
    });

    it("400 validation_failed, invalid_regex, unknown_reference; the rule is unchanged", async () => {
      const id = await create({ profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.9.2" });
      const before = (await get(id)).body;
      expectError(await put(id, { profile_id: profile }), 400, "validation_failed");
      expectError(await put(id, { profile_id: profile, sysobjectid_prefix: "iso.3.6" }), 400, "validation_failed");
      expectError(await put(id, { sysobjectid_prefix: "1.3" }), 400, "validation_failed");
      expectError(await put(id, { profile_id: profile, sysdescr_regex: "(" }), 400, "invalid_regex");
      expectError(await put(id, { profile_id: randomUUID(), sysobjectid_prefix: "1.3" }), 400, "unknown_reference");
      expectError(await put("nope", { profile_id: profile, sysobjectid_prefix: "1.3" }), 400, "validation_failed");
      expect((await get(id)).body).toEqual(before);
    });

    it("404 for a missing id", async () => {
      expectError(await put(randomUUID(), { profile_id: profile, sysobjectid_prefix: "1.3" }), 404, "not_found");
    });

    it("401, 403 viewer, 403 scope_unsupported", async () => {
      const id = await create({ profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.9.3" });
      const body = { profile_id: profile2, sysobjectid_prefix: "1.3.6.1.4.1.9.4" };
      expectError(await k.http.put(`${BASE}/${id}`).send(body), 401, "unauthorized");
      expectError(await put(id, body, viewer), 403, "permission_denied");
      expectError(await put(id, body, scopedOperator), 403, "scope_unsupported");
      expect((await get(id)).body.sysobjectid_prefix).toBe("1.3.6.1.4.1.9.3");
    });
  });

  describe("DELETE /api/v1/classification-rules/{id}", () => {
    it("deletes (204), then 404", async () => {
      const id = await create({ profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.9.5" });
      const res = await del(id, operator);
      expect(res.status).toBe(204);
      expectError(await get(id), 404, "not_found");
      expectError(await del(id), 404, "not_found");
    });

    it("400 malformed id, 401, 403 viewer, 403 scope_unsupported", async () => {
      const id = await create({ profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.9.6" });
      expectError(await del("nope"), 400, "validation_failed");
      expectError(await k.http.delete(`${BASE}/${id}`), 401, "unauthorized");
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

  it("answers 503 to the list (as the spec says), the other reads and the writes", async () => {
    const auth = bearer(s.adminToken);
    const id = randomUUID();
    const body = { profile_id: randomUUID(), sysobjectid_prefix: "1.3" };
    const answers = [
      await s.http.get(BASE).set(auth),
      await s.http.get(`${BASE}/${id}`).set(auth),
      await s.http.post(BASE).set(auth).send(body),
      await s.http.put(`${BASE}/${id}`).set(auth).send(body),
      await s.http.delete(`${BASE}/${id}`).set(auth),
    ];
    for (const res of answers) expectError(res, 503, "store_unavailable");
  });
});
