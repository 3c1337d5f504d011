import { createHash } from "node:crypto";
import type pg from "pg";
import { isPgError, PG_ERROR } from "./pgErrors.js";

/**
 * Named (prepared) statements for the SQL the service runs again and again (issue 29): PostgreSQL then parses,
 * analyses and rewrites a statement once per connection instead of on every run; 0.82 → 0.68 ms of the server's CPU
 * for the node list page, about a seventh of the database's CPU per request of the API's mix (docs/performance.md).
 *
 * Every connection of createPool runs with plan_cache_mode = force_custom_plan (PLAN_CACHE_MODE_OPTION), so a named
 * statement is still planned for its parameters on every run, as an unnamed one is: the lists' optional filters
 * (`$1 IS NULL OR …`) fold away only then, and a generic plan of the node list took 10 ms where its custom plan takes 0.5.
 * What a name saves is the parse and rewrite, never a plan.
 *
 * Only a statement with parameters that was seen twice gets a name (a text with values written into it is seldom run
 * twice and stays unnamed), at most MAX_NAMED texts per process, each named by a hash of its text. Left unnamed:
 * statements without parameters (run in the simple protocol, where a text may hold several statements), anything but
 * SELECT, INSERT, UPDATE, DELETE and WITH. A prepared statement's result columns are fixed when it is parsed: one whose
 * `SELECT t.*` changed shape under it (a migration while the service runs) is refused by the server ("cached plan must
 * not change result type"); runNamed then runs it once more unnamed, and that text is never named again. Also left unnamed: texts longer than MAX_TEXT or with more than MAX_PARAMS parameters (a batch's
 * multi-row VALUES: its parse tree is large, held by every connection that ran it, and parsing is a small part of it).
 */

/** Most texts this process names: each costs every connection that ran it a parsed statement. */
export const MAX_NAMED = 256;

/** Texts seen once and not yet named are forgotten past this many (bounded memory whatever SQL is built). */
const MAX_SEEN = 1024;

/** The longest text and the most parameters a named statement may have (the API's list pages: 1–4 kB, up to 15). */
export const MAX_TEXT = 16_384;
export const MAX_PARAMS = 64;

/** The startup option of createPool's connections: every named statement planned for its parameters, as an unnamed one is. */
export const PLAN_CACHE_MODE_OPTION = "-c plan_cache_mode=force_custom_plan";

/**
 * pg's connection settings for `url` with PLAN_CACHE_MODE_OPTION among the server options sent at connect: added to the
 * URL's own `options` when it has some (pg takes the URL's over the pool's), else as the pool's.
 */
export function withPlanCacheMode(url: string): { connectionString: string; options?: string } {
  try {
    const u = new URL(url);
    const own = u.searchParams.get("options");
    if (own !== null) {
      u.searchParams.set("options", `${own} ${PLAN_CACHE_MODE_OPTION}`.trim());
      return { connectionString: u.toString() };
    }
  } catch {
    // not a URL: pg reads it as it is
  }
  return { connectionString: url, options: PLAN_CACHE_MODE_OPTION };
}

const NAMEABLE = /^\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;

const names = new Map<string, string>();
const seen = new Set<string>();
/** Texts whose named statement the server refused (its result columns changed): unnamed from then on. */
const refused = new Set<string>();

/** The query to hand to pg for `sql` and `params`: a named statement once the text has earned a name, else as it is. */
export function statement(sql: string, params: unknown[]): pg.QueryConfig {
  const name = params.length && params.length <= MAX_PARAMS && sql.length <= MAX_TEXT ? nameOf(sql) : undefined;
  return name ? { name, text: sql, values: params } : { text: sql, values: params };
}

function nameOf(sql: string): string | undefined {
  const known = names.get(sql);
  if (known !== undefined || names.size >= MAX_NAMED) return known;
  if (!seen.has(sql)) {
    if (!NAMEABLE.test(sql) || refused.has(sql)) return undefined;
    if (seen.size >= MAX_SEEN) seen.clear();
    seen.add(sql);
    return undefined;
  }
  seen.delete(sql);
  const name = `nms_${createHash("sha256").update(sql).digest("base64url").slice(0, 24)}`;
  names.set(sql, name);
  return name;
}

/**
 * Runs `sql` through `run` as statement() gives it; when the server refuses the named statement because its result
 * columns changed since the connection parsed it, runs it again unnamed (nothing ran: the refusal comes before
 * execution) and never names that text again. `run` must not be inside a transaction (the refusal would abort it).
 */
export async function runNamed<T>(sql: string, params: unknown[], run: (q: pg.QueryConfig) => Promise<T>): Promise<T> {
  const q = statement(sql, params);
  if (!q.name) return run(q);
  try {
    return await run(q);
  } catch (err) {
    if (!resultChanged(err)) throw err;
    names.delete(sql);
    if (refused.size < MAX_SEEN) refused.add(sql);
    return run({ text: sql, values: params });
  }
}

/** The server's refusal of a prepared statement whose result columns changed (0A000, which covers other refusals too). */
function resultChanged(err: unknown): boolean {
  return isPgError(err, PG_ERROR.featureNotSupported) && (err as Error).message.includes("must not change result type");
}

/** How many texts this process has named (for the tests). */
export function namedStatementCount(): number {
  return names.size;
}
