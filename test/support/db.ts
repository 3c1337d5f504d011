import pg from "pg";
import { createDatabase } from "../../core/testing/index.js";

export function adminDatabaseUrl(): string {
  const url = process.env.NMS_TEST_ADMIN_DATABASE_URL;
  if (!url) throw new Error("no test PostgreSQL: run the tests through jest (test/support/globalSetup.mjs)");
  return url;
}

/** A new, empty database on the run's server; returns its URL. */
export function createTestDatabase(prefix = "nms_t"): Promise<string> {
  return createDatabase(adminDatabaseUrl(), prefix);
}

/** Runs one query on a database URL with a short-lived client (raw reads in tests). */
export async function rawQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
