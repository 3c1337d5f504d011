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
  /** 0A000: also a prepared statement whose result columns changed since it was parsed ("cached plan must not change result type"). */
  featureNotSupported: "0A000",
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

/** A PostgreSQL error (or a driver error wrapping one through `cause`), unwrapped: the object that carries the SQLSTATE. */
export function findPgError(err: unknown): (Error & { code: string; detail?: string; severity?: string }) | undefined {
  let current: unknown = err;
  for (let i = 0; i < 4 && current && typeof current === "object"; i++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && typeof (current as { severity?: unknown }).severity === "string") {
      return current as Error & { code: string; detail?: string; severity?: string };
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Driver-level errors that mean the database cannot be reached right now (not a bad request, not a bug). */
const CONNECTION_ERRNO = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "ENOENT"]);
const CONNECTION_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end|the database system is (starting up|shutting down|in recovery mode)/i;

/** Whether `err` says the database is unreachable (refused, dropped, shutting down, out of connections). */
export function isStoreUnreachable(err: unknown): boolean {
  const pg = findPgError(err);
  if (pg) return pg.code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(pg.code);
  let current: unknown = err;
  for (let i = 0; i < 4 && current && typeof current === "object"; i++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === "string" && CONNECTION_ERRNO.has(code) && typeof (current as { syscall?: unknown }).syscall === "string") return true;
    if (typeof message === "string" && CONNECTION_MESSAGE.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The one map from PostgreSQL errors that user input can provoke to envelope errors.
 * A service that knows better (a named unique index → its own `name_taken`) catches
 * first; whatever still reaches the error filter lands here. Undefined: a bug (500).
 */
export function pgErrorEnvelope(err: unknown): { status: number; code: string; message: string } | undefined {
  if (isStoreUnreachable(err)) {
    return { status: 503, code: "store_unavailable", message: "The database is unreachable right now; try again shortly." };
  }
  const pg = findPgError(err);
  if (!pg) return undefined;
  switch (pg.code) {
    case "22P02":
    case "22007":
    case "22008":
    case "22023":
    case "22004":
      return { status: 400, code: "invalid_value", message: "A value does not read as its field's type." };
    case "22003":
      return { status: 400, code: "value_out_of_range", message: "A number is outside the range its field stores." };
    case "22001":
    case "54000":
      return { status: 400, code: "value_too_long", message: "A value is longer than its field stores." };
    case "22021":
    case "22P05":
      return { status: 400, code: "invalid_characters", message: "A value contains characters this service does not store." };
    case PG_ERROR.invalidRegularExpression:
      return { status: 400, code: "invalid_regex", message: "A regular expression does not compile." };
    case PG_ERROR.uniqueViolation:
      return { status: 409, code: "already_exists", message: "An item with the same unique value already exists." };
    case PG_ERROR.foreignKeyViolation:
      return /still referenced/.test(pg.detail ?? "")
        ? { status: 409, code: "in_use", message: "The item is still referenced by others; remove those first." }
        : { status: 400, code: "unknown_reference", message: "The request refers to an item that does not exist." };
    case PG_ERROR.restrictViolation:
      return { status: 409, code: "in_use", message: "The item is still referenced by others; remove those first." };
    case "23502":
      return { status: 400, code: "validation_failed", message: "A required value is missing." };
    case PG_ERROR.checkViolation:
      return { status: 400, code: "invalid_value", message: "A value is outside what its field accepts." };
    case PG_ERROR.queryCanceled:
      return { status: 503, code: "query_timeout", message: "The database did not answer in time; narrow the request or try again." };
    default:
      return undefined;
  }
}
