import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import { expectError } from "../../../test/support/assertions.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import type { NodeEvent } from "../contract.js";
import { bearer, folderScope, startInventoryKernel } from "./support.js";

const IMPORT = "/api/v1/discovery/import";

let k: TestKernel;
let db: string;
const f: Record<string, string> = {};
let profile: string;
let credential: string;

async function folder(name: string, parent: string | null, ranges: string[]): Promise<string> {
  const rows = await rawQuery<{ id: string }>(db, "INSERT INTO inventory.node_groups (name, parent_id, ip_ranges) VALUES ($1, $2, $3::cidr[]) RETURNING id", [
    name,
    parent,
    ranges,
  ]);
  return rows[0].id;
}

/** The nodes standing at these addresses (compared as inet), with their folder. */
async function nodesAt(...addresses: string[]): Promise<{ name: string; address: string; group_id: string | null; profile_id: string | null }[]> {
  return rawQuery(
    db,
    "SELECT name, host(address) AS address, group_id, profile_id FROM inventory.nodes WHERE address = ANY($1::inet[]) ORDER BY address, created_at, name",
    [addresses],
  );
}

const countNodes = async () => Number((await rawQuery<{ n: string }>(db, "SELECT count(*) AS n FROM inventory.nodes"))[0].n);

const post = (body: unknown, token = k.adminToken) =>
  k.http
    .post(IMPORT)
    .set(bearer(token))
    .send(body as object);

// Kernels in one process run one at a time: Ts.ED keeps one instance per service, so a second live kernel would reach the first one's store.
describe("POST /discovery/import", () => {
  beforeAll(async () => {
    k = await startInventoryKernel();
    db = k.databaseUrl!;
    // IPv4: site A holds 10.1/16 and its child A1 10.1.1/24 (so 10.1.1.x is "chosen"), B and C both claim 10.2/16 (ambiguous).
    f.A = await folder("site-a", null, ["10.1.0.0/16"]);
    f.A1 = await folder("a-floor-1", f.A, ["10.1.1.0/24"]);
    f.B = await folder("site-b", null, ["10.2.0.0/16", "192.168.50.0/24"]);
    f.C = await folder("site-c", null, ["10.2.0.0/16"]);
    // IPv6 the same way: V holds 2001:db8::/32 and V1 2001:db8:1::/48; W and X both claim 2001:db9::/32.
    f.V = await folder("v6-site", null, ["2001:db8::/32"]);
    f.V1 = await folder("v6-floor", f.V, ["2001:db8:1::/48"]);
    f.W = await folder("v6-w", null, ["2001:db9::/32"]);
    f.X = await folder("v6-x", null, ["2001:db9::/32"]);
    f.inbox = await folder("inbox", null, []);
    profile = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.profiles (name) VALUES ('generic') RETURNING id"))[0].id;
    credential = (
      await rawQuery<{ id: string }>(db, "INSERT INTO inventory.credentials (name, kind, secret_sealed) VALUES ('v2c', 'snmp_v2c', 'sealed:v1:x') RETURNING id")
    )[0].id;
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("creates the nodes with their bindings and answers the counts", async () => {
    const res = await post({
      nodes: [
        { name: "sw-1", address: "172.16.0.1", profile_id: profile, credential_id: credential, vendor: "Cisco", model: "C9300" },
        { name: "  sw-2  ", address: "172.16.0.2", profile_id: null, credential_id: null, vendor: null, model: null },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 2, skipped_existing: 0, filed: null });
    const rows = await rawQuery(
      db,
      `SELECT name, host(address) AS address, group_id, profile_id, credential_id, vendor, model, node_kind
         FROM inventory.nodes WHERE address << '172.16.0.0/24' ORDER BY address`,
    );
    expect(rows).toEqual([
      {
        name: "sw-1",
        address: "172.16.0.1",
        group_id: null,
        profile_id: profile,
        credential_id: credential,
        vendor: "Cisco",
        model: "C9300",
        node_kind: "device",
      },
      { name: "sw-2", address: "172.16.0.2", group_id: null, profile_id: null, credential_id: null, vendor: null, model: null, node_kind: "device" },
    ]);
  });

  it("accepts ids in upper case", async () => {
    const res = await post({
      group_id: f.inbox.toUpperCase(),
      nodes: [
        { name: "upper-1", address: "172.16.9.1", profile_id: profile.toUpperCase(), credential_id: credential.toUpperCase() },
        { name: "upper-2", address: "172.16.9.2", group_id: f.B.toUpperCase() },
      ],
    });
    expect(res.status).toBe(200);
    expect((await nodesAt("172.16.9.1", "172.16.9.2")).map((n) => [n.name, n.group_id, n.profile_id])).toEqual([
      ["upper-1", f.inbox, profile],
      ["upper-2", f.B, null],
    ]);
  });

  it("takes each row's SNMP port (161 when absent) and refuses one out of range", async () => {
    const res = await post({
      nodes: [
        { name: "port-1", address: "172.16.10.1", snmp_port: 1161 },
        { name: "port-2", address: "172.16.10.2" },
      ],
    });
    expect(res.status).toBe(200);
    const rows = await rawQuery(db, `SELECT name, snmp_port FROM inventory.nodes WHERE address << '172.16.10.0/24' ORDER BY address`);
    expect(rows).toEqual([
      { name: "port-1", snmp_port: 1161 },
      { name: "port-2", snmp_port: 161 },
    ]);
    expectError(await post({ nodes: [{ name: "port-3", address: "172.16.10.3", snmp_port: 70000 }] }), 400, "validation_failed");
  });

  it("takes an empty list", async () => {
    expect((await post({ nodes: [] })).body).toEqual({ created: 0, skipped_existing: 0, filed: null });
    expect((await post({ nodes: [], file_by_prefix: true })).body).toEqual({
      created: 0,
      skipped_existing: 0,
      filed: { ambiguous: 0, chosen: 0, matched: 0, unmatched: 0 },
    });
  });

  it("emits inventory.node.created per node, after the commit", async () => {
    const seen: { event: NodeEvent; visible: boolean }[] = [];
    const off = k.kernel.context("inventory")!.bus.on("inventory.node.created", async (event) => {
      // Another connection sees the node: the event came after the commit.
      const rows = await rawQuery(db, "SELECT 1 FROM inventory.nodes WHERE id = $1", [event.id]);
      seen.push({ event, visible: rows.length === 1 });
    });
    try {
      const res = await post({ group_id: f.A1, nodes: [{ name: "ev-1", address: "10.1.1.201" }] });
      expect(res.status).toBe(200);
      expect(seen).toEqual([
        { event: { id: expect.any(String), name: "ev-1", address: "10.1.1.201", group_id: f.A1, folder_path: [f.A, f.A1] }, visible: true },
      ]);
    } finally {
      off();
    }
  });

  describe("skipped_existing", () => {
    it("skips an address that already holds a device node, and a repeat of an earlier row", async () => {
      await rawQuery(db, "INSERT INTO inventory.nodes (name, address) VALUES ('old', '172.17.0.1')");
      // A node of another kind at an address does not block it.
      await rawQuery(db, "INSERT INTO inventory.nodes (name, address, node_kind) VALUES ('svc', '172.17.0.9', 'service')");
      const res = await post({
        nodes: [
          { name: "dup-existing", address: "172.17.0.1" },
          { name: "first", address: "172.17.0.2" },
          { name: "second", address: "172.17.0.2" },
          { name: "beside-service", address: "172.17.0.9" },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ created: 2, skipped_existing: 2, filed: null });
      expect((await nodesAt("172.17.0.1", "172.17.0.2", "172.17.0.9")).map((n) => n.name)).toEqual(["old", "first", "svc", "beside-service"]);
    });

    it("compares addresses as values, so IPv6 spellings of one address are one address", async () => {
      const res = await post({
        nodes: [
          { name: "v6-a", address: "2001:db8:77::1" },
          { name: "v6-b", address: "2001:DB8:77:0:0::1" },
          { name: "v6-c", address: "2001:0db8:0077::0001" },
        ],
      });
      expect(res.body).toEqual({ created: 1, skipped_existing: 2, filed: null });
      const again = await post({ nodes: [{ name: "v6-d", address: "2001:db8:77:0::1" }] });
      expect(again.body).toEqual({ created: 0, skipped_existing: 1, filed: null });
      expect(await nodesAt("2001:db8:77::1")).toEqual([expect.objectContaining({ name: "v6-a", address: "2001:db8:77::1" })]);
    });
  });

  describe("filing by range", () => {
    it("files IPv4 addresses: matched, chosen, ambiguous and unmatched (fallback = group_id)", async () => {
      const res = await post({
        group_id: f.inbox,
        file_by_prefix: true,
        nodes: [
          { name: "m1", address: "10.1.2.3" }, // only A's /16
          { name: "m2", address: "192.168.50.7" }, // only B's second range
          { name: "c1", address: "10.1.1.5" }, // A /16 and A1 /24: A1 wins
          { name: "a1", address: "10.2.3.4" }, // B and C, both /16
          { name: "u1", address: "10.9.9.9" }, // nobody
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ created: 5, skipped_existing: 0, filed: { ambiguous: 1, chosen: 1, matched: 2, unmatched: 1 } });
      const byName = Object.fromEntries((await nodesAt("10.1.2.3", "192.168.50.7", "10.1.1.5", "10.2.3.4", "10.9.9.9")).map((n) => [n.name, n.group_id]));
      expect(byName).toEqual({ m1: f.A, m2: f.B, c1: f.A1, a1: f.inbox, u1: f.inbox });
    });

    it("files IPv6 addresses the same way, and falls back to the tree root without a group_id", async () => {
      const res = await post({
        file_by_prefix: true,
        nodes: [
          { name: "v6m", address: "2001:db8:2::10" }, // V only
          { name: "v6c", address: "2001:db8:1::10" }, // V /32 and V1 /48: V1
          { name: "v6a", address: "2001:db9::10" }, // W and X
          { name: "v6u", address: "2001:dba::10" }, // nobody
          { name: "v4-in-v6", address: "::ffff:10.1.2.99" }, // an IPv6 address: IPv4 ranges do not hold it
        ],
      });
      expect(res.body).toEqual({ created: 5, skipped_existing: 0, filed: { ambiguous: 1, chosen: 1, matched: 1, unmatched: 2 } });
      const byName = Object.fromEntries(
        (await nodesAt("2001:db8:2::10", "2001:db8:1::10", "2001:db9::10", "2001:dba::10", "::ffff:10.1.2.99")).map((n) => [n.name, n.group_id]),
      );
      expect(byName).toEqual({ v6m: f.V, v6c: f.V1, v6a: null, v6u: null, "v4-in-v6": null });
    });

    it("leaves rows with their own group_id alone (not filed, not counted) and does not count skipped rows", async () => {
      await rawQuery(db, "INSERT INTO inventory.nodes (name, address) VALUES ('there', '10.1.3.1')");
      const res = await post({
        file_by_prefix: true,
        group_id: f.inbox,
        nodes: [
          { name: "own", address: "10.1.3.2", group_id: f.C }, // a range of A holds it, but the row names C
          { name: "root", address: "10.1.3.3", group_id: null }, // explicit tree root, even though A's range holds it
          { name: "ranged", address: "10.1.3.4" },
          { name: "skipped", address: "10.1.3.1" }, // exists: skipped, not counted in filed
        ],
      });
      expect(res.body).toEqual({ created: 3, skipped_existing: 1, filed: { ambiguous: 0, chosen: 0, matched: 1, unmatched: 0 } });
      const byName = Object.fromEntries((await nodesAt("10.1.3.2", "10.1.3.3", "10.1.3.4")).map((n) => [n.name, n.group_id]));
      expect(byName).toEqual({ own: f.C, root: null, ranged: f.A });
    });

    it("does not file by range unless asked", async () => {
      const res = await post({ group_id: f.inbox, nodes: [{ name: "nofile", address: "10.1.4.1" }] });
      expect(res.body).toEqual({ created: 1, skipped_existing: 0, filed: null });
      expect((await nodesAt("10.1.4.1"))[0].group_id).toBe(f.inbox);
    });
  });

  describe("three-state row group_id", () => {
    it("absent follows the request, a uuid names a folder, null is the tree root", async () => {
      const res = await post({
        group_id: f.inbox,
        nodes: [
          { name: "absent", address: "172.18.0.1" },
          { name: "folder", address: "172.18.0.2", group_id: f.B },
          { name: "null", address: "172.18.0.3", group_id: null },
        ],
      });
      expect(res.status).toBe(200);
      const byName = Object.fromEntries((await nodesAt("172.18.0.1", "172.18.0.2", "172.18.0.3")).map((n) => [n.name, n.group_id]));
      expect(byName).toEqual({ absent: f.inbox, folder: f.B, null: null });
    });

    it("treats a request group_id of null like an absent one (the tree root)", async () => {
      const res = await post({ group_id: null, nodes: [{ name: "req-null", address: "172.18.0.4" }] });
      expect(res.status).toBe(200);
      expect((await nodesAt("172.18.0.4"))[0].group_id).toBeNull();
    });
  });

  describe("folder scope", () => {
    it("files only into visible folders and lets the caller use its own folders", async () => {
      const token = await k.token("operator", folderScope(f.A));
      const res = await post(
        {
          group_id: f.A1,
          file_by_prefix: true,
          nodes: [
            { name: "s-chosen", address: "10.1.1.77" }, // A and A1 visible: chosen
            { name: "s-hidden-range", address: "10.2.7.7" }, // B and C claim it, but the caller sees neither: unmatched → A1
          ],
        },
        token,
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ created: 2, skipped_existing: 0, filed: { ambiguous: 0, chosen: 1, matched: 0, unmatched: 1 } });
      const byName = Object.fromEntries((await nodesAt("10.1.1.77", "10.2.7.7")).map((n) => [n.name, n.group_id]));
      expect(byName).toEqual({ "s-chosen": f.A1, "s-hidden-range": f.A1 });
    });

    it("refuses 403 out_of_scope when any row is left for the tree root, writing nothing", async () => {
      const token = await k.token("operator", folderScope(f.A));
      const before = await countNodes();
      const cases = [
        // explicit null on one row
        {
          group_id: f.A,
          nodes: [
            { name: "ok", address: "10.1.9.1" },
            { name: "rootbound", address: "10.1.9.2", group_id: null },
          ],
        },
        // no request group_id, no filing
        { nodes: [{ name: "ok", address: "10.1.9.3" }] },
        // filing, but one address is held by no visible range and there is no fallback
        {
          file_by_prefix: true,
          nodes: [
            { name: "ok", address: "10.1.9.4" },
            { name: "nowhere", address: "10.2.9.9" },
          ],
        },
      ];
      for (const body of cases) {
        const res = await post(body, token);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe("out_of_scope");
      }
      expect(await countNodes()).toBe(before);
    });

    it("treats a folder outside the scope like one that does not exist (400)", async () => {
      const token = await k.token("operator", folderScope(f.A));
      for (const body of [
        { group_id: f.B, nodes: [{ name: "x", address: "10.1.9.5" }] },
        { group_id: f.A, nodes: [{ name: "x", address: "10.1.9.5", group_id: f.B }] },
      ]) {
        const res = await post(body, token);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("unknown_reference");
      }
      expect(await nodesAt("10.1.9.5")).toEqual([]);
    });
  });

  describe("validation (400, nothing written)", () => {
    const cases: [string, unknown][] = [
      ["no nodes array", {}],
      ["nodes not an array", { nodes: "x" }],
      ["empty name", { nodes: [{ name: "", address: "10.50.0.1" }] }],
      ["blank name", { nodes: [{ name: "   ", address: "10.50.0.1" }] }],
      ["missing name", { nodes: [{ address: "10.50.0.1" }] }],
      ["missing address", { nodes: [{ name: "x" }] }],
      ["address not an IP", { nodes: [{ name: "x", address: "not-an-ip" }] }],
      ["IPv4 octet out of range", { nodes: [{ name: "x", address: "10.50.0.256" }] }],
      ["a network, not an address", { nodes: [{ name: "x", address: "10.50.0.0/24" }] }],
      ["an IPv6 zone", { nodes: [{ name: "x", address: "fe80::1%eth0" }] }],
      ["leading zeros (ambiguous octal)", { nodes: [{ name: "x", address: "10.50.0.001" }] }],
      ["profile_id not a UUID", { nodes: [{ name: "x", address: "10.50.0.1", profile_id: "generic" }] }],
      ["credential_id not a UUID", { nodes: [{ name: "x", address: "10.50.0.1", credential_id: "v2c" }] }],
      ["row group_id not a UUID", { nodes: [{ name: "x", address: "10.50.0.1", group_id: "inbox" }] }],
      ["request group_id not a UUID", { group_id: "inbox", nodes: [{ name: "x", address: "10.50.0.1" }] }],
      ["unknown field", { nodes: [{ name: "x", address: "10.50.0.1", colour: "red" }] }],
      ["file_by_prefix not a boolean", { file_by_prefix: "yes", nodes: [{ name: "x", address: "10.50.0.1" }] }],
    ];
    it.each(cases)("%s", async (_label, body) => {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(await nodesAt("10.50.0.1")).toEqual([]);
    });

    it("a NUL in a name is refused by the kernel before the import (invalid_characters), writing nothing", async () => {
      const res = await post({ nodes: [{ name: "a\u0000b", address: "10.50.0.1" }] });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_characters");
      expect(await nodesAt("10.50.0.1")).toEqual([]);
    });

    // References to things that do not exist answer the same code as the node routes.
    const references: [string, unknown][] = [
      ["request group_id no folder has", { group_id: randomUUID(), nodes: [{ name: "x", address: "10.50.0.1" }] }],
      ["row group_id no folder has", { nodes: [{ name: "x", address: "10.50.0.1", group_id: randomUUID() }] }],
      ["profile_id no profile has", { nodes: [{ name: "x", address: "10.50.0.1", profile_id: randomUUID() }] }],
      ["credential_id no credential has", { nodes: [{ name: "x", address: "10.50.0.1", credential_id: randomUUID() }] }],
    ];
    it.each(references)("%s (unknown_reference)", async (_label, body) => {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("unknown_reference");
      expect(await nodesAt("10.50.0.1")).toEqual([]);
    });

    it("rolls back the whole request on one bad row among good ones", async () => {
      const before = await countNodes();
      const nodes = Array.from({ length: 50 }, (_, i) => ({ name: `rb-${i}`, address: `10.60.0.${i + 1}` }));
      for (const bad of [{ profile_id: randomUUID() }, { group_id: randomUUID() }, { address: "10.60.0.300" }]) {
        const res = await post({ nodes: [...nodes, { name: "bad", address: "10.60.1.1", ...bad }] });
        expect(res.status).toBe(400);
      }
      expect(await countNodes()).toBe(before);
    });

    it("keeps nothing of earlier batches when a later insert fails inside the transaction", async () => {
      // A trigger refuses one row of the second insert batch (rows 1001+), after the first batch went in.
      await rawQuery(
        db,
        `CREATE FUNCTION inventory.test_refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.name = 'boom' THEN RAISE EXCEPTION 'refused by test'; END IF; RETURN NEW; END $$;
         CREATE TRIGGER test_refuse_boom BEFORE INSERT ON inventory.nodes FOR EACH ROW EXECUTE FUNCTION inventory.test_refuse_boom()`,
      );
      try {
        const before = await countNodes();
        const nodes = Array.from({ length: 1200 }, (_, i) => ({ name: i === 1100 ? "boom" : `bulk-${i}`, address: `10.70.${i >> 8}.${i & 255}` }));
        const res = await post({ nodes });
        expect(res.status).toBe(500);
        expect(res.body.error.message).not.toMatch(/refused by test/);
        expect(await countNodes()).toBe(before);
      } finally {
        await rawQuery(db, "DROP TRIGGER test_refuse_boom ON inventory.nodes; DROP FUNCTION inventory.test_refuse_boom()");
      }
    });
  });

  describe("access", () => {
    it("answers 401 without a token", async () => {
      const res = await k.http.post(IMPORT).send({ nodes: [] });
      expect(res.status).toBe(401);
    });

    it("answers 403 to a role without ManageConfig", async () => {
      const res = await post({ nodes: [{ name: "x", address: "10.50.0.2" }] }, await k.token("viewer"));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("permission_denied");
    });

    it("lets an operator session import", async () => {
      const res = await post({ group_id: f.inbox, nodes: [{ name: "by-session", address: "10.50.0.3" }] }, await k.session("operator"));
      expect(res.status).toBe(200);
      expect(res.body.created).toBe(1);
    });
  });
});

describe("sweep-size cap", () => {
  let small: TestKernel;
  beforeAll(async () => {
    small = await startInventoryKernel({ overrides: { pluginConfig: { inventory: { sweepSize: 5 } } } });
  });
  afterAll(async () => {
    await small?.stop();
  });

  it("refuses more nodes than one sweep (400 too_many_nodes) and takes exactly the cap", async () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `n${i}`, address: `10.80.0.${i + 1}` }));
    const over = await small.http
      .post(IMPORT)
      .set(bearer(small.adminToken))
      .send({ nodes: rows(6) });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe("too_many_nodes");
    expect(await rawQuery(small.databaseUrl!, "SELECT 1 FROM inventory.nodes")).toEqual([]);
    const at = await small.http
      .post(IMPORT)
      .set(bearer(small.adminToken))
      .send({ nodes: rows(5) });
    expect(at.status).toBe(200);
    expect(at.body).toEqual({ created: 5, skipped_existing: 0, filed: null });
  });
});

describe("skeleton mode", () => {
  let sk: TestKernel;
  beforeAll(async () => {
    sk = await startInventoryKernel({ skeleton: true });
  });
  afterAll(async () => {
    await sk?.stop();
  });

  it("answers 503", async () => {
    const res = await sk.http
      .post(IMPORT)
      .set(bearer(sk.adminToken))
      .send({ nodes: [{ name: "x", address: "10.0.0.1" }] });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("store_unavailable");
  });
});
