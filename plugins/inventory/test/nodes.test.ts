import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import type { NodeDirectoryRow, NodeEvent } from "../contract.js";
import { NodeService } from "../services/NodeService.js";
import { bearer, folderScope, startInventoryKernel, collection } from "./support.js";
import { expectEnvelope } from "../../../test/support/assertions.js";

let k: TestKernel;
let db: string;
const ids: Record<string, string> = {};
let operator: string;
let viewer: string;

async function folder(name: string, parent: string | null, pool: string | null = null, tags: string[] = [], excluded: string[] = []): Promise<string> {
  const rows = await rawQuery<{ id: string }>(
    db,
    "INSERT INTO inventory.node_groups (name, parent_id, pool, tags, tags_excluded) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    [name, parent, pool, tags, excluded],
  );
  return rows[0].id;
}

const { post, put, get, del, list } = collection(() => k, "/api/v1/nodes");

async function create(body: Record<string, unknown>, token = k.adminToken): Promise<string> {
  const res = await post(body, token);
  if (res.status !== 201) throw new Error(`node create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

async function nodeCount(): Promise<number> {
  return Number((await rawQuery<{ n: string }>(db, "SELECT count(*) AS n FROM inventory.nodes"))[0].n);
}

// Two kernels in one process share Ts.ED's injector: the skeleton kernel starts only after this one stopped.
describe("full mode", () => {
  beforeAll(async () => {
    k = await startInventoryKernel();
    db = k.databaseUrl!;
    // Tree: A (pool-a; tags a, shared) > A1 (tags a1; refuses shared) > A1x (pool deep); B at the root, no pool.
    ids.A = await folder("A", null, "pool-a", ["a", "shared"]);
    ids.A1 = await folder("A1", ids.A, null, ["a1"], ["shared"]);
    ids.A1x = await folder("A1x", ids.A1, "deep");
    ids.B = await folder("B", null);
    ids.profile = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.profiles (name, vendor) VALUES ('Edge router', 'acme') RETURNING id"))[0].id;
    ids.profile2 = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.profiles (name) VALUES ('Access switch') RETURNING id"))[0].id;
    ids.credential = (
      await rawQuery<{ id: string }>(
        db,
        "INSERT INTO inventory.credentials (name, kind, settings, secret_sealed) VALUES ('public-ro', 'snmp_v2c', '{}', 'sealed:v1:xyz') RETURNING id",
      )
    )[0].id;
    operator = await k.token("operator");
    viewer = await k.token("viewer");
  });

  afterAll(async () => {
    await k?.stop();
  });

  describe("create and read", () => {
    it("creates a node at the tree root with the defaults", async () => {
      const res = await post({ name: "core-rtr-1", address: "10.1.0.1" });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const got = await get(res.body.id);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        id: res.body.id,
        name: "core-rtr-1",
        address: "10.1.0.1",
        node_kind: "device",
        credential_id: null,
        group_id: null,
        parent_id: null,
        pool: null,
        effective_pool: "default",
        profile_id: null,
        vendor: null,
        model: null,
        snmp_port: 161,
        notes: null,
        tags: [],
        tags_excluded: [],
        effective_tags: [],
        profile_locked: false,
        sort_order: 0,
        sys_object_id: null,
        sys_descr: null,
        sys_name: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      });
    });

    it("stores every field of the body (name trimmed) and answers them back", async () => {
      const parent = await create({ name: "uplink", address: "10.1.0.2", group_id: ids.A });
      const id = await create(
        {
          name: "  edge-1  ",
          address: "10.1.0.3",
          credential_id: ids.credential,
          model: "X100",
          parent_id: parent,
          pool: "Pool_1-b",
          profile_id: ids.profile,
          vendor: "acme",
          group_id: ids.A1,
          snmp_port: 1161,
          notes: "rack 4, top",
          tags: [" blue ", "blue", "green"],
          tags_excluded: ["a"],
          profile_locked: true,
          sort_order: 2.5,
        },
        operator,
      );
      const got = await get(id, viewer);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({
        id,
        name: "edge-1",
        address: "10.1.0.3",
        credential_id: ids.credential,
        model: "X100",
        parent_id: parent,
        pool: "Pool_1-b",
        effective_pool: "Pool_1-b",
        profile_id: ids.profile,
        vendor: "acme",
        group_id: ids.A1,
        snmp_port: 1161,
        notes: "rack 4, top",
        tags: ["blue", "green"],
        tags_excluded: ["a"],
        effective_tags: ["a1", "blue", "green"],
        profile_locked: true,
        sort_order: 2.5,
      });
      // The credential's secret never appears.
      expect(JSON.stringify(got.body)).not.toContain("sealed");
    });

    it("takes IPv6 addresses and answers them in canonical form", async () => {
      const id = await create({ name: "v6-host", address: "2001:DB8:0:0::0:42" });
      expect((await get(id)).body.address).toBe("2001:db8::42");
      const mapped = await create({ name: "v6-mapped", address: "::ffff:192.0.2.7" });
      expect((await get(mapped)).body.address).toBe("::ffff:192.0.2.7");
      const found = await list({ address: "2001:db8::42" });
      expect(found.status).toBe(200);
      expect(found.body.map((n: { id: string }) => n.id)).toEqual([id]);
    });

    it("publishes the node in inventory.node_directory", async () => {
      const id = await create({ name: "dir-node", address: "2001:db8::77", group_id: ids.A1x, tags: ["t1"] });
      const rows = await rawQuery<NodeDirectoryRow>(db, "SELECT * FROM inventory.node_directory WHERE id = $1", [id]);
      expect(rows).toEqual([
        {
          id,
          name: "dir-node",
          address: "2001:db8::77",
          group_id: ids.A1x,
          folder_path: [ids.A, ids.A1, ids.A1x],
          folder_names: ["A", "A1", "A1x"],
          effective_pool: "deep",
          effective_tags: ["a", "a1", "t1"],
          profile_id: null,
          vendor: null,
          model: null,
          snmp_port: 161,
          credential_id: null,
          poll_interval_secs: null,
          url_check: null,
          dns_check: null,
        },
      ]);
    });

    it("answers 404 for a missing node and 400 for an id that is not a uuid", async () => {
      const missing = await get(randomUUID());
      expect(missing.status).toBe(404);
      expectEnvelope(missing.body, "not_found");
      const bad = await get("not-a-uuid");
      expect(bad.status).toBe(400);
      expectEnvelope(bad.body, "validation_failed");
    });
  });

  describe("create: every 400", () => {
    const valid = { name: "n", address: "10.9.9.9" };
    const cases: [string, () => Record<string, unknown>, string][] = [
      ["empty name", () => ({ ...valid, name: "" }), "validation_failed"],
      ["whitespace name", () => ({ ...valid, name: "  \t " }), "validation_failed"],
      ["missing name", () => ({ address: "10.9.9.9" }), "validation_failed"],
      ["name too long", () => ({ ...valid, name: "x".repeat(256) }), "validation_failed"],
      ["missing address", () => ({ name: "n" }), "validation_failed"],
      ["address not an IP", () => ({ ...valid, address: "router.example.net" }), "validation_failed"],
      ["address out of range", () => ({ ...valid, address: "300.1.1.1" }), "validation_failed"],
      ["address with prefix length", () => ({ ...valid, address: "10.0.0.0/24" }), "validation_failed"],
      ["IPv6 address with a zone", () => ({ ...valid, address: "fe80::1%eth0" }), "validation_failed"],
      ["bad IPv6 address", () => ({ ...valid, address: "2001:db8:::1" }), "validation_failed"],
      ["address not a string", () => ({ ...valid, address: 167772161 }), "validation_failed"],
      ["pool of 64 characters", () => ({ ...valid, pool: "p".repeat(64) }), "invalid_pool"],
      ["pool with bad characters", () => ({ ...valid, pool: "bad pool!" }), "invalid_pool"],
      ["pool with a dot", () => ({ ...valid, pool: "eu.west" }), "invalid_pool"],
      ["empty pool", () => ({ ...valid, pool: "" }), "invalid_pool"],
      ["snmp_port 0", () => ({ ...valid, snmp_port: 0 }), "validation_failed"],
      ["snmp_port 65536", () => ({ ...valid, snmp_port: 65536 }), "validation_failed"],
      ["snmp_port not an integer", () => ({ ...valid, snmp_port: 16.5 }), "validation_failed"],
      ["notes over 4000 characters", () => ({ ...valid, notes: "x".repeat(4001) }), "validation_failed"],
      ["a blank tag", () => ({ ...valid, tags: ["ok", " "] }), "validation_failed"],
      ["a tag over 64 characters", () => ({ ...valid, tags_excluded: ["t".repeat(65)] }), "validation_failed"],
      ["tags not an array", () => ({ ...valid, tags: "blue" }), "validation_failed"],
      ["profile_locked not a boolean", () => ({ ...valid, profile_locked: "yes" }), "validation_failed"],
      ["credential_id not a uuid", () => ({ ...valid, credential_id: "public" }), "validation_failed"],
      ["group_id not a uuid", () => ({ ...valid, group_id: "A" }), "validation_failed"],
      ["an unknown field", () => ({ ...valid, colour: "red" }), "validation_failed"],
      ["a poller fact (read-only)", () => ({ ...valid, sys_name: "edge" }), "validation_failed"],
      ["node_kind (not writable)", () => ({ ...valid, node_kind: "virtual" }), "validation_failed"],
      ["unknown credential_id", () => ({ ...valid, credential_id: randomUUID() }), "unknown_reference"],
      ["unknown profile_id", () => ({ ...valid, profile_id: randomUUID() }), "unknown_reference"],
      ["unknown group_id", () => ({ ...valid, group_id: randomUUID() }), "unknown_reference"],
      ["unknown parent_id", () => ({ ...valid, parent_id: randomUUID() }), "unknown_reference"],
    ];

    it.each(cases)("%s → 400 and nothing written", async (_label, body, code) => {
      const before = await nodeCount();
      const res = await post(body());
      expect(res.status).toBe(400);
      expectEnvelope(res.body, code);
      expect(await nodeCount()).toBe(before);
    });

    it("names the field in unknown_reference messages", async () => {
      for (const field of ["credential_id", "profile_id", "group_id", "parent_id"]) {
        const res = await post({ ...valid, [field]: randomUUID() });
        expect(res.body.error.message).toContain(field);
      }
    });

    it("refuses a missing body and one that is not JSON", async () => {
      const none = await k.http.post("/api/v1/nodes").set(bearer(k.adminToken));
      expect(none.status).toBe(400);
      const broken = await k.http.post("/api/v1/nodes").set(bearer(k.adminToken)).set("Content-Type", "application/json").send("{name:");
      expect(broken.status).toBe(400);
      expectEnvelope(broken.body, "malformed_json");
    });

    it("accepts the port bounds 1 and 65535 and null for every nullable field", async () => {
      const low = await create({ ...valid, name: "port-low", snmp_port: 1 });
      const high = await create({
        ...valid,
        name: "port-high",
        snmp_port: 65535,
        credential_id: null,
        model: null,
        parent_id: null,
        pool: null,
        profile_id: null,
        vendor: null,
        group_id: null,
        notes: null,
      });
      expect((await get(low)).body.snmp_port).toBe(1);
      expect((await get(high)).body.snmp_port).toBe(65535);
    });
  });

  describe("update", () => {
    it("replaces the whole document: absent optional fields go back to their defaults", async () => {
      const id = await create({
        name: "upd-1",
        address: "10.2.0.1",
        group_id: ids.A,
        pool: "p1",
        vendor: "acme",
        snmp_port: 1161,
        tags: ["x"],
        profile_locked: true,
        sort_order: 3,
        profile_id: ids.profile,
      });
      const before = (await get(id)).body;
      const res = await put(id, { name: "upd-1b", address: "2001:db8::2:1", group_id: ids.B, profile_id: ids.profile2, notes: "moved" }, operator);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id,
        name: "upd-1b",
        address: "2001:db8::2:1",
        group_id: ids.B,
        pool: null,
        effective_pool: "default",
        vendor: null,
        snmp_port: 161,
        tags: [],
        profile_locked: false,
        sort_order: 0,
        profile_id: ids.profile2,
        notes: "moved",
      });
      expect(res.body.created_at).toBe(before.created_at);
      expect(res.body.updated_at > before.updated_at).toBe(true);
      expect((await get(id)).body).toEqual(res.body);
    });

    it("refuses every bad body with 400 and changes nothing", async () => {
      const id = await create({ name: "upd-2", address: "10.2.0.2" });
      const before = (await get(id)).body;
      const bad: [Record<string, unknown>, string][] = [
        [{ name: " ", address: "10.2.0.2" }, "validation_failed"],
        [{ name: "x", address: "nope" }, "validation_failed"],
        [{ name: "x", address: "10.2.0.2", pool: "q".repeat(64) }, "invalid_pool"],
        [{ name: "x", address: "10.2.0.2", snmp_port: 65536 }, "validation_failed"],
        [{ name: "x", address: "10.2.0.2", sys_descr: "fake" }, "validation_failed"],
        [{ name: "x", address: "10.2.0.2", credential_id: randomUUID() }, "unknown_reference"],
        [{ name: "x", address: "10.2.0.2", profile_id: randomUUID() }, "unknown_reference"],
        [{ name: "x", address: "10.2.0.2", group_id: randomUUID() }, "unknown_reference"],
        [{ name: "x", address: "10.2.0.2", parent_id: id }, "validation_failed"],
      ];
      for (const [body, code] of bad) {
        const res = await put(id, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectEnvelope(res.body, code);
      }
      expect((await get(id)).body).toEqual(before);
    });

    it("refuses a parent beneath the node itself (a cycle)", async () => {
      const top = await create({ name: "cyc-top", address: "10.2.1.1" });
      const mid = await create({ name: "cyc-mid", address: "10.2.1.2", parent_id: top });
      const low = await create({ name: "cyc-low", address: "10.2.1.3", parent_id: mid });
      const res = await put(top, { name: "cyc-top", address: "10.2.1.1", parent_id: low });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, "validation_failed");
      // Re-stating the current parent is fine.
      expect((await put(low, { name: "cyc-low", address: "10.2.1.3", parent_id: mid })).status).toBe(200);
    });

    it("answers 404 for a missing node and 400 for a bad id", async () => {
      const res = await put(randomUUID(), { name: "x", address: "10.2.0.9" });
      expect(res.status).toBe(404);
      expectEnvelope(res.body, "not_found");
      expect((await put("123", { name: "x", address: "10.2.0.9" })).status).toBe(400);
    });
  });

  describe("delete", () => {
    it("deletes (204), then answers 404; children lose their parent", async () => {
      const id = await create({ name: "del-1", address: "10.3.0.1", group_id: ids.A });
      const child = await create({ name: "del-child", address: "10.3.0.2", parent_id: id });
      const res = await del(id, operator);
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      expect((await get(id)).status).toBe(404);
      const again = await del(id);
      expect(again.status).toBe(404);
      expectEnvelope(again.body, "not_found");
      expect((await get(child)).body.parent_id).toBeNull();
      expect((await del("nope")).status).toBe(400);
    });
  });

  describe("poller facts", () => {
    it("are read-only over HTTP and recorded by NodeService.recordFacts", async () => {
      const id = await create({ name: "facts-1", address: "10.4.0.1", group_id: ids.A });
      const service = k.kernel.context("inventory")!.get(NodeService);
      const events: NodeEvent[] = [];
      const off = k.kernel.bus.on("inventory.node.updated", (e) => {
        if (e.id === id) events.push(e);
      });
      try {
        const facts = { sys_object_id: "1.3.6.1.4.1.9.1.1", sys_descr: "Acme OS 1.2", sys_name: "facts-1.lab" };
        expect(await service.recordFacts(id, facts)).toBe(true);
        expect((await get(id)).body).toMatchObject(facts);
        expect(events).toEqual([{ id, name: "facts-1", address: "10.4.0.1", group_id: ids.A, folder_path: [ids.A] }]);
        // Unchanged facts: nothing written, no event.
        expect(await service.recordFacts(id, facts)).toBe(true);
        expect(events).toHaveLength(1);
        expect(await service.recordFacts(randomUUID(), facts)).toBe(false);
        // A PUT keeps them.
        expect((await put(id, { name: "facts-1", address: "10.4.0.1", group_id: ids.A })).body).toMatchObject(facts);
      } finally {
        off();
      }
    });
  });

  describe("list", () => {
    const names = (body: { name: string }[]) => body.map((n) => n.name);

    beforeAll(async () => {
      await create({ name: "lf-root", address: "10.5.0.1" });
      await create({ name: "lf-a", address: "10.5.0.2", group_id: ids.A, profile_id: ids.profile });
      await create({ name: "lf-a1", address: "10.5.0.3", group_id: ids.A1 });
      await create({ name: "lf-a1x", address: "10.5.0.4", group_id: ids.A1x, profile_id: ids.profile });
      await create({ name: "LF-B", address: "2001:db8::5:5", group_id: ids.B, pool: "pool-a" });
    });

    it("answers rows with every field, ordered by lower(name)", async () => {
      const res = await list({ q: "lf-" });
      expect(res.status).toBe(200);
      expect(names(res.body)).toEqual(["lf-a", "lf-a1", "lf-a1x", "LF-B", "lf-root"]);
      expect(res.headers["x-next-cursor"]).toBeUndefined();
      expect(Object.keys(res.body[0]).sort()).toEqual(
        [
          "id",
          "name",
          "address",
          "node_kind",
          "credential_id",
          "group_id",
          "parent_id",
          "pool",
          "effective_pool",
          "profile_id",
          "vendor",
          "model",
          "snmp_port",
          "notes",
          "tags",
          "tags_excluded",
          "effective_tags",
          "profile_locked",
          "sort_order",
          "sys_object_id",
          "sys_descr",
          "sys_name",
          "created_at",
          "updated_at",
        ].sort(),
      );
    });

    it("filters by folder with everything beneath it", async () => {
      expect(names((await list({ q: "lf-", group_id: ids.A })).body)).toEqual(["lf-a", "lf-a1", "lf-a1x"]);
      expect(names((await list({ q: "lf-", group_id: ids.A1 })).body)).toEqual(["lf-a1", "lf-a1x"]);
      expect(names((await list({ q: "lf-", group_id: ids.A1x })).body)).toEqual(["lf-a1x"]);
      expect(names((await list({ q: "lf-", group_id: ids.B })).body)).toEqual(["LF-B"]);
    });

    it("filters by effective pool", async () => {
      expect(names((await list({ q: "lf-", pool: "pool-a" })).body)).toEqual(["lf-a", "lf-a1", "LF-B"]);
      expect(names((await list({ q: "lf-", pool: "deep" })).body)).toEqual(["lf-a1x"]);
      expect(names((await list({ q: "lf-", pool: "default" })).body)).toEqual(["lf-root"]);
    });

    it("filters by profile, name substring (case-insensitive) and exact address", async () => {
      expect(names((await list({ q: "lf-", profile_id: ids.profile })).body)).toEqual(["lf-a", "lf-a1x"]);
      expect(names((await list({ q: "LF-A1" })).body)).toEqual(["lf-a1", "lf-a1x"]);
      expect(names((await list({ q: "%" })).body)).toEqual([]);
      expect(names((await list({ address: "10.5.0.3" })).body)).toEqual(["lf-a1"]);
      expect(names((await list({ address: "2001:DB8:0::5:5" })).body)).toEqual(["LF-B"]);
      expect(names((await list({ address: "10.5.0.99" })).body)).toEqual([]);
    });

    it("refuses bad filters with 400, and a folder it cannot see with 404", async () => {
      for (const [query, code] of [
        [{ address: "10.5.0" }, "validation_failed"],
        [{ address: "10.5.0.0/24" }, "validation_failed"],
        [{ pool: "p".repeat(64) }, "invalid_pool"],
        [{ pool: "no spaces" }, "invalid_pool"],
        [{ group_id: "A" }, "validation_failed"],
        [{ profile_id: "x" }, "validation_failed"],
        [{ limit: 0 }, "validation_failed"],
        [{ limit: 1001 }, "validation_failed"],
        [{ limit: "ten" }, "validation_failed"],
      ] as [Record<string, string | number>, string][]) {
        const res = await list(query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectEnvelope(res.body, code);
      }
      const missing = await list({ group_id: randomUUID() });
      expect(missing.status).toBe(404);
      expectEnvelope(missing.body, "not_found");
    });

    it("walks more than one page with X-Next-Cursor", async () => {
      const made = ["Walk-07", "walk-01", "WALK-03", "walk-05", "walk-02", "walk-06", "walk-04"];
      for (const [i, name] of made.entries()) await create({ name, address: `10.6.0.${i + 1}` });
      const seen: string[] = [];
      let cursor: string | undefined;
      const sizes: number[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await list({ q: "walk-", limit: 3, ...(cursor ? { cursor } : {}) });
        expect(res.status).toBe(200);
        sizes.push(res.body.length);
        seen.push(...names(res.body));
        cursor = res.headers["x-next-cursor"];
        if (!cursor) break;
      }
      expect(sizes).toEqual([3, 3, 1]);
      expect(seen).toEqual(["walk-01", "walk-02", "WALK-03", "walk-04", "walk-05", "walk-06", "Walk-07"]);
    });

    it("ends on an exact page without a header and answers the default limit", async () => {
      const exact = await list({ q: "walk-", limit: 7 });
      expect(exact.body).toHaveLength(7);
      expect(exact.headers["x-next-cursor"]).toBeUndefined();
      const all = await list({});
      expect(all.status).toBe(200);
      expect(all.body.length).toBeGreaterThan(7);
      expect(all.body.length).toBeLessThanOrEqual(100);
    });

    it("refuses a cursor it did not issue (400 invalid_cursor)", async () => {
      const forged = [
        "garbage!!",
        Buffer.from(JSON.stringify(["walk-01"])).toString("base64url"),
        Buffer.from(JSON.stringify(["walk-01", "not-a-uuid"])).toString("base64url"),
        Buffer.from(JSON.stringify(["walk-01", 5])).toString("base64url"),
      ];
      for (const cursor of forged) {
        const res = await list({ cursor });
        expect(res.status).toBe(400);
        expectEnvelope(res.body, "invalid_cursor");
      }
    });
  });

  describe("effective pool and tags", () => {
    it("pool: own, else the nearest folder's, else default", async () => {
      const own = await create({ name: "ep-own", address: "10.7.0.1", group_id: ids.A1x, pool: "mine" });
      const deep = await create({ name: "ep-deep", address: "10.7.0.2", group_id: ids.A1x });
      const inherited = await create({ name: "ep-a1", address: "10.7.0.3", group_id: ids.A1 });
      const none = await create({ name: "ep-b", address: "10.7.0.4", group_id: ids.B });
      const root = await create({ name: "ep-root", address: "10.7.0.5" });
      const pools = await Promise.all([own, deep, inherited, none, root].map(async (id) => (await get(id)).body.effective_pool));
      expect(pools).toEqual(["mine", "deep", "pool-a", "default", "default"]);
      // A folder's pool changing is followed at once.
      await rawQuery(db, "UPDATE inventory.node_groups SET pool = 'b-pool' WHERE id = $1", [ids.B]);
      try {
        expect((await get(none)).body.effective_pool).toBe("b-pool");
      } finally {
        await rawQuery(db, "UPDATE inventory.node_groups SET pool = NULL WHERE id = $1", [ids.B]);
      }
    });

    it("tags: inherited from the folders above, minus tags_excluded at each level", async () => {
      // A gives a, shared; A1 adds a1 and refuses shared; the node adds n1 and refuses a.
      const id = await create({ name: "et-1", address: "10.7.1.1", group_id: ids.A1, tags: ["n1"], tags_excluded: ["a"] });
      const body = (await get(id)).body;
      expect(body.tags).toEqual(["n1"]);
      expect(body.tags_excluded).toEqual(["a"]);
      expect(body.effective_tags).toEqual(["a1", "n1"]);
      const inA = await create({ name: "et-2", address: "10.7.1.2", group_id: ids.A });
      expect((await get(inA)).body.effective_tags).toEqual(["a", "shared"]);
      const listed = await list({ q: "et-1" });
      expect(listed.body[0].effective_tags).toEqual(["a1", "n1"]);
    });
  });

  describe("folder scope", () => {
    let scopedA: string;
    let sessionA: string;
    const n: Record<string, string> = {};

    beforeAll(async () => {
      scopedA = await k.token("operator", folderScope(ids.A));
      sessionA = await k.session("viewer", folderScope(ids.A));
      n.a = await create({ name: "sc-a", address: "10.8.0.1", group_id: ids.A });
      n.a1x = await create({ name: "sc-a1x", address: "10.8.0.2", group_id: ids.A1x });
      n.b = await create({ name: "sc-b", address: "10.8.0.3", group_id: ids.B });
      n.root = await create({ name: "sc-root", address: "10.8.0.4" });
    });

    it("lists only nodes in the scope's subtree", async () => {
      for (const token of [scopedA, sessionA]) {
        const res = await list({ q: "sc-" }, token);
        expect(res.status).toBe(200);
        expect(res.body.map((r: { name: string }) => r.name)).toEqual(["sc-a", "sc-a1x"]);
      }
      expect((await list({ q: "sc-" })).body).toHaveLength(4);
      const outside = await list({ group_id: ids.B }, scopedA);
      expect(outside.status).toBe(404);
      expect((await list({ q: "sc-", group_id: ids.A1 }, scopedA)).body.map((r: { name: string }) => r.name)).toEqual(["sc-a1x"]);
    });

    it("answers 404 for nodes outside the scope on every route", async () => {
      for (const id of [n.b, n.root]) {
        for (const res of [await get(id, scopedA), await put(id, { name: "x", address: "10.8.0.9", group_id: ids.A }, scopedA), await del(id, scopedA)]) {
          expect(res.status).toBe(404);
          expectEnvelope(res.body, "not_found");
        }
      }
      expect((await get(n.b)).body.name).toBe("sc-b");
      expect((await get(n.root)).body.name).toBe("sc-root");
      expect((await get(n.a1x, scopedA)).status).toBe(200);
    });

    it("refuses the tree root with 403 out_of_scope", async () => {
      const before = await nodeCount();
      for (const body of [
        { name: "sc-new", address: "10.8.1.1" },
        { name: "sc-new", address: "10.8.1.1", group_id: null },
      ]) {
        const res = await post(body, scopedA);
        expect(res.status).toBe(403);
        expectEnvelope(res.body, "out_of_scope");
      }
      expect(await nodeCount()).toBe(before);
      const move = await put(n.a, { name: "sc-a", address: "10.8.0.1" }, scopedA);
      expect(move.status).toBe(403);
      expectEnvelope(move.body, "out_of_scope");
      expect((await get(n.a)).body.group_id).toBe(ids.A);
    });

    it("refuses filing into a folder outside the scope with 400 unknown_reference", async () => {
      const res = await post({ name: "sc-new", address: "10.8.1.2", group_id: ids.B }, scopedA);
      expect(res.status).toBe(400);
      expectEnvelope(res.body, "unknown_reference");
      expect(res.body.error.message).toContain("group_id");
      const move = await put(n.a, { name: "sc-a", address: "10.8.0.1", group_id: ids.B }, scopedA);
      expect(move.status).toBe(400);
      expectEnvelope(move.body, "unknown_reference");
      const parent = await post({ name: "sc-new", address: "10.8.1.2", group_id: ids.A, parent_id: n.b }, scopedA);
      expect(parent.status).toBe(400);
      expectEnvelope(parent.body, "unknown_reference");
      expect(parent.body.error.message).toContain("parent_id");
    });

    it("lets the scoped caller work inside its subtree", async () => {
      const res = await post({ name: "sc-inside", address: "10.8.1.3", group_id: ids.A1, parent_id: n.a1x }, scopedA);
      expect(res.status).toBe(201);
      const moved = await put(res.body.id, { name: "sc-inside", address: "10.8.1.3", group_id: ids.A1x }, scopedA);
      expect(moved.status).toBe(200);
      expect(moved.body.group_id).toBe(ids.A1x);
      expect((await del(res.body.id, scopedA)).status).toBe(204);
    });
  });

  describe("access", () => {
    let id: string;
    beforeAll(async () => {
      id = await create({ name: "acc-1", address: "10.9.0.1" });
    });

    const routes = (): [string, () => ReturnType<typeof k.http.get>][] => [
      ["GET list", () => k.http.get("/api/v1/nodes")],
      ["POST", () => k.http.post("/api/v1/nodes").send({ name: "acc-x", address: "10.9.0.2" })],
      ["GET one", () => k.http.get(`/api/v1/nodes/${id}`)],
      ["PUT", () => k.http.put(`/api/v1/nodes/${id}`).send({ name: "acc-x", address: "10.9.0.2" })],
      ["DELETE", () => k.http.delete(`/api/v1/nodes/${id}`)],
    ];

    it("answers 401 without a token and with a bad one on every route", async () => {
      for (const [label, call] of routes()) {
        for (const res of [await call(), await call().set(bearer("not-a-token"))]) {
          expect({ label, status: res.status }).toEqual({ label, status: 401 });
          expectEnvelope(res.body, "unauthorized");
        }
      }
    });

    it("lets a viewer read but not write (403)", async () => {
      const [readList, create, readOne, update, remove] = routes();
      expect((await readList[1]().set(bearer(viewer))).status).toBe(200);
      expect((await readOne[1]().set(bearer(viewer))).status).toBe(200);
      for (const [label, call] of [create, update, remove]) {
        const res = await call().set(bearer(viewer));
        expect({ label, status: res.status }).toEqual({ label, status: 403 });
        expect(res.body.error.code).toEqual(expect.any(String));
      }
      expect((await get(id)).body.name).toBe("acc-1");
    });
  });

  describe("OpenAPI document", () => {
    it("describes the node routes, the body (no poller facts, no extra fields) and the cursor header", async () => {
      const spec = (await k.http.get("/api/v1/openapi.json")).body;
      const codes = (path: string, method: string) => Object.keys(spec.paths[path][method].responses);
      expect(codes("/api/v1/nodes", "get")).toEqual(expect.arrayContaining(["200", "400", "401", "403", "404", "503"]));
      expect(codes("/api/v1/nodes", "post")).toEqual(expect.arrayContaining(["201", "400", "401", "403", "503"]));
      for (const method of ["get", "put", "delete"]) {
        expect(codes("/api/v1/nodes/{id}", method)).toEqual(expect.arrayContaining(["400", "401", "403", "404", "503"]));
      }
      expect(spec.paths["/api/v1/nodes"].get.responses["200"].headers["X-Next-Cursor"].schema).toEqual({ type: "string" });
      const body = spec.components.schemas.NodeWrite;
      expect(body.additionalProperties).toBe(false);
      expect(body.required).toEqual(["name", "address"]);
      expect(Object.keys(body.properties)).not.toContain("sys_name");
      expect(Object.keys(spec.components.schemas.NodeView.properties)).toEqual(expect.arrayContaining(["effective_pool", "effective_tags", "sys_descr"]));
    });
  });

  describe("bus events", () => {
    it("emits created, updated and deleted with the folder path", async () => {
      const seen: [string, NodeEvent][] = [];
      const offs = (["inventory.node.created", "inventory.node.updated", "inventory.node.deleted"] as const).map((name) =>
        k.kernel.bus.on(name, (e) => {
          if (e.name.startsWith("bus-")) seen.push([name, e]);
        }),
      );
      try {
        const id = await create({ name: "bus-1", address: "10.10.0.1", group_id: ids.A1 });
        expect(seen).toEqual([["inventory.node.created", { id, name: "bus-1", address: "10.10.0.1", group_id: ids.A1, folder_path: [ids.A, ids.A1] }]]);
        await put(id, { name: "bus-1b", address: "2001:db8::10", group_id: ids.A1x });
        expect(seen[1]).toEqual([
          "inventory.node.updated",
          { id, name: "bus-1b", address: "2001:db8::10", group_id: ids.A1x, folder_path: [ids.A, ids.A1, ids.A1x] },
        ]);
        await del(id);
        expect(seen[2]).toEqual([
          "inventory.node.deleted",
          { id, name: "bus-1b", address: "2001:db8::10", group_id: ids.A1x, folder_path: [ids.A, ids.A1, ids.A1x] },
        ]);
        const root = await create({ name: "bus-root", address: "10.10.0.2" });
        expect(seen[3]).toEqual(["inventory.node.created", { id: root, name: "bus-root", address: "10.10.0.2", group_id: null, folder_path: [] }]);
        // Refused writes emit nothing.
        await post({ name: "bus-bad", address: "nope" });
        await put(randomUUID(), { name: "bus-gone", address: "10.10.0.3" });
        await del(randomUUID());
        expect(seen).toHaveLength(4);
      } finally {
        offs.forEach((off) => off());
      }
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

  it("answers 503 store_unavailable on every route", async () => {
    const id = randomUUID();
    const auth = bearer(s.adminToken);
    for (const [label, res] of [
      ["GET list", await s.http.get("/api/v1/nodes").set(auth)],
      ["POST", await s.http.post("/api/v1/nodes").set(auth).send({ name: "n", address: "10.0.0.1" })],
      ["GET one", await s.http.get(`/api/v1/nodes/${id}`).set(auth)],
      ["PUT", await s.http.put(`/api/v1/nodes/${id}`).set(auth).send({ name: "n", address: "10.0.0.1" })],
      ["DELETE", await s.http.delete(`/api/v1/nodes/${id}`).set(auth)],
    ] as const) {
      expect({ label, status: res.status }).toEqual({ label, status: 503 });
      expectEnvelope(res.body, "store_unavailable");
    }
  });

  it("still answers 401 without a token", async () => {
    expect((await s.http.get("/api/v1/nodes")).status).toBe(401);
    expect((await s.http.post("/api/v1/nodes").send({ name: "n", address: "10.0.0.1" })).status).toBe(401);
  });
});
