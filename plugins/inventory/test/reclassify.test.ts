import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import type { NodeEvent } from "../contract.js";
import { bearer, folderScope, startInventoryKernel } from "./support.js";

const APPLY = "/api/v1/reclassify/apply";
const PREVIEW = "/api/v1/reclassify/preview";
const CISCO = "1.3.6.1.4.1.9.1.516";

let k: TestKernel;
let db: string;
const p: Record<string, string> = {};
const r: Record<string, string> = {};
const n: Record<string, string> = {};
let S: string;
let T: string;

const one = async (sql: string, params: unknown[] = []) => (await rawQuery<{ id: string }>(db, sql, params))[0].id;

async function node(name: string, group: string | null, profile: string | null, oid: string | null, descr: string | null, locked = false): Promise<string> {
  n[name] = await one(
    `INSERT INTO inventory.nodes (name, address, group_id, profile_id, sys_object_id, sys_descr, profile_locked)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [name, `10.90.0.${Object.keys(n).length + 1}`, group, profile, oid, descr, locked],
  );
  return n[name];
}

const profileOf = async (id: string) =>
  (await rawQuery<{ profile_id: string | null }>(db, "SELECT profile_id FROM inventory.nodes WHERE id = $1", [id]))[0].profile_id;

/** Every preview row, following the cursor with pages of `limit`. */
async function previewAll(token: string, limit: number) {
  const rows: { node_name: string }[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await k.http
      .get(PREVIEW)
      .query({ limit, ...(cursor ? { cursor } : {}) })
      .set(bearer(token));
    expect(res.status).toBe(200);
    expect(res.body.length).toBeLessThanOrEqual(limit);
    rows.push(...res.body);
    cursor = res.headers["x-next-cursor"];
    if (!cursor) return rows;
  }
  throw new Error("the cursor never ended");
}

// Kernels in one process run one at a time: Ts.ED keeps one instance per service, so a second live kernel would reach the first one's store.
describe("reclassify", () => {
  beforeAll(async () => {
    k = await startInventoryKernel();
    db = k.databaseUrl!;
    for (const name of ["P1", "P2", "P3"]) p[name] = await one("INSERT INTO inventory.profiles (name) VALUES ($1) RETURNING id", [name]);
    // A regex rule evaluated first (that a prefix match still beats), a prefix rule, and a later regex rule.
    r.regexFirst = await one("INSERT INTO inventory.classification_rules (priority, profile_id, sysdescr_regex) VALUES (1, $1, 'cisco') RETURNING id", [p.P3]);
    r.cisco = await one("INSERT INTO inventory.classification_rules (priority, profile_id, sysobjectid_prefix) VALUES (10, $1, '1.3.6.1.4.1.9') RETURNING id", [
      p.P2,
    ]);
    r.linux = await one("INSERT INTO inventory.classification_rules (priority, profile_id, sysdescr_regex) VALUES (20, $1, 'linux') RETURNING id", [p.P3]);
    S = await one("INSERT INTO inventory.node_groups (name) VALUES ('scoped') RETURNING id");
    T = await one("INSERT INTO inventory.node_groups (name) VALUES ('elsewhere') RETURNING id");
    await node("a-apply", S, p.P1, CISCO, "Cisco IOS");
    await node("b-nullfrom", S, null, null, "Linux 6.1");
    await node("c-locked", S, p.P1, CISCO, null, true);
    await node("d-same", S, p.P2, CISCO, null);
    await node("e-moved", S, p.P3, CISCO, null);
    await node("f-norule", S, p.P1, "1.3.6.1.4.1.99.1", "FreeBSD");
    await node("g-wrongto", S, p.P1, CISCO, null);
    await node("h-other", T, p.P1, CISCO, null);
    await node("i-root", null, p.P1, CISCO, null);
    await node("j-dup", S, p.P1, CISCO, null);
    await node("k-dup-last-bad", S, p.P1, CISCO, null);
    await node("l-nothing", S, p.P1, null, null);
  });
  afterAll(async () => {
    await k?.stop();
  });

  describe("GET /reclassify/preview", () => {
    it("lists the unlocked nodes whose rules now choose another profile, by name", async () => {
      const res = await k.http.get(PREVIEW).set(bearer(k.adminToken));
      expect(res.status).toBe(200);
      expect(res.headers["x-next-cursor"]).toBeUndefined();
      expect(res.body.map((x: { node_name: string }) => x.node_name)).toEqual([
        "a-apply",
        "b-nullfrom",
        "e-moved",
        "g-wrongto",
        "h-other",
        "i-root",
        "j-dup",
        "k-dup-last-bad",
      ]);
      expect(res.body[0]).toEqual({
        node_id: n["a-apply"],
        node_name: "a-apply",
        from_profile_id: p.P1,
        to_profile_id: p.P2,
        rule_id: r.cisco,
        matched_by: "sysobjectid",
      });
      expect(res.body[1]).toEqual({
        node_id: n["b-nullfrom"],
        node_name: "b-nullfrom",
        from_profile_id: null,
        to_profile_id: p.P3,
        rule_id: r.linux,
        matched_by: "sysdescr",
      });
    });

    it("pages with a keyset cursor", async () => {
      const all = (await previewAll(k.adminToken, 1000)).map((x) => x.node_name);
      expect((await previewAll(k.adminToken, 3)).map((x) => x.node_name)).toEqual(all);
      expect((await previewAll(k.adminToken, 1)).map((x) => x.node_name)).toEqual(all);
    });

    it("shows a folder-scoped caller only the nodes filed in its folders", async () => {
      const token = await k.token("operator", folderScope(S));
      expect((await previewAll(token, 2)).map((x) => x.node_name)).toEqual(["a-apply", "b-nullfrom", "e-moved", "g-wrongto", "j-dup", "k-dup-last-bad"]);
    });

    it("scans past long runs of unchanged nodes to fill a page", async () => {
      // 2500 more nodes that already have the profile their rule chooses, but every 700th: the scan reads several chunks per page.
      await rawQuery(
        db,
        `INSERT INTO inventory.nodes (name, address, group_id, profile_id, sys_object_id)
         SELECT 'zz-' || lpad(i::text, 4, '0'), ('10.91.0.0'::inet + i), $1, CASE WHEN i % 700 = 0 THEN $2::uuid ELSE $3::uuid END, $4
           FROM generate_series(1, 2500) AS i`,
        [T, p.P1, p.P2, CISCO],
      );
      try {
        const names = (await previewAll(k.adminToken, 2)).map((x) => x.node_name);
        expect(names.filter((x) => x.startsWith("zz-"))).toEqual(["zz-0700", "zz-1400", "zz-2100"]);
        expect(names).toEqual((await previewAll(k.adminToken, 1000)).map((x) => x.node_name));
      } finally {
        await rawQuery(db, "DELETE FROM inventory.nodes WHERE name LIKE 'zz-%'");
      }
    });

    it("answers 400 to a bad cursor or limit", async () => {
      for (const query of [{ cursor: "garbage" }, { cursor: Buffer.from(JSON.stringify(["a", "not-a-uuid"])).toString("base64url") }]) {
        const res = await k.http.get(PREVIEW).query(query).set(bearer(k.adminToken));
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("invalid_cursor");
      }
      for (const limit of ["0", "1001", "x"]) {
        const res = await k.http.get(PREVIEW).query({ limit }).set(bearer(k.adminToken));
        expect(res.status).toBe(400);
      }
    });

    it("answers 401 without a token and 403 without ManageConfig", async () => {
      expect((await k.http.get(PREVIEW)).status).toBe(401);
      const res = await k.http.get(PREVIEW).set(bearer(await k.token("viewer")));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("permission_denied");
    });
  });

  describe("POST /reclassify/apply", () => {
    it("applies what still holds and counts every skip reason once per distinct node", async () => {
      const token = await k.token("operator", folderScope(S));
      const events: NodeEvent[] = [];
      const off = k.kernel.context("inventory")!.bus.on("inventory.node.updated", (e) => {
        events.push(e);
      });
      const gone = randomUUID();
      const res = await k.http
        .post(APPLY)
        .set(bearer(token))
        .send({
          items: [
            { node_id: n["a-apply"], from_profile_id: p.P1, to_profile_id: p.P2 }, // applied
            { node_id: n["j-dup"], from_profile_id: p.P1, to_profile_id: p.P3 }, // superseded by its last entry
            { node_id: n["c-locked"], from_profile_id: p.P1, to_profile_id: p.P2 }, // locked
            { node_id: n["e-moved"], from_profile_id: p.P1, to_profile_id: p.P2 }, // changed: the profile moved (P3 now)
            { node_id: n["f-norule"], from_profile_id: p.P1, to_profile_id: p.P2 }, // changed: no rule chooses anything
            { node_id: n["g-wrongto"], from_profile_id: p.P1, to_profile_id: p.P3 }, // changed: the rules choose P2, not P3
            { node_id: n["h-other"], from_profile_id: p.P1, to_profile_id: p.P2 }, // hidden: outside the scope
            { node_id: n["i-root"], from_profile_id: p.P1, to_profile_id: p.P2 }, // hidden: tree root, outside the scope
            { node_id: gone, from_profile_id: null, to_profile_id: p.P2 }, // hidden: no such node
            { node_id: n["k-dup-last-bad"], from_profile_id: p.P1, to_profile_id: p.P2 }, // superseded by its last entry
            { node_id: n["j-dup"], from_profile_id: p.P1, to_profile_id: p.P2 }, // last entry: applied
            { node_id: n["k-dup-last-bad"].toUpperCase(), from_profile_id: p.P2, to_profile_id: p.P2 }, // last entry (same node, other case): changed
          ],
        });
      off();
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ applied: 2, skipped_changed: 4, skipped_hidden: 3, skipped_locked: 1 });
      expect(await profileOf(n["a-apply"])).toBe(p.P2);
      expect(await profileOf(n["j-dup"])).toBe(p.P2);
      for (const untouched of ["c-locked", "f-norule", "g-wrongto", "h-other", "i-root", "k-dup-last-bad"]) expect(await profileOf(n[untouched])).toBe(p.P1);
      expect(await profileOf(n["e-moved"])).toBe(p.P3);
      expect(events.map((e) => e.id).sort()).toEqual([n["a-apply"], n["j-dup"]].sort());
      expect(events.find((e) => e.id === n["a-apply"])).toEqual({
        id: n["a-apply"],
        name: "a-apply",
        address: expect.any(String),
        group_id: S,
        folder_path: [S],
      });
    });

    it("lets an unrestricted caller change nodes anywhere, including the tree root", async () => {
      const res = await k.http
        .post(APPLY)
        .set(bearer(k.adminToken))
        .send({
          items: [
            { node_id: n["h-other"], from_profile_id: p.P1, to_profile_id: p.P2 },
            { node_id: n["i-root"], from_profile_id: p.P1, to_profile_id: p.P2 },
            { node_id: n["b-nullfrom"], from_profile_id: null, to_profile_id: p.P3 },
          ],
        });
      expect(res.body).toEqual({ applied: 3, skipped_changed: 0, skipped_hidden: 0, skipped_locked: 0 });
      expect(await profileOf(n["b-nullfrom"])).toBe(p.P3);
    });

    it("skips a change the rules no longer choose (rule disabled since the preview)", async () => {
      await rawQuery(db, "UPDATE inventory.classification_rules SET enabled = false WHERE id = $1", [r.cisco]);
      try {
        // With the prefix rule off, nothing chooses P2 for g-wrongto (it has no sysDescr for the regex rules).
        const res = await k.http
          .post(APPLY)
          .set(bearer(k.adminToken))
          .send({ items: [{ node_id: n["g-wrongto"], from_profile_id: p.P1, to_profile_id: p.P2 }] });
        expect(res.body).toEqual({ applied: 0, skipped_changed: 1, skipped_hidden: 0, skipped_locked: 0 });
        expect(await profileOf(n["g-wrongto"])).toBe(p.P1);
      } finally {
        await rawQuery(db, "UPDATE inventory.classification_rules SET enabled = true WHERE id = $1", [r.cisco]);
      }
    });

    it("takes 5000 items and refuses 5001 (400)", async () => {
      const items = (count: number) => Array.from({ length: count }, () => ({ node_id: randomUUID(), from_profile_id: null, to_profile_id: p.P2 }));
      const ok = await k.http
        .post(APPLY)
        .set(bearer(k.adminToken))
        .send({ items: items(5000) });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ applied: 0, skipped_changed: 0, skipped_hidden: 5000, skipped_locked: 0 });
      const over = await k.http
        .post(APPLY)
        .set(bearer(k.adminToken))
        .send({ items: items(5001) });
      expect(over.status).toBe(400);
      expect(over.body.error.code).toBe("validation_failed");
    });

    it("answers an empty list with zero counts", async () => {
      const res = await k.http.post(APPLY).set(bearer(k.adminToken)).send({ items: [] });
      expect(res.body).toEqual({ applied: 0, skipped_changed: 0, skipped_hidden: 0, skipped_locked: 0 });
    });

    const bad: [string, unknown][] = [
      ["no items", {}],
      ["node_id not a UUID", { items: [{ node_id: "x", from_profile_id: null, to_profile_id: randomUUID() }] }],
      ["to_profile_id missing", { items: [{ node_id: randomUUID(), from_profile_id: null }] }],
      ["to_profile_id null", { items: [{ node_id: randomUUID(), from_profile_id: null, to_profile_id: null }] }],
      ["from_profile_id missing", { items: [{ node_id: randomUUID(), to_profile_id: randomUUID() }] }],
      ["from_profile_id not a UUID", { items: [{ node_id: randomUUID(), from_profile_id: "P1", to_profile_id: randomUUID() }] }],
      ["unknown field", { items: [{ node_id: randomUUID(), from_profile_id: null, to_profile_id: randomUUID(), force: true }] }],
    ];
    it.each(bad)("answers 400 validation_failed: %s", async (_label, body) => {
      const res = await k.http
        .post(APPLY)
        .set(bearer(k.adminToken))
        .send(body as object);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    });

    it("answers 401 without a token and 403 without ManageConfig", async () => {
      expect((await k.http.post(APPLY).send({ items: [] })).status).toBe(401);
      const res = await k.http
        .post(APPLY)
        .set(bearer(await k.token("viewer")))
        .send({ items: [] });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("permission_denied");
    });
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

  it("answers 503 to apply and preview", async () => {
    const apply = await sk.http.post(APPLY).set(bearer(sk.adminToken)).send({ items: [] });
    expect(apply.status).toBe(503);
    expect(apply.body.error.code).toBe("store_unavailable");
    const preview = await sk.http.get(PREVIEW).set(bearer(sk.adminToken));
    expect(preview.status).toBe(503);
    expect(preview.body.error.code).toBe("store_unavailable");
  });
});
