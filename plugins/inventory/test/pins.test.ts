import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { bearer, folderScope, startInventoryKernel } from "./support.js";

let k: TestKernel;

async function folder(name: string, parent: string | null = null): Promise<string> {
  const rows = await rawQuery<{ id: string }>(k.databaseUrl!, "INSERT INTO inventory.node_groups (name, parent_id) VALUES ($1, $2) RETURNING id", [
    name,
    parent,
  ]);
  return rows[0].id;
}

const pin = (id: string, token: string) => k.http.put(`/api/v1/pins/groups/${id}`).set(bearer(token));
const unpin = (id: string, token: string) => k.http.delete(`/api/v1/pins/groups/${id}`).set(bearer(token));
const pins = (token: string) => k.http.get("/api/v1/pins").set(bearer(token));

async function storedPins(token: string): Promise<string[]> {
  const me = await k.http.get("/api/v1/auth/me").set(bearer(token));
  const rows = await rawQuery<{ group_id: string }>(
    k.databaseUrl!,
    "SELECT p.group_id FROM inventory.pins p JOIN core.accounts a ON a.id = p.account_id WHERE a.username = $1 ORDER BY p.created_at",
    [me.body.username],
  );
  return rows.map((r) => r.group_id);
}

// Two kernels in one process share Ts.ED's injector: the skeleton kernel starts only after this one stopped.
describe("full mode (pinLimit 2)", () => {
  beforeAll(async () => {
    k = await startInventoryKernel({ overrides: { pluginConfig: { inventory: { pinLimit: 2 } } } });
  });
  afterAll(() => k?.stop());

  describe("PUT /pins/groups/{group_id}", () => {
    it("pins a folder for any person, a viewer included (200 {ok: true}); repeating is not an error and stores one pin", async () => {
      const session = await k.session("viewer");
      const id = await folder("pin-me");
      const first = await pin(id, session);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ ok: true });
      const again = await pin(id, session);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ok: true });
      expect(await storedPins(session)).toEqual([id]);
    });

    it("refuses a third pin with 409 pin_limit at a cap of 2; repinning a held folder at the cap still answers 200", async () => {
      const session = await k.session("operator");
      const [a, b, c] = [await folder("cap-a"), await folder("cap-b"), await folder("cap-c")];
      expect((await pin(a, session)).status).toBe(200);
      expect((await pin(b, session)).status).toBe(200);
      const third = await pin(c, session);
      expect(third.status).toBe(409);
      expect(third.body.error.code).toBe("pin_limit");
      expect((await pin(a, session)).status).toBe(200);
      expect(await storedPins(session)).toEqual([a, b]);
      // Unpinning frees a place.
      expect((await unpin(b, session)).status).toBe(204);
      expect((await pin(c, session)).status).toBe(200);
      expect(await storedPins(session)).toEqual([a, c]);
    });

    it("counts pins per account: another person has a cap of their own", async () => {
      const one = await k.session("viewer");
      const two = await k.session("viewer");
      const [a, b] = [await folder("per-a"), await folder("per-b")];
      for (const s of [one, two]) {
        expect((await pin(a, s)).status).toBe(200);
        expect((await pin(b, s)).status).toBe(200);
      }
    });

    it("answers 404 for a folder that does not exist or that the person's scope hides", async () => {
      const inside = await folder("scope-in");
      const below = await folder("scope-in-below", inside);
      const outside = await folder("scope-out");
      const scoped = await k.session("viewer", folderScope(inside));
      expect((await pin(randomUUID(), scoped)).status).toBe(404);
      const hidden = await pin(outside, scoped);
      expect(hidden.status).toBe(404);
      expect(hidden.body.error.code).toBe("not_found");
      expect((await pin(below, scoped)).status).toBe(200);
      expect(await storedPins(scoped)).toEqual([below]);
    });

    it("answers 404 when the session's account is gone by the time the pin is written", async () => {
      const session = await k.session("viewer");
      const id = await folder("account-gone");
      // The account is deleted between authentication and the write: a trigger does it inside the pin's transaction.
      await rawQuery(
        k.databaseUrl!,
        `CREATE FUNCTION inventory.test_drop_account() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN DELETE FROM core.accounts WHERE id = NEW.account_id; RETURN NEW; END $$`,
      );
      await rawQuery(
        k.databaseUrl!,
        `CREATE TRIGGER test_drop_account BEFORE INSERT ON inventory.pins FOR EACH ROW
         WHEN (NEW.group_id = '${id}'::uuid) EXECUTE FUNCTION inventory.test_drop_account()`,
      );
      try {
        const res = await pin(id, session);
        expect(res.status).toBe(404);
        expect(res.body.error.message).not.toMatch(/violat|constraint|pins_/i);
      } finally {
        await rawQuery(k.databaseUrl!, "DROP TRIGGER test_drop_account ON inventory.pins; DROP FUNCTION inventory.test_drop_account()");
      }
      // Nothing was kept (the whole pin, the trigger's delete included, rolled back).
      expect(await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.pins WHERE group_id = $1", [id])).toEqual([]);
    });

    it("answers 400 for a malformed id", async () => {
      const res = await pin("not-a-uuid", await k.session("viewer"));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    });

    it("refuses an API token with 403 person_required, and no token with 401", async () => {
      const id = await folder("token-pin");
      for (const token of [k.adminToken, await k.token("viewer")]) {
        const res = await pin(id, token);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe("person_required");
      }
      expect((await k.http.put(`/api/v1/pins/groups/${id}`)).status).toBe(401);
      expect(await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.pins WHERE group_id = $1", [id])).toEqual([]);
    });
  });

  describe("DELETE /pins/groups/{group_id}", () => {
    it("unpins (204); unpinning a folder not pinned is not an error (204)", async () => {
      const session = await k.session("viewer");
      const id = await folder("unpin-me");
      await pin(id, session);
      const res = await unpin(id, session);
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      expect(await storedPins(session)).toEqual([]);
      expect((await unpin(id, session)).status).toBe(204);
    });

    it("answers 404 for a folder that does not exist or that the scope hides (when not pinned), 400 for a malformed id", async () => {
      const inside = await folder("unpin-scope-in");
      const outside = await folder("unpin-scope-out");
      const scoped = await k.session("viewer", folderScope(inside));
      expect((await unpin(randomUUID(), scoped)).status).toBe(404);
      expect((await unpin(outside, scoped)).status).toBe(404);
      expect((await unpin("nope", scoped)).status).toBe(400);
    });

    it("refuses an API token with 403 person_required, and no token with 401", async () => {
      const id = await folder("token-unpin");
      const res = await unpin(id, await k.token("admin"));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("person_required");
      expect((await k.http.delete(`/api/v1/pins/groups/${id}`)).status).toBe(401);
    });
  });

  describe("GET /pins", () => {
    it("lists the person's pinned folders (id and name) by name; nobody else's", async () => {
      const session = await k.session("viewer");
      const other = await k.session("viewer");
      const [z, a] = [await folder("Zeta pinned"), await folder("alpha pinned")];
      await pin(z, session);
      await pin(a, session);
      await pin(z, other);
      const res = await pins(session);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([
        { id: a, name: "alpha pinned" },
        { id: z, name: "Zeta pinned" },
      ]);
      expect((await pins(other)).body).toEqual([{ id: z, name: "Zeta pinned" }]);
      expect((await pins(await k.session("viewer"))).body).toEqual([]);
    });

    it("shows and counts only the folders the scope still shows (a pin left on a hidden folder neither shows nor counts)", async () => {
      const inside = await folder("vis-in");
      const [x, y] = [await folder("vis-x", inside), await folder("vis-y", inside)];
      const hidden = await folder("vis-hidden");
      const session = await k.session("viewer", folderScope(inside));
      // As if the account's scope had been narrowed after it pinned `hidden`.
      const me = await k.http.get("/api/v1/auth/me").set(bearer(session));
      await rawQuery(k.databaseUrl!, "INSERT INTO inventory.pins (account_id, group_id) SELECT id, $2 FROM core.accounts WHERE username = $1", [
        me.body.username,
        hidden,
      ]);
      expect(await storedPins(session)).toContain(hidden);
      expect((await pin(x, session)).status).toBe(200);
      expect((await pin(y, session)).status).toBe(200);
      expect((await pins(session)).body.map((p: { id: string }) => p.id).sort()).toEqual([x, y].sort());
      // Unpinning a hidden folder the person had pinned removes the pin.
      expect((await unpin(hidden, session)).status).toBe(204);
      expect(await storedPins(session)).not.toContain(hidden);
    });

    it("refuses an API token with 403 person_required, and no token with 401", async () => {
      const res = await pins(await k.token("viewer"));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("person_required");
      expect((await k.http.get("/api/v1/pins")).status).toBe(401);
    });
  });

  describe("the tree", () => {
    it("marks the person's pinned folders; an API token sees none pinned", async () => {
      const top = await folder(`tree-pin-${randomUUID()}`);
      const child = await folder("tree-pin-child", top);
      const session = await k.session("viewer");
      await pin(child, session);
      const find = (body: { id: string; pinned: boolean; children: unknown[] }[]) => body.find((f) => f.id === top)!;
      const asPerson = find((await k.http.get("/api/v1/node-groups/tree").set(bearer(session))).body);
      expect(asPerson.pinned).toBe(false);
      expect(asPerson.children).toEqual([expect.objectContaining({ id: child, pinned: true })]);
      const asToken = find((await k.http.get("/api/v1/node-groups/tree").set(bearer(await k.token("viewer")))).body);
      expect(asToken.children).toEqual([expect.objectContaining({ id: child, pinned: false })]);
    });
  });
});

describe("skeleton mode", () => {
  let s: TestKernel;
  beforeAll(async () => {
    s = await startInventoryKernel({ skeleton: true });
  });
  afterAll(() => s?.stop());

  // Without a store there is no write side (spec: 503) — answered before the person check, so even the
  // bootstrap API token learns the real reason; no token is still 401.
  it("answers 503 store_unavailable without a store, and 401 without a token", async () => {
    const id = randomUUID();
    for (const res of [
      await s.http.put(`/api/v1/pins/groups/${id}`).set(bearer(s.adminToken)),
      await s.http.delete(`/api/v1/pins/groups/${id}`).set(bearer(s.adminToken)),
      await s.http.get("/api/v1/pins").set(bearer(s.adminToken)),
    ]) {
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("store_unavailable");
    }
    expect((await s.http.put(`/api/v1/pins/groups/${id}`)).status).toBe(401);
    expect((await s.http.get("/api/v1/pins").set(bearer("made-up-session-token"))).status).toBe(401);
  });
});
