import { randomUUID } from "node:crypto";
import pg from "pg";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import type { FolderEvent } from "../contract.js";
import { normaliseRanges } from "../services/FolderService.js";
import { bearer, folderScope, startInventoryKernel } from "./support.js";

let k: TestKernel;
let viewer: string;
let operator: string;

// Two kernels in one process share Ts.ED's injector: the skeleton kernel starts only after this one stopped.
describe("full mode", () => {
  beforeAll(async () => {
    k = await startInventoryKernel();
    viewer = await k.token("viewer");
    operator = await k.token("operator");
  });
  afterAll(() => k?.stop());

  const admin = () => bearer(k.adminToken);

  /** A folder written with raw SQL, so these tests need no other route. */
  async function folder(
    name: string,
    parent: string | null = null,
    extra: { pool?: string; tags?: string[]; tags_excluded?: string[]; sort_order?: number } = {},
  ) {
    const rows = await rawQuery<{ id: string }>(
      k.databaseUrl!,
      `INSERT INTO inventory.node_groups (name, parent_id, pool, tags, tags_excluded, sort_order) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [name, parent, extra.pool ?? null, extra.tags ?? [], extra.tags_excluded ?? [], extra.sort_order ?? 0],
    );
    return rows[0].id;
  }

  async function node(groupId: string | null, address = `10.200.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`) {
    const rows = await rawQuery<{ id: string }>(k.databaseUrl!, "INSERT INTO inventory.nodes (name, address, group_id) VALUES ($1, $2, $3) RETURNING id", [
      `n-${randomUUID().slice(0, 8)}`,
      address,
      groupId,
    ]);
    return rows[0].id;
  }

  const post = (body: unknown, token = k.adminToken) =>
    k.http
      .post("/api/v1/node-groups")
      .set(bearer(token))
      .send(body as object);
  const get = (id: string, token = k.adminToken) => k.http.get(`/api/v1/node-groups/${id}`).set(bearer(token));
  const put = (id: string, body: unknown, token = k.adminToken) =>
    k.http
      .put(`/api/v1/node-groups/${id}`)
      .set(bearer(token))
      .send(body as object);
  const putPool = (id: string, body: unknown, token = k.adminToken) =>
    k.http
      .put(`/api/v1/node-groups/${id}/pool`)
      .set(bearer(token))
      .send(body as object);

  function collect(event: "inventory.folder.created" | "inventory.folder.updated" | "inventory.folder.deleted"): FolderEvent[] {
    const seen: FolderEvent[] = [];
    k.kernel.context("inventory")!.bus.on(event, (e) => {
      seen.push(e);
    });
    return seen;
  }

  describe("POST /node-groups", () => {
    it("creates a folder with every field and answers 201 {id}; GET shows it", async () => {
      const parent = await folder(`parent-${randomUUID()}`);
      const res = await post({
        name: "  Rack 7  ",
        parent_id: parent,
        group_type: "site",
        pool: "edge_1-a",
        latitude: 48.85,
        longitude: -2.35,
        sort_order: 2.5,
        tags: ["prod", " prod ", "dc"],
        tags_excluded: ["lab"],
        ip_ranges: ["10.1.0.0/16", "2001:db8::/32"],
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(["id"]);
      const got = await get(res.body.id);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        id: res.body.id,
        name: "Rack 7",
        parent_id: parent,
        group_type: "site",
        pool: "edge_1-a",
        effective_pool: "edge_1-a",
        latitude: 48.85,
        longitude: -2.35,
        sort_order: 2.5,
        tags: ["prod", "dc"],
        tags_excluded: ["lab"],
        effective_tags: ["dc", "prod"],
        ip_ranges: ["10.1.0.0/16", "2001:db8::/32"],
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
    });

    it("fills defaults: root, group_type folder, no pool (effective default), no tags or ranges, sort_order 0", async () => {
      const res = await post({ name: "defaults" });
      expect(res.status).toBe(201);
      const got = await get(res.body.id);
      expect(got.body).toMatchObject({
        parent_id: null,
        group_type: "folder",
        pool: null,
        effective_pool: "default",
        latitude: null,
        longitude: null,
        sort_order: 0,
        tags: [],
        tags_excluded: [],
        effective_tags: [],
        ip_ranges: [],
      });
    });

    it("treats an empty pool as none", async () => {
      const res = await post({ name: "empty pool", pool: "" });
      expect(res.status).toBe(201);
      expect((await get(res.body.id)).body.pool).toBeNull();
    });

    it.each([
      ["no name", {}],
      ["blank name", { name: "   " }],
      ["name too long", { name: "x".repeat(201) }],
      ["unknown field", { name: "x", colour: "red" }],
      ["latitude above 90", { name: "x", latitude: 90.5 }],
      ["latitude below -90", { name: "x", latitude: -91 }],
      ["longitude above 180", { name: "x", longitude: 180.01 }],
      ["longitude below -180", { name: "x", longitude: -181 }],
      ["parent_id not a uuid", { name: "x", parent_id: "folder-1" }],
      ["empty group_type", { name: "x", group_type: "" }],
      ["empty tag", { name: "x", tags: ["ok", " "] }],
      ["too many tags", { name: "x", tags: Array.from({ length: 65 }, (_, i) => `t${i}`) }],
      ["tag too long", { name: "x", tags_excluded: ["y".repeat(65)] }],
      ["sort_order not a number", { name: "x", sort_order: "first" }],
      ["ip_ranges not an array", { name: "x", ip_ranges: "10.0.0.0/8" }],
    ])("refuses %s with 400 validation_failed", async (_label, body) => {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    });

    it.each([
      "banana",
      "10.0.0.0/33",
      "10.0.0/8",
      "300.1.1.1/8",
      "010.0.0.1/8",
      "10.0.0.0/",
      "10.0.0.0/-1",
      "::/129",
      "fe80::1%eth0/64",
      "2001:db8::g/32",
      "1::2::3/64",
      "",
    ])("refuses the ip range %j with 400 validation_failed", async (range) => {
      const res = await post({ name: "ranges", ip_ranges: ["10.9.0.0/16", range] });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(res.body.error.message).toContain("ip_ranges[1]");
    });

    it("stores IPv4 and IPv6 ranges as cidr, clearing host bits, single hosts as /32 and /128, without repeats", async () => {
      const res = await post({
        name: "ranges",
        ip_ranges: [
          "10.1.2.3/24",
          "192.168.7.9",
          "2001:db8:abcd:12::5/64",
          "2001:db8::1",
          "::ffff:10.0.0.0/104",
          "0.0.0.0/0",
          "::/0",
          "10.1.2.0/24",
          " 172.16.0.0/12 ",
        ],
      });
      expect(res.status).toBe(201);
      const got = await get(res.body.id);
      expect(got.body.ip_ranges).toEqual([
        "10.1.2.0/24",
        "192.168.7.9/32",
        "2001:db8:abcd:12::/64",
        "2001:db8::1/128",
        "::ffff:10.0.0.0/104",
        "0.0.0.0/0",
        "::/0",
        "172.16.0.0/12",
      ]);
      const [row] = await rawQuery<{ t: string; v4: boolean; v6: boolean; out: boolean }>(
        k.databaseUrl!,
        `SELECT pg_typeof(ip_ranges)::text AS t,
              '10.1.2.200'::inet <<= ip_ranges[1] AS v4,
              '2001:db8:abcd:12::ff'::inet <<= ip_ranges[3] AS v6,
              '10.1.3.1'::inet <<= ip_ranges[1] AS out
         FROM inventory.node_groups WHERE id = $1`,
        [res.body.id],
      );
      expect(row).toEqual({ t: "cidr[]", v4: true, v6: true, out: false });
    });

    it("normalises ranges with the kernel's prefix parser (unit)", () => {
      expect(normaliseRanges(["10.255.255.255/8", "2001:db8::ffff/120", "::1", "1.2.3.4/32", "10.0.0.0/8", "::ffff:10.0.0.0/104"])).toEqual([
        "10.0.0.0/8",
        "2001:db8::ff00/120",
        "::1/128",
        "1.2.3.4/32",
        "::ffff:a00:0/104",
      ]);
      expect(normaliseRanges(undefined)).toEqual([]);
      expect(() => normaliseRanges(["10.0.0.0/8", "1.2.3.4/24/8"])).toThrow(
        expect.objectContaining({ code: "validation_failed", message: expect.stringContaining("ip_ranges[1]") }),
      );
      expect(() => normaliseRanges(["fe80::1%1"])).toThrow(expect.objectContaining({ code: "validation_failed" }));
    });

    it.each([
      ["64 characters", "p".repeat(64)],
      ["a space", "edge pool"],
      ["a dot", "edge.pool"],
      ["a slash", "edge/1"],
      ["non-ASCII", "pöol"],
    ])("refuses a pool with %s with 400 invalid_pool", async (_label, pool) => {
      const res = await post({ name: "p", pool });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_pool");
    });

    it("accepts a 63-character pool", async () => {
      const res = await post({ name: "p63", pool: "p".repeat(63) });
      expect(res.status).toBe(201);
    });

    it("answers 400 unknown_reference for a parent that does not exist", async () => {
      const res = await post({ name: "orphan", parent_id: randomUUID() });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("unknown_reference");
    });

    it("emits inventory.folder.created with the folder path", async () => {
      const seen = collect("inventory.folder.created");
      const parent = await folder(`ev-${randomUUID()}`);
      const res = await post({ name: "evented", parent_id: parent });
      expect(res.status).toBe(201);
      expect(seen).toContainEqual({ id: res.body.id, name: "evented", parent_id: parent, folder_path: [parent, res.body.id] });
    });

    it("needs ManageConfig (403 for a viewer, 201 for an operator) and a token (401)", async () => {
      expect((await post({ name: "v" }, viewer)).status).toBe(403);
      expect((await post({ name: "o" }, operator)).status).toBe(201);
      expect((await k.http.post("/api/v1/node-groups").send({ name: "anon" })).status).toBe(401);
    });

    it("answers 400 for a missing body", async () => {
      const res = await k.http.post("/api/v1/node-groups").set(admin());
      expect(res.status).toBe(400);
    });
  });

  describe("GET /node-groups/{id}", () => {
    it("shows the effective pool and tags inherited down the tree", async () => {
      const root = await folder("inherit-root", null, { pool: "p-root", tags: ["a", "b"] });
      const child = await folder("inherit-child", root, { tags: ["c"], tags_excluded: ["b"] });
      const grandchild = await folder("inherit-grandchild", child, { pool: "p-own" });
      const bare = await folder("no-pool-anywhere");
      expect((await get(child)).body).toMatchObject({ pool: null, effective_pool: "p-root", effective_tags: ["a", "c"] });
      expect((await get(grandchild)).body).toMatchObject({ pool: "p-own", effective_pool: "p-own", effective_tags: ["a", "c"] });
      expect((await get(root)).body).toMatchObject({ effective_pool: "p-root", effective_tags: ["a", "b"] });
      expect((await get(bare)).body).toMatchObject({ pool: null, effective_pool: "default" });
    });

    it("answers 404 for a missing id, 400 for a malformed one, 403 never (viewer reads), 401 without token", async () => {
      expect((await get(randomUUID())).status).toBe(404);
      const bad = await get("not-a-uuid");
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe("validation_failed");
      const id = await folder("readable");
      expect((await get(id, viewer)).status).toBe(200);
      expect((await k.http.get(`/api/v1/node-groups/${id}`)).status).toBe(401);
    });
  });

  describe("GET /node-groups", () => {
    let parent: string;
    beforeAll(async () => {
      parent = await folder(`list-parent-${randomUUID()}`);
      for (const name of ["delta", "Alpha", "charlie", "bravo", "Echo 100%"]) await folder(name, parent);
      const sub = await folder("zulu", parent);
      await folder("nested-below-zulu", sub);
    });

    it("lists the direct sub-folders of parent_id, ordered by name case-insensitively", async () => {
      const res = await k.http.get(`/api/v1/node-groups?parent_id=${parent}`).set(bearer(viewer));
      expect(res.status).toBe(200);
      expect(res.body.map((f: { name: string }) => f.name)).toEqual(["Alpha", "bravo", "charlie", "delta", "Echo 100%", "zulu"]);
      expect(res.headers["x-next-cursor"]).toBeUndefined();
      expect(res.body[0]).toEqual(
        expect.objectContaining({ parent_id: parent, effective_pool: "default", ip_ranges: [], effective_tags: [], created_at: expect.any(String) }),
      );
    });

    it("pages with limit and the X-Next-Cursor keyset", async () => {
      const names: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await k.http
          .get(`/api/v1/node-groups`)
          .query({ parent_id: parent, limit: 4, ...(cursor ? { cursor } : {}) })
          .set(admin());
        expect(res.status).toBe(200);
        expect(res.body.length).toBeLessThanOrEqual(4);
        names.push(...res.body.map((f: { name: string }) => f.name));
        cursor = res.headers["x-next-cursor"];
        pages++;
      } while (cursor);
      expect(pages).toBe(2);
      expect(names).toEqual(["Alpha", "bravo", "charlie", "delta", "Echo 100%", "zulu"]);
    });

    it("filters by a name substring, case-insensitively and literally", async () => {
      const res = await k.http.get("/api/v1/node-groups").query({ parent_id: parent, q: "ALP" }).set(admin());
      expect(res.body.map((f: { name: string }) => f.name)).toEqual(["Alpha"]);
      const pct = await k.http.get("/api/v1/node-groups").query({ parent_id: parent, q: "0%" }).set(admin());
      expect(pct.body.map((f: { name: string }) => f.name)).toEqual(["Echo 100%"]);
      const nested = await k.http.get("/api/v1/node-groups").query({ q: "nested-below-zulu" }).set(admin());
      expect(nested.body.map((f: { name: string }) => f.name)).toEqual(["nested-below-zulu"]);
    });

    it.each([
      ["limit 0", { limit: 0 }],
      ["limit 1001", { limit: 1001 }],
      ["limit not a number", { limit: "many" }],
      ["parent_id not a uuid", { parent_id: "x" }],
    ])("refuses %s with 400 validation_failed", async (_label, query) => {
      const res = await k.http.get("/api/v1/node-groups").query(query).set(admin());
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    });

    it("refuses a cursor it did not issue with 400 invalid_cursor", async () => {
      for (const cursor of ["garbage", Buffer.from(JSON.stringify(["a", "not-a-uuid"])).toString("base64url"), Buffer.from("[1]").toString("base64url")]) {
        const res = await k.http.get("/api/v1/node-groups").query({ cursor }).set(admin());
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("invalid_cursor");
      }
    });

    it("answers 404 for a parent_id that does not exist, 401 without a token", async () => {
      expect((await k.http.get("/api/v1/node-groups").query({ parent_id: randomUUID() }).set(admin())).status).toBe(404);
      expect((await k.http.get("/api/v1/node-groups")).status).toBe(401);
    });
  });

  describe("GET /node-groups/tree", () => {
    it("nests the tree by sort_order then name, with direct and total node counts; pinned is false for API tokens", async () => {
      const top = await folder(`tree-top-${randomUUID()}`, null, { sort_order: -1e9 });
      const b = await folder("b-second", top, { sort_order: 1 });
      const a = await folder("a-third", top, { sort_order: 1 });
      const z = await folder("z-first", top, { sort_order: 0, pool: "zp" });
      const deep = await folder("deep", a);
      await node(top);
      await node(a);
      await node(deep);
      await node(deep);

      const res = await k.http.get("/api/v1/node-groups/tree").set(bearer(viewer));
      expect(res.status).toBe(200);
      const mine = res.body.find((f: { id: string }) => f.id === top);
      expect(mine).toEqual({
        id: top,
        name: expect.stringMatching(/^tree-top-/),
        parent_id: null,
        group_type: "folder",
        pool: null,
        effective_pool: "default",
        sort_order: -1e9,
        node_count: 1,
        total_node_count: 4,
        pinned: false,
        children: [
          {
            id: z,
            name: "z-first",
            parent_id: top,
            group_type: "folder",
            pool: "zp",
            effective_pool: "zp",
            sort_order: 0,
            node_count: 0,
            total_node_count: 0,
            pinned: false,
            children: [],
          },
          {
            id: a,
            name: "a-third",
            parent_id: top,
            group_type: "folder",
            pool: null,
            effective_pool: "default",
            sort_order: 1,
            node_count: 1,
            total_node_count: 3,
            pinned: false,
            children: [expect.objectContaining({ id: deep, node_count: 2, total_node_count: 2, children: [] })],
          },
          expect.objectContaining({ id: b, name: "b-second", node_count: 0, total_node_count: 0 }),
        ],
      });
      // Roots only at the top level; a root with the lowest sort_order comes first.
      expect(res.body[0].id).toBe(top);
      expect(res.body.every((f: { parent_id: string | null }) => f.parent_id === null)).toBe(true);
    });

    it("answers 401 without a token", async () => {
      expect((await k.http.get("/api/v1/node-groups/tree")).status).toBe(401);
    });
  });

  describe("PUT /node-groups/{id}", () => {
    it("replaces the whole document: omitted fields return to their defaults; answers 200 with the folder", async () => {
      const seen = collect("inventory.folder.updated");
      const parent = await folder(`put-parent-${randomUUID()}`, null, { pool: "inherited" });
      const created = await post({ name: "full", pool: "own", tags: ["x"], ip_ranges: ["10.0.0.0/8"], latitude: 1, sort_order: 3, group_type: "site" });
      const id = created.body.id;
      const res = await put(id, { name: "renamed", parent_id: parent, ip_ranges: ["fd00::/8"] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id,
        name: "renamed",
        parent_id: parent,
        group_type: "folder",
        pool: null,
        effective_pool: "inherited",
        latitude: null,
        sort_order: 0,
        tags: [],
        ip_ranges: ["fd00::/8"],
      });
      expect((await get(id)).body).toMatchObject({ name: "renamed", parent_id: parent });
      expect(seen).toContainEqual({ id, name: "renamed", parent_id: parent, folder_path: [parent, id] });
    });

    it("moves a folder back to the root with parent_id null", async () => {
      const parent = await folder("mover-parent");
      const child = await folder("mover", parent);
      const res = await put(child, { name: "mover", parent_id: null });
      expect(res.status).toBe(200);
      expect(res.body.parent_id).toBeNull();
    });

    describe("refuses a cycle with 400 folder_cycle", () => {
      let top: string, child: string, grandchild: string;
      beforeAll(async () => {
        top = await folder("cycle-top");
        child = await folder("cycle-child", top);
        grandchild = await folder("cycle-grandchild", child);
      });

      it.each([
        ["itself", () => top],
        ["its child", () => child],
        ["its grandchild", () => grandchild],
      ])("moving a folder under %s", async (_label, target) => {
        const res = await put(top, { name: "cycle-top", parent_id: target() });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("folder_cycle");
        expect((await get(top)).body.parent_id).toBeNull();
      });

      it("but allows a move sideways", async () => {
        const other = await folder("cycle-other");
        expect((await put(grandchild, { name: "cycle-grandchild", parent_id: other })).status).toBe(200);
      });
    });

    it("validates like create (400 validation_failed, invalid_pool, unknown_reference parent) and answers 404 for a missing folder", async () => {
      const id = await folder("put-validate");
      expect((await put(id, { name: "x", ip_ranges: ["10.0.0.300/8"] })).body.error.code).toBe("validation_failed");
      expect((await put(id, { name: "x", pool: "no way" })).body.error.code).toBe("invalid_pool");
      expect((await put(id, { parent_id: null })).body.error.code).toBe("validation_failed");
      expect((await put(randomUUID(), { name: "x" })).status).toBe(404);
      expect((await put(id, { name: "x", parent_id: randomUUID() })).body.error.code).toBe("unknown_reference");
      expect((await put("nope", { name: "x" })).status).toBe(400);
    });

    it("needs ManageConfig (403) and a token (401)", async () => {
      const id = await folder("put-perm");
      expect((await put(id, { name: "x" }, viewer)).status).toBe(403);
      expect((await k.http.put(`/api/v1/node-groups/${id}`).send({ name: "x" })).status).toBe(401);
      expect((await put(id, { name: "x" }, operator)).status).toBe(200);
    });
  });

  describe("PUT /node-groups/{id}/pool", () => {
    let root: string, child: string;
    beforeAll(async () => {
      root = await folder("pool-root", null, { pool: "upper" });
      child = await folder("pool-child", root);
    });

    it("sets the folder's pool (200 {ok: true}); sub-folders without one inherit it", async () => {
      const seen = collect("inventory.folder.updated");
      const res = await putPool(root, { pool: "site-A_1" });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true });
      expect((await get(root)).body).toMatchObject({ pool: "site-A_1", effective_pool: "site-A_1" });
      expect((await get(child)).body).toMatchObject({ pool: null, effective_pool: "site-A_1" });
      expect(seen).toContainEqual({ id: root, name: "pool-root", parent_id: null, folder_path: [root] });
    });

    it.each([
      ["null", { pool: null }],
      ["absent", {}],
      ["an empty string", { pool: "" }],
    ])("clears it when pool is %s", async (_label, body) => {
      await putPool(child, { pool: "own" });
      expect((await get(child)).body.effective_pool).toBe("own");
      const res = await putPool(child, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true });
      const got = (await get(child)).body;
      expect(got.pool).toBeNull();
      expect(got.effective_pool).toBe((await get(root)).body.pool);
    });

    it("falls back to default when nothing above has a pool", async () => {
      const lone = await folder("pool-lone", null, { pool: "x" });
      await putPool(lone, { pool: null });
      expect((await get(lone)).body.effective_pool).toBe("default");
    });

    it("accepts 63 characters and refuses 64 with 400 invalid_pool", async () => {
      expect((await putPool(child, { pool: "a".repeat(63) })).status).toBe(200);
      const res = await putPool(child, { pool: "a".repeat(64) });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_pool");
      expect((await get(child)).body.pool).toBe("a".repeat(63));
    });

    it.each(["a b", "a.b", "a/b", "a:b", "ü", "pool!"])("refuses %j with 400 invalid_pool", async (pool) => {
      const res = await putPool(child, { pool });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_pool");
    });

    it("refuses a pool that is not a string or null, and unknown fields, with 400 validation_failed", async () => {
      expect((await putPool(child, { pool: 5 })).body.error.code).toBe("validation_failed");
      expect((await putPool(child, { pool: "a", extra: 1 })).body.error.code).toBe("validation_failed");
    });

    it("answers 404 for no such group, 400 for a malformed id, 403 without ManageConfig, 401 without a token", async () => {
      const missing = await putPool(randomUUID(), { pool: "x" });
      expect(missing.status).toBe(404);
      expect((await putPool("12", { pool: "x" })).status).toBe(400);
      expect((await putPool(child, { pool: "x" }, viewer)).status).toBe(403);
      expect((await k.http.put(`/api/v1/node-groups/${child}/pool`).send({ pool: "x" })).status).toBe(401);
    });
  });

  describe("DELETE /node-groups/{id}", () => {
    it("deletes an empty folder (204), emits inventory.folder.deleted, and takes its pins along", async () => {
      const seen = collect("inventory.folder.deleted");
      const parent = await folder("del-parent");
      const id = await folder("del-me", parent);
      const session = await k.session("viewer");
      expect((await k.http.put(`/api/v1/pins/groups/${id}`).set(bearer(session))).status).toBe(200);
      const res = await k.http.delete(`/api/v1/node-groups/${id}`).set(admin());
      expect(res.status).toBe(204);
      expect((await get(id)).status).toBe(404);
      expect(seen).toContainEqual({ id, name: "del-me", parent_id: parent, folder_path: [parent, id] });
      expect(await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.pins WHERE group_id = $1", [id])).toEqual([]);
    });

    it("refuses a folder holding a sub-folder or a node with 409 folder_not_empty", async () => {
      const withChild = await folder("del-with-child");
      await folder("del-the-child", withChild);
      const withNode = await folder("del-with-node");
      await node(withNode);
      for (const id of [withChild, withNode]) {
        const res = await k.http.delete(`/api/v1/node-groups/${id}`).set(admin());
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe("folder_not_empty");
        expect((await get(id)).status).toBe(200);
      }
    });

    it("answers 404 for a missing folder, 400 for a malformed id, 403 without ManageConfig, 401 without a token", async () => {
      const id = await folder("del-perm");
      expect((await k.http.delete(`/api/v1/node-groups/${randomUUID()}`).set(admin())).status).toBe(404);
      expect((await k.http.delete("/api/v1/node-groups/xyz").set(admin())).status).toBe(400);
      expect((await k.http.delete(`/api/v1/node-groups/${id}`).set(bearer(viewer))).status).toBe(403);
      expect((await k.http.delete(`/api/v1/node-groups/${id}`)).status).toBe(401);
      expect((await k.http.delete(`/api/v1/node-groups/${id}`).set(bearer(operator))).status).toBe(204);
    });
  });

  describe("folder scope", () => {
    let a: string, aChild: string, aGrandchild: string, b: string, bChild: string;
    let scopedReader: string, scopedWriter: string;

    beforeAll(async () => {
      const outer = await folder("scope-outer");
      a = await folder("scope-A", outer);
      aChild = await folder("scope-A-child", a);
      aGrandchild = await folder("scope-A-grandchild", aChild);
      b = await folder("scope-B");
      bChild = await folder("scope-B-child", b);
      await node(aChild);
      scopedReader = await k.token("viewer", folderScope(a));
      scopedWriter = await k.token("operator", folderScope(a));
    });

    it("lists only A's subtree", async () => {
      const res = await k.http.get("/api/v1/node-groups").query({ limit: 1000 }).set(bearer(scopedReader));
      expect(res.status).toBe(200);
      expect(res.body.map((f: { id: string }) => f.id).sort()).toEqual([a, aChild, aGrandchild].sort());
      expect((await k.http.get("/api/v1/node-groups").query({ parent_id: a }).set(bearer(scopedReader))).body.map((f: { id: string }) => f.id)).toEqual([
        aChild,
      ]);
      expect((await k.http.get("/api/v1/node-groups").query({ parent_id: b }).set(bearer(scopedReader))).status).toBe(404);
    });

    it("shows A as the tree's only root, with everything beneath", async () => {
      const res = await k.http.get("/api/v1/node-groups/tree").set(bearer(scopedReader));
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
      expect(res.body[0]).toMatchObject({ id: a, total_node_count: 1, children: [{ id: aChild, node_count: 1, children: [{ id: aGrandchild }] }] });
    });

    it("reads A's folders but answers 404 for B's, as if they did not exist", async () => {
      expect((await get(aGrandchild, scopedReader)).status).toBe(200);
      for (const id of [b, bChild]) {
        const res = await get(id, scopedReader);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe("not_found");
      }
    });

    it("cannot update, re-pool or delete B (404)", async () => {
      expect((await put(b, { name: "hijack" }, scopedWriter)).status).toBe(404);
      expect((await putPool(b, { pool: "x" }, scopedWriter)).status).toBe(404);
      expect((await k.http.delete(`/api/v1/node-groups/${bChild}`).set(bearer(scopedWriter))).status).toBe(404);
      expect((await get(b)).body.name).toBe("scope-B");
    });

    it("cannot create at the root (403 out_of_scope) nor under B (400 unknown_reference, as if B did not exist), but can under A", async () => {
      const root = await post({ name: "rooted" }, scopedWriter);
      expect(root.status).toBe(403);
      expect(root.body.error.code).toBe("out_of_scope");
      expect((await post({ name: "under-b", parent_id: b }, scopedWriter)).body.error.code).toBe("unknown_reference");
      const ok = await post({ name: "under-a", parent_id: aChild }, scopedWriter);
      expect(ok.status).toBe(201);
      expect((await get(ok.body.id, scopedReader)).status).toBe(200);
    });

    it("cannot move a folder to the root (403 out_of_scope) or into B (400 unknown_reference); may edit A itself in place", async () => {
      const toRoot = await put(aGrandchild, { name: "scope-A-grandchild", parent_id: null }, scopedWriter);
      expect(toRoot.status).toBe(403);
      expect(toRoot.body.error.code).toBe("out_of_scope");
      expect((await put(aGrandchild, { name: "scope-A-grandchild", parent_id: b }, scopedWriter)).body.error.code).toBe("unknown_reference");
      const outer = (await get(a)).body.parent_id;
      const inPlace = await put(a, { name: "scope-A renamed", parent_id: outer, pool: "apool" }, scopedWriter);
      expect(inPlace.status).toBe(200);
      expect(inPlace.body).toMatchObject({ name: "scope-A renamed", parent_id: outer, pool: "apool" });
      expect((await putPool(a, { pool: null }, scopedWriter)).status).toBe(200);
    });

    it("deletes an empty folder of its own subtree", async () => {
      const leaf = await folder("scope-A-leaf", a);
      expect((await k.http.delete(`/api/v1/node-groups/${leaf}`).set(bearer(scopedWriter))).status).toBe(204);
    });
  });

  /** folder_index's rows, and the recursive walk's (folder_walk, the definition folder_paths had): they must be equal. */
  async function indexAndWalk() {
    const order = "ORDER BY id";
    const cols = "id::text, parent_id::text, path::text, names::text, effective_pool, effective_tags::text, depth";
    const [index, walk] = await Promise.all([
      rawQuery(k.databaseUrl!, `SELECT ${cols} FROM inventory.folder_index ${order}`),
      rawQuery(k.databaseUrl!, `SELECT ${cols} FROM inventory.folder_walk ${order}`),
    ]);
    return { index, walk };
  }

  it("folder_index (what folder_paths and node_directory read) equals the recursive walk after every kind of folder change", async () => {
    const url = k.databaseUrl!;
    const top = await folder("idx-top", null, { pool: "idxpool", tags: ["b", "a"] });
    const mid = await folder("idx-mid", top, { tags: ["c"], tags_excluded: ["a"] });
    const leaf = await folder("idx-leaf", mid);
    const other = await folder("idx-other");
    const n = await node(leaf);
    const changes: [string, string, unknown[]][] = [
      ["rename", "UPDATE inventory.node_groups SET name = 'idx-mid2' WHERE id = $1", [mid]],
      ["pool", "UPDATE inventory.node_groups SET pool = 'idxpool2' WHERE id = $1", [top]],
      ["tags", "UPDATE inventory.node_groups SET tags = '{z,c}', tags_excluded = '{}' WHERE id = $1", [mid]],
      ["move", "UPDATE inventory.node_groups SET parent_id = $2 WHERE id = $1", [mid, other]],
      ["two in one statement", "UPDATE inventory.node_groups SET parent_id = NULL, pool = NULL WHERE id = ANY($1::uuid[])", [[mid, other]]],
      ["insert of several", "INSERT INTO inventory.node_groups (name, parent_id) VALUES ('idx-new1', $1), ('idx-new2', $1)", [leaf]],
      ["delete", "DELETE FROM inventory.node_groups WHERE name IN ('idx-new1', 'idx-new2')", []],
    ];
    try {
      for (const [what, sql, params] of changes) {
        await rawQuery(url, sql, params);
        const { index, walk } = await indexAndWalk();
        expect({ what, rows: index }).toEqual({ what, rows: walk });
      }
      // What a node reads of its folder follows: the published directory and the node's own page.
      const [dir] = await rawQuery<{ folder_path: string[]; folder_names: string[]; effective_pool: string; effective_tags: string[] }>(
        url,
        "SELECT folder_path, folder_names, effective_pool, effective_tags FROM inventory.node_directory WHERE id = $1",
        [n],
      );
      expect(dir).toEqual({ folder_path: [mid, leaf], folder_names: ["idx-mid2", "idx-leaf"], effective_pool: "default", effective_tags: ["c", "z"] });
      const page = await k.http.get(`/api/v1/nodes/${n}`).set(admin());
      expect(page.body).toMatchObject({ effective_pool: "default", effective_tags: ["c", "z"] });
      // A column the walk does not read (the triggers fire only on UPDATE OF the columns it reads) leaves it equal.
      await rawQuery(url, "UPDATE inventory.node_groups SET sort_order = 5, latitude = 1 WHERE id = $1", [leaf]);
      const { index, walk } = await indexAndWalk();
      expect(index).toEqual(walk);
    } finally {
      await rawQuery(url, "DELETE FROM inventory.nodes WHERE id = $1", [n]);
      await rawQuery(url, "DELETE FROM inventory.node_groups WHERE id = ANY($1::uuid[])", [[leaf]]);
      await rawQuery(url, "DELETE FROM inventory.node_groups WHERE id = ANY($1::uuid[])", [[mid, other]]);
      await rawQuery(url, "DELETE FROM inventory.node_groups WHERE id = $1", [top]);
    }
    expect((await indexAndWalk()).index).toEqual((await indexAndWalk()).walk);
  });

  it("folder_index stays equal to the walk when two transactions change folders at once", async () => {
    const url = k.databaseUrl!;
    const a = await folder("idx-conc-a");
    const b = await folder("idx-conc-b");
    const under = await folder("idx-conc-under", a);
    const c1 = new pg.Client({ connectionString: url });
    const c2 = new pg.Client({ connectionString: url });
    await Promise.all([c1.connect(), c2.connect()]);
    try {
      // c1 moves `under` below b and holds its transaction open; c2's rename of b queues behind it, then must walk
      // with c1's move committed (b's new name in `under`'s names).
      await c1.query("BEGIN");
      await c1.query("UPDATE inventory.node_groups SET parent_id = $2 WHERE id = $1", [under, b]);
      await c2.query("BEGIN");
      const renamed = c2.query("UPDATE inventory.node_groups SET name = 'idx-conc-b2' WHERE id = $1", [b]);
      await new Promise((r) => setTimeout(r, 200));
      await c1.query("COMMIT");
      await renamed;
      await c2.query("COMMIT");
      const { index, walk } = await indexAndWalk();
      expect(index).toEqual(walk);
      const [row] = await rawQuery<{ names: string[] }>(url, "SELECT names FROM inventory.folder_paths WHERE id = $1", [under]);
      expect(row.names).toEqual(["idx-conc-b2", "idx-conc-under"]);
    } finally {
      await Promise.all([c1.end(), c2.end()]);
      await rawQuery(url, "DELETE FROM inventory.node_groups WHERE id = $1", [under]);
      await rawQuery(url, "DELETE FROM inventory.node_groups WHERE id = ANY($1::uuid[])", [[a, b]]);
    }
  });

  it("folder_path_of (the write path's walk up from one folder) gives folder_paths' path for every folder, a cycle and a missing id", async () => {
    const url = k.databaseUrl!;
    const a = randomUUID();
    const b = randomUUID();
    const c = randomUUID();
    const deep = [randomUUID(), randomUUID(), randomUUID()];
    await rawQuery(url, "INSERT INTO inventory.node_groups (id, name, parent_id) VALUES ($1, 'walk-0', NULL), ($2, 'walk-1', $1), ($3, 'walk-2', $2)", deep);
    // A cycle (a → b → c → b) reaches no root: the view has no row for any of them.
    await rawQuery(url, "INSERT INTO inventory.node_groups (id, name, parent_id) VALUES ($1, 'cyc-a', NULL), ($2, 'cyc-b', $1), ($3, 'cyc-c', $2)", [a, b, c]);
    await rawQuery(url, "UPDATE inventory.node_groups SET parent_id = $2 WHERE id = $1", [b, c]);
    await rawQuery(url, "UPDATE inventory.node_groups SET parent_id = $2 WHERE id = $1", [a, b]);
    try {
      const rows = await rawQuery<{ id: string; view: string[] | null; walk: string[] | null }>(
        url,
        `SELECT g.id, f.path AS view, inventory.folder_path_of(g.id) AS walk
           FROM (SELECT id FROM inventory.node_groups UNION ALL SELECT $1::uuid) g LEFT JOIN inventory.folder_walk f ON f.id = g.id`,
        [randomUUID()],
      );
      expect(rows.length).toBeGreaterThan(6);
      expect(rows.map((r) => [r.id, r.walk])).toEqual(rows.map((r) => [r.id, r.view]));
      expect(rows.find((r) => r.id === deep[2])?.walk).toEqual(deep);
      expect(rows.filter((r) => [a, b, c].includes(r.id as typeof a)).map((r) => r.walk)).toEqual([null, null, null]);
    } finally {
      await rawQuery(url, "UPDATE inventory.node_groups SET parent_id = NULL WHERE id = ANY($1::uuid[])", [[a, b, c]]);
      await rawQuery(url, "DELETE FROM inventory.node_groups WHERE id = ANY($1::uuid[])", [[c, b, a, deep[2], deep[1], deep[0]]]);
    }
  });
});

describe("skeleton mode", () => {
  let s: TestKernel;
  beforeAll(async () => {
    s = await startInventoryKernel({ skeleton: true });
  });
  afterAll(() => s?.stop());

  it("answers 503 store_unavailable on every route", async () => {
    const id = randomUUID();
    const auth = bearer(s.adminToken);
    const routes = ["GET list", "GET tree", "GET one", "POST", "PUT", "PUT pool", "DELETE"];
    const responses = await Promise.all([
      s.http.get("/api/v1/node-groups").set(auth),
      s.http.get("/api/v1/node-groups/tree").set(auth),
      s.http.get(`/api/v1/node-groups/${id}`).set(auth),
      s.http.post("/api/v1/node-groups").set(auth).send({ name: "x" }),
      s.http.put(`/api/v1/node-groups/${id}`).set(auth).send({ name: "x" }),
      s.http.put(`/api/v1/node-groups/${id}/pool`).set(auth).send({ pool: "x" }),
      s.http.delete(`/api/v1/node-groups/${id}`).set(auth),
    ]);
    expect(responses.map((r, i) => [routes[i], r.status, r.body?.error?.code])).toEqual(routes.map((route) => [route, 503, "store_unavailable"]));
  });
});
