import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { Logger } from "../logging/Logger.js";
import { ident, schemaName, type Store } from "./Store.js";

/** One ordered migration of a plugin: SQL text, or a function given the transaction's client. */
export interface Migration {
  name: string;
  up: string | ((client: pg.PoolClient) => Promise<void>);
}

/** Reads `NNNN_name.sql` files from a folder next to a plugin module (`new URL("./migrations/", import.meta.url)`). */
export function sqlMigrationsFrom(dir: URL | string): Migration[] {
  const path = typeof dir === "string" ? dir : fileURLToPath(dir);
  if (!existsSync(path)) throw new Error(`migration folder ${path} does not exist`);
  return readdirSync(path)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => ({ name: f.replace(/\.sql$/, ""), up: readFileSync(`${path}/${f}`, "utf8") }));
}

function checksum(m: Migration): string {
  return createHash("sha256")
    .update(typeof m.up === "string" ? m.up : m.up.toString())
    .digest("hex");
}

export class MigrationError extends Error {}

/**
 * Applies a plugin's pending migrations inside its own schema, all in one
 * transaction under an advisory lock (so replicas booting together take turns),
 * recording each in core.migrations. An applied migration whose text changed
 * stops the boot: history is never rewritten silently.
 */
export async function migratePlugin(store: Store, pluginId: string, migrations: Migration[], log: Logger): Promise<string[]> {
  const schema = schemaName(pluginId);
  const names = new Set<string>();
  for (const m of migrations) {
    if (names.has(m.name)) throw new MigrationError(`plugin "${pluginId}": migration "${m.name}" is listed twice`);
    names.add(m.name);
  }
  return store.tx(async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('nms.migrations'))");
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
    await ensureLedger(client);
    const done = await client.query<{ name: string; checksum: string }>("SELECT name, checksum FROM core.migrations WHERE plugin = $1", [pluginId]);
    const applied = new Map(done.rows.map((r) => [r.name, r.checksum]));
    const ran: string[] = [];
    await client.query(`SET LOCAL search_path TO ${ident(schema)}, public`);
    for (const m of migrations) {
      const sum = checksum(m);
      const prior = applied.get(m.name);
      if (prior !== undefined) {
        if (prior !== sum) throw new MigrationError(`plugin "${pluginId}": applied migration "${m.name}" has changed since it ran`);
        continue;
      }
      try {
        if (typeof m.up === "string") await client.query(m.up);
        else await m.up(client);
      } catch (err) {
        throw new MigrationError(`plugin "${pluginId}": migration "${m.name}" failed: ${(err as Error).message}`);
      }
      await client.query("INSERT INTO core.migrations (plugin, name, checksum) VALUES ($1, $2, $3)", [pluginId, m.name, sum]);
      ran.push(m.name);
    }
    await client.query("SET LOCAL search_path TO DEFAULT");
    if (ran.length) log.info("migrations applied", { plugin: pluginId, migrations: ran });
    return ran;
  });
}

async function ensureLedger(client: pg.PoolClient): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS core`);
  await client.query(`CREATE TABLE IF NOT EXISTS core.migrations (
    plugin text NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (plugin, name)
  )`);
}
