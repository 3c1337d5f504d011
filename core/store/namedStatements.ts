import { createHash } from "node:crypto";
import type pg from "pg";

/**
 * Named (prepared) statements for the SQL the service runs again and again (issue 29): PostgreSQL then parses,
 * analyses and rewrites a statement once per connection instead of on every run; 0.82 → 0.68 ms of the server's CPU
 * for the node list page, about a seventh of the database's CPU per request of the API's mix (docs/performance.md).
 *
 * Every connection of createPool runs with plan_cache_mode = force_custom_plan (PLAN_CACHE_MODE_SQL), so a named
 * statement is still planned for its parameters on every run, as an unnamed one is: the lists' optional filters
 * (`$1 IS NULL OR …`) fold away only then, and a generic plan of the node list took 10 ms where its custom plan takes 0.5.
 * What a name saves is the parse and rewrite, never a plan.
 *
 * Only a statement with parameters that was seen twice gets a name (a text with values written into it is seldom run
 * twice and stays unnamed), at most MAX_NAMED texts per process, each named by a hash of its text. Left unnamed:
 * statements without parameters (run in the simple protocol, where a text may hold several statements), anything but
 * SELECT, INSERT, UPDATE, DELETE and WITH, and any text with a `*`: a prepared statement's result columns are fixed
 * when it is parsed, and one whose `SELECT *` or `RETURNING *` changed shape after a migration would fail until its
 * connection closed.
 */

/** Most texts this process names: each costs every connection that ran it a parsed statement. */
export const MAX_NAMED = 256;

/** Texts seen once and not yet named are forgotten past this many (bounded memory whatever SQL is built). */
const MAX_SEEN = 4096;

/** What createPool's connections run first: every named statement planned for its parameters, as an unnamed one is. */
export const PLAN_CACHE_MODE_SQL = "SET plan_cache_mode = force_custom_plan";

const NAMEABLE = /^\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;

const names = new Map<string, string>();
const seen = new Set<string>();

/** The query to hand to pg for `sql` and `params`: a named statement once the text has earned a name, else as it is. */
export function statement(sql: string, params: unknown[]): pg.QueryConfig {
  const name = params.length ? nameOf(sql) : undefined;
  return name ? { name, text: sql, values: params } : { text: sql, values: params };
}

function nameOf(sql: string): string | undefined {
  const known = names.get(sql);
  if (known !== undefined || names.size >= MAX_NAMED) return known;
  if (!seen.has(sql)) {
    if (!NAMEABLE.test(sql) || sql.includes("*")) return undefined;
    if (seen.size >= MAX_SEEN) seen.clear();
    seen.add(sql);
    return undefined;
  }
  seen.delete(sql);
  const name = `nms_${createHash("sha256").update(sql).digest("base64url").slice(0, 24)}`;
  names.set(sql, name);
  return name;
}

/** How many texts this process has named (for tests and the metrics). */
export function namedStatementCount(): number {
  return names.size;
}
