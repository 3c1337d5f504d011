import { randomUUID } from "node:crypto";
import {
  MAX_NAMED,
  MAX_PARAMS,
  MAX_TEXT,
  namedStatementCount,
  PLAN_CACHE_MODE_OPTION,
  statement,
  withPlanCacheMode,
} from "../../core/store/namedStatements.js";
import { createPool, Store } from "../../core/store/Store.js";
import { createTestDatabase } from "../support/db.js";

/** A statement text no other test has run (the names are per process). */
const fresh = (sql: string) => `${sql} -- ${randomUUID()}`;

describe("named statements on the server", () => {
  it("are parsed once per connection and planned for their parameters on every run (custom plans, never a generic one)", async () => {
    // A pool of one connection, so every run below is on the same server session. (First in this file: the cap test
    // below fills the process's names.)
    const store = new Store(createPool(await createTestDatabase(), () => undefined, 1));
    try {
      expect((await store.query<{ m: string }>("SELECT current_setting('plan_cache_mode') AS m")).rows[0].m).toBe("force_custom_plan");
      await store.query("CREATE TABLE named_probe (id int PRIMARY KEY, v text)");
      await store.query("INSERT INTO named_probe SELECT g, 'v' || g FROM generate_series(1, 1000) g");
      const sql = "SELECT id, v FROM named_probe WHERE ($1::int IS NULL OR id = $1::int) ORDER BY id LIMIT $2";
      statement(sql, [null, 1]);
      const name = statement(sql, [null, 1]).name;
      expect(name).toBeDefined();
      for (let i = 0; i < 12; i++) {
        const { rows } = await store.query<{ id: number }>(sql, [i % 2 ? null : i + 1, 3]);
        expect(rows.map((r) => r.id)).toEqual(i % 2 ? [1, 2, 3] : [i + 1]);
      }
      const { rows } = await store.query<{ name: string; generic_plans: string; custom_plans: string }>(
        "SELECT name, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name = $1",
        [name],
      );
      // Parsed once (one row for the name), planned 12 times for its parameters.
      expect(rows).toEqual([{ name, generic_plans: "0", custom_plans: "12" }]);

      // A migration under a running service: the named statement's `p.*` now has three columns. The server refuses the
      // statement parsed with two; it runs again unnamed, answers with the new shape, and that text is never named again.
      const star = "SELECT p.* FROM named_probe p WHERE p.id = $1";
      await store.query(star, [1]);
      expect((await store.query(star, [2])).rows).toEqual([{ id: 2, v: "v2" }]);
      expect(statement(star, [1]).name).toBeDefined();
      await store.query("ALTER TABLE named_probe ADD COLUMN w int DEFAULT 7");
      expect((await store.query(star, [3])).rows).toEqual([{ id: 3, v: "v3", w: 7 }]);
      expect(statement(star, [1]).name).toBeUndefined();
      expect((await store.query(star, [4])).rows).toEqual([{ id: 4, v: "v4", w: 7 }]);
      // Any other error of a named statement is the caller's, as before.
      await expect(store.query(sql, ["x", 1])).rejects.toMatchObject({ code: "22P02" });
    } finally {
      await store.close();
    }
  });
});

describe("the connections' plan_cache_mode", () => {
  it("is a startup option of the pool, or joins the options DATABASE_URL already has (pg takes the URL's over the pool's)", () => {
    expect(withPlanCacheMode("postgres://u:p%40ss@127.0.0.1:5432/nms")).toEqual({
      connectionString: "postgres://u:p%40ss@127.0.0.1:5432/nms",
      options: PLAN_CACHE_MODE_OPTION,
    });
    const merged = withPlanCacheMode("postgres://u:p%40ss@127.0.0.1:5432/nms?options=-c%20search_path%3Dx&sslmode=disable");
    expect(merged.options).toBeUndefined();
    const url = new URL(merged.connectionString);
    expect(url.searchParams.get("options")).toBe(`-c search_path=x ${PLAN_CACHE_MODE_OPTION}`);
    expect([url.password, url.searchParams.get("sslmode"), url.pathname]).toEqual(["p%40ss", "disable", "/nms"]);
  });
});

describe("named statements (what a statement run again and again is sent as)", () => {
  it("names a text with parameters the second time it is seen, by a hash of the text, and leaves the rest unnamed", () => {
    const sql = fresh("SELECT $1::int AS n");
    expect(statement(sql, [1])).toEqual({ text: sql, values: [1] });
    const second = statement(sql, [2]);
    expect(second.name).toMatch(/^nms_[A-Za-z0-9_-]{24}$/);
    expect(second).toMatchObject({ text: sql, values: [2] });
    expect(statement(sql, [3]).name).toBe(second.name);
    expect(statement(fresh("SELECT $1::int AS n"), [1]).name).toBeUndefined();

    const unnamed = (text: string, params: unknown[]) => [statement(text, params), statement(text, params), statement(text, params)].map((s) => s.name);
    // Without parameters (the simple protocol: a text may hold several statements).
    expect(unnamed(fresh("SELECT 1"), [])).toEqual([undefined, undefined, undefined]);
    // Statements other than SELECT/INSERT/UPDATE/DELETE/WITH.
    expect(unnamed(fresh("SET LOCAL statement_timeout = $1"), [1])).toEqual([undefined, undefined, undefined]);
    expect(unnamed(fresh("CALL p($1)"), [1])).toEqual([undefined, undefined, undefined]);
    // A batch's multi-row VALUES (past MAX_PARAMS parameters) and a text longer than MAX_TEXT.
    const rows = Array.from({ length: MAX_PARAMS + 1 }, (_, i) => `($${i + 1})`).join(", ");
    expect(
      unnamed(
        fresh(`INSERT INTO t (a) VALUES ${rows}`),
        Array.from({ length: MAX_PARAMS + 1 }, () => 1),
      ),
    ).toEqual([undefined, undefined, undefined]);
    expect(unnamed(fresh(`SELECT $1::int AS n${" ".repeat(MAX_TEXT)}`), [1])).toEqual([undefined, undefined, undefined]);
    const cte = fresh("  with x AS (SELECT $1::int) SELECT 1");
    expect([statement(cte, [1]).name, typeof statement(cte, [1]).name]).toEqual([undefined, "string"]);
  });

  it("names at most MAX_NAMED texts per process", () => {
    for (let i = namedStatementCount(); i < MAX_NAMED + 5; i++) {
      const sql = fresh(`SELECT $1::int + ${i}`);
      statement(sql, [1]);
      statement(sql, [1]);
    }
    expect(namedStatementCount()).toBe(MAX_NAMED);
    const sql = fresh("SELECT $1::int");
    expect([statement(sql, [1]).name, statement(sql, [1]).name]).toEqual([undefined, undefined]);
  });
});
