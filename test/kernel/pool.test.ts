import { closePool, createPool } from "../../core/store/Store.js";
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
