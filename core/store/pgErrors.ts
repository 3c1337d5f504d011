/**
 * PostgreSQL errors a service turns into envelope errors: the SQLSTATE codes it reacts to, by
 * name, and readers of the fields `pg` puts on a failed query's error (`code`, `constraint`).
 * https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
export const PG_ERROR = {
  /** 23001: a row still referenced through an ON DELETE RESTRICT foreign key. */
  restrictViolation: "23001",
  /** 23503: a foreign key names no row, or a deleted row is still referenced. */
  foreignKeyViolation: "23503",
  /** 23505: a unique index already holds the value. */
  uniqueViolation: "23505",
  /** 23514: a CHECK constraint refused the row (also: no partition takes the row). */
  checkViolation: "23514",
  /** 22P02: text that does not read as the column's type (a uuid, inet or number cast). */
  invalidTextRepresentation: "22P02",
  /** 2201B: a regular expression that does not compile. */
  invalidRegularExpression: "2201B",
  /** 57014: the statement was cancelled (statement_timeout). */
  queryCanceled: "57014",
} as const;

export type PgErrorCode = (typeof PG_ERROR)[keyof typeof PG_ERROR];

function field(err: unknown, name: "code" | "constraint"): string | undefined {
  if (err === null || typeof err !== "object") return undefined;
  const value = (err as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/** The SQLSTATE of a failed query (the error's string `code`), or undefined when it carries none. */
export function pgErrorCode(err: unknown): string | undefined {
  return field(err, "code");
}

/** Whether `err` is a PostgreSQL error with one of these SQLSTATEs. */
export function isPgError(err: unknown, ...codes: readonly string[]): boolean {
  const code = pgErrorCode(err);
  return code !== undefined && codes.includes(code);
}

/** The name of the constraint a PostgreSQL error names (unique, foreign key, check), if any. */
export function pgConstraint(err: unknown): string | undefined {
  return field(err, "constraint");
}
