import pg from "pg";
import { PG_ERROR } from "../../core/store/pgErrors.js";
import { closePool, createPool, Store, timedSibling } from "../../core/store/Store.js";
import { createTestDatabase } from "../support/db.js";

describe("closing a pool", () => {
  it("ends even when a client was checked out and never given back, and closes its connections", async () => {
    const errors: Error[] = [];
    const pool = createPool(await createTestDatabase(), (err) => errors.push(err), 3);
    const leaked = await pool.connect();
    await leaked.query("SELECT 1");
    const idle = await pool.connect();
    idle.release();
    const started = Date.now();
    await closePool(pool, 300);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(pool.totalCount).toBe(0);
    await expect(leaked.query("SELECT 1")).rejects.toThrow();
    expect(errors).toEqual([]);
  });
});

describe("time-limited reads (timedQuery)", () => {
  it("run as one statement on a sibling pool whose connections got statement_timeout at connect; the shared pool keeps none", async () => {
    const store = new Store(createPool(await createTestDatabase(), () => undefined, 3));
    try {
      const statements: string[] = [];
      const shared = store.pool!;
      shared.on("acquire", () => statements.push("shared pool checkout"));
      const { rows } = await store.timedQuery<{ t: string; n: number }>(250, "SELECT current_setting('statement_timeout') AS t, $1::int + 1 AS n", ["41"]);
      expect(rows[0]).toEqual({ t: "250ms", n: 42 });
      // Over the limit: the server cancels it (57014, what the events routes answer 503 query_timeout for).
      await expect(store.timedQuery(250, "SELECT pg_sleep(2)")).rejects.toMatchObject({ code: PG_ERROR.queryCanceled });
      // The sibling is not the shared pool: its connections run without a limit.
      expect(statements).toEqual([]);
      expect((await store.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t")).rows[0].t).toBe("0");
      const sibling = timedSibling(shared, 250)!;
      expect(sibling).not.toBe(shared);
      expect(timedSibling(shared, 250)).toBe(sibling);
      await store.close();
      // Closing the pool ended its sibling too.
      expect(sibling.totalCount).toBe(0);
      expect(sibling.ending || sibling.ended).toBe(true);
    } finally {
      await store.close().catch(() => undefined);
    }
  });

  it("a pool createPool did not make has no sibling: the read is a transaction with SET LOCAL, the same limit", async () => {
    const pool = new pg.Pool({ connectionString: await createTestDatabase(), max: 2 });
    const store = new Store(pool);
    try {
      expect(timedSibling(pool, 250)).toBeNull();
      expect((await store.timedQuery<{ t: string }>(250, "SELECT current_setting('statement_timeout') AS t")).rows[0].t).toBe("250ms");
      await expect(store.timedQuery(250, "SELECT pg_sleep(2)")).rejects.toMatchObject({ code: PG_ERROR.queryCanceled });
      expect((await store.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t")).rows[0].t).toBe("0");
    } finally {
      await pool.end();
    }
  });
});
