import { randomBytes } from "node:crypto";
import pg from "pg";

export function adminDatabaseUrl(): string {
  const url = process.env.NMS_TEST_ADMIN_DATABASE_URL;
  if (!url) throw new Error("no test PostgreSQL: run the tests through jest (test/support/globalSetup.mjs)");
  return url;
}

/** A new, empty database on the run's server; returns its URL. */
export async function createTestDatabase(prefix = "nms_t"): Promise<string> {
  const admin = adminDatabaseUrl();
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
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
