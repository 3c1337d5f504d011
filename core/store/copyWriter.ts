/**
 * Bulk writes with COPY (text format), and a writer that keeps the rows PostgreSQL refuses as dead letters instead of
 * failing the batch.
 *
 * `copyRows` encodes a batch into one COPY text document in one pass (no array per column; one precompiled regex test
 * per text value and a replace only when it needs escaping: the house style of arrayLiteral.ts) and sends it in one
 * write as one `COPY … FROM STDIN` (pg-copy-streams).
 *
 * `copyWithDeadLetters` runs inside a transaction the caller opened (the caller adds its own statements to it, e.g. the
 * journal offsets the batch covers, so that both commit or neither does). It copies the batch under a SAVEPOINT; when
 * PostgreSQL refuses it with a data error (SQLSTATE class 22 or 23, or 54000: an index row too large and the like, see
 * `isRowDataError`) it rolls back to the savepoint and halves the batch, recursively, each half under a savepoint of
 * its own, until the refused rows stand alone; each is written to `core.dead_letters` (SQLSTATE, PostgreSQL's message,
 * the row as JSON) and the rest is stored. Any other error is rethrown unchanged, and the transaction is left aborted on
 * purpose: a COMMIT then rolls back, so the caller's offsets can never be committed without the rows.
 */
import { copyText } from "./copyText.js";
import copyStreams from "pg-copy-streams";
import type pg from "pg";
import type { MetricCounter } from "../metrics/PluginMetrics.js";
import { findPgError } from "./pgErrors.js";
import { ident, type Queryable } from "./Store.js";

/** The JavaScript value each column type takes (null or undefined is SQL NULL for every type). */
export interface CopyValueTypes {
  text: string;
  uuid: string;
  /** int2, int4, int8 columns; a bigint for values beyond 2^53. A non-integer is refused by PostgreSQL (a dead letter). */
  int: number | bigint;
  /** float4, float8 (and numeric) columns; NaN, ±Infinity and -0 as PostgreSQL spells them. */
  float: number;
  bool: boolean;
  /**
   * A timestamptz from epoch milliseconds (a fraction is truncated), sent as RFC 3339 UTC text (`…T…123Z`), so the
   * session's TimeZone plays no part. Years 1 to 9999; anything else (NaN, out of range) is refused (a dead letter).
   */
  timestamptz_ms: number;
  inet: string;
  /** Any JSON-serialisable value, through JSON.stringify; null or undefined is SQL NULL (not the JSON null). */
  jsonb: unknown;
  "text[]": readonly (string | null | undefined)[];
  "uuid[]": readonly (string | null | undefined)[];
}

export type CopyType = keyof CopyValueTypes;

/** One column of a COPY: its name in the table (unquoted: quoted here), its type, and how to read it from a row. */
export type CopyColumn<R> = {
  [T in CopyType]: { name: string; type: T; get(row: R): CopyValueTypes[T] | null | undefined };
}[CopyType];

/** What `copyWithDeadLetters` writes to. */
export interface CopySpec<R> {
  /** The table, already quoted and schema-qualified (`ctx.store.table("events")`). */
  table: string;
  columns: readonly CopyColumn<R>[];
  /** The name dead letters and the counter carry; default `table` without its quotes (`events.events`). */
  target?: string;
}

export interface CopyWithDeadLettersOptions {
  /** Counts dead letters by target (e.g. a plugin's `ctx.metrics.counter({ name: "dead_letters_total", labelNames: ["target"] })`). */
  counter?: MetricCounter<"target">;
  /** Where dead letters go (quoted, qualified); default `core.dead_letters`. */
  deadLetterTable?: string;
}

export interface CopyOutcome {
  /** Rows stored. */
  stored: number;
  /** Rows refused and kept in the dead-letter table. */
  deadLettered: number;
}

/** The kernel's dead-letter table (core migration 0004_dead_letters). */
export const DEAD_LETTER_TABLE = "core.dead_letters";

// ---- COPY text encoding ---------------------------------------------------------------------------------------------

const NULL = "\\N";
/** Characters COPY text format needs escaped in a value: the escape itself, the delimiter (tab), the row ends. */
/**
 * Inside a quoted array element: `\` and `"` need a backslash at the array level, and every backslash (those added
 * included) is doubled again for COPY; tab, newline and carriage return are fine inside quotes but not in COPY text.
 */
const ELEMENT_SPECIAL = /[\\"\t\n\r]/;
const ELEMENT_SPECIAL_ALL = /[\\"\t\n\r]/g;
const ELEMENT_ESCAPES: Record<string, string> = { "\\": "\\\\\\\\", '"': '\\\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r" };
const elementEscape = (c: string) => ELEMENT_ESCAPES[c];

/** Epoch milliseconds of 0001-01-01T00:00:00Z and of 9999-12-31T23:59:59.999Z: the years toISOString writes as PostgreSQL reads them. */
const MIN_ISO_MS = -62135596800000;
const MAX_ISO_MS = 253402300799999;

function isoMs(ms: number): string | undefined {
  return ms >= MIN_ISO_MS && ms <= MAX_ISO_MS ? new Date(ms).toISOString() : undefined;
}

function floatText(v: number): string {
  if (Number.isFinite(v)) return v === 0 && 1 / v < 0 ? "-0" : String(v);
  return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
}

type Encoder<R> = (row: R) => string;

function arrayEncoder<R>(get: (row: R) => readonly (string | null | undefined)[] | null | undefined): Encoder<R> {
  return (row) => {
    const a = get(row);
    if (a === null || a === undefined) return NULL;
    let out = "{";
    for (let i = 0; i < a.length; i++) {
      if (i > 0) out += ",";
      const e = a[i];
      if (e === null || e === undefined) out += "NULL";
      else {
        const s = typeof e === "string" ? e : String(e);
        out += ELEMENT_SPECIAL.test(s) ? `"${s.replace(ELEMENT_SPECIAL_ALL, elementEscape)}"` : `"${s}"`;
      }
    }
    return out + "}";
  };
}

function columnEncoder<R>(col: CopyColumn<R>): Encoder<R> {
  switch (col.type) {
    case "text":
    case "uuid":
    case "inet":
      return (row) => {
        const v = col.get(row);
        return v === null || v === undefined ? NULL : copyText(typeof v === "string" ? v : String(v));
      };
    case "int":
      return (row) => {
        const v = col.get(row);
        if (v === null || v === undefined) return NULL;
        return typeof v === "number" || typeof v === "bigint" ? String(v) : copyText(String(v));
      };
    case "float":
      return (row) => {
        const v = col.get(row);
        if (v === null || v === undefined) return NULL;
        return typeof v === "number" ? floatText(v) : copyText(String(v));
      };
    case "bool":
      return (row) => {
        const v = col.get(row);
        if (v === null || v === undefined) return NULL;
        return v === true ? "t" : v === false ? "f" : copyText(String(v));
      };
    case "timestamptz_ms": {
      // Rows of a batch often share their millisecond: keep the last text.
      let lastMs = NaN;
      let lastText = "";
      return (row) => {
        const v = col.get(row);
        if (v === null || v === undefined) return NULL;
        if (v === lastMs) return lastText;
        const iso = typeof v === "number" ? isoMs(v) : undefined;
        // Out of range or not a number: a text PostgreSQL refuses (22007), so the row becomes a dead letter.
        if (iso === undefined) return copyText(`invalid epoch ms ${String(v)}`);
        lastMs = v;
        lastText = iso;
        return iso;
      };
    }
    case "jsonb":
      return (row) => {
        const v = col.get(row);
        if (v === null || v === undefined) return NULL;
        const json = JSON.stringify(v) as string | undefined;
        if (json === undefined) return NULL;
        // JSON.stringify escapes every control character, so a backslash is all COPY text needs escaped.
        return json.includes("\\") ? json.replaceAll("\\", "\\\\") : json;
      };
    case "text[]":
    case "uuid[]":
      return arrayEncoder((row) => col.get(row));
  }
}

function encoders<R>(columns: readonly CopyColumn<R>[]): Encoder<R>[] {
  if (!columns.length) throw new Error("a COPY needs at least one column");
  return columns.map(columnEncoder);
}

function encodeRange<R>(enc: readonly Encoder<R>[], rows: readonly R[], from: number, to: number): string {
  let out = "";
  const n = enc.length;
  for (let i = from; i < to; i++) {
    const row = rows[i];
    out += enc[0](row);
    for (let c = 1; c < n; c++) out += "\t" + enc[c](row);
    out += "\n";
  }
  return out;
}

/** The rows as one COPY text-format document (tab-separated, `\N` for NULL, one line per row). */
export function encodeCopyText<R>(columns: readonly CopyColumn<R>[], rows: readonly R[]): string {
  return encodeRange(encoders(columns), rows, 0, rows.length);
}

// ---- COPY -----------------------------------------------------------------------------------------------------------

function copySql<R>(table: string, columns: readonly CopyColumn<R>[]): string {
  return `COPY ${table} (${columns.map((c) => ident(c.name)).join(", ")}) FROM STDIN`;
}

/** Sends one COPY text document; resolves with the rows PostgreSQL stored, rejects with its error. */
function sendCopy(client: pg.ClientBase, sql: string, data: string): Promise<number> {
  const stream = client.query(copyStreams.from(sql));
  return new Promise<number>((resolve, reject) => {
    // 'error' may come twice (the server's refusal, then the stream's own end without a connection): the first wins.
    stream.on("error", reject);
    stream.on("finish", () => resolve(stream.rowCount));
    stream.end(Buffer.from(data, "utf8"));
  });
}

/**
 * One `COPY table (columns) FROM STDIN` of all the rows, in one write. Any refusal fails the whole COPY (and aborts the
 * transaction it runs in). Resolves with the number of rows stored.
 */
export async function copyRows<R>(client: pg.ClientBase, table: string, columns: readonly CopyColumn<R>[], rows: readonly R[]): Promise<number> {
  if (!rows.length) return 0;
  return sendCopy(client, copySql(table, columns), encodeCopyText(columns, rows));
}

// ---- dead letters ---------------------------------------------------------------------------------------------------

/**
 * Whether a PostgreSQL error is about the rows rather than the statement or the server: class 22 (data exception:
 * invalid text, out of range, NUL bytes, bad JSON), class 23 (integrity: NOT NULL, CHECK, unique, foreign key, no
 * partition for the row), or 54000 (a value past a limit: an index row or a jsonb too large). Such a row fails again
 * on every retry, so it is set aside rather than retried.
 */
export function isRowDataError(err: unknown): boolean {
  const code = findPgError(err)?.code;
  return code !== undefined && (code.startsWith("22") || code.startsWith("23") || code === "54000");
}

interface DeadLetter {
  sqlstate: string | null;
  reason: string;
  detail: string | null;
  payload: unknown;
}

/** Lone UTF-16 surrogates (JSON.stringify escapes them, and jsonb refuses the escapes). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const SURROGATE = /[\ud800-\udfff]/;
const MAX_DEPTH = 64;

/** A string jsonb takes: NUL (which jsonb refuses) as the visible text `\u0000`, lone surrogates as U+FFFD. */
function jsonbSafeString(s: string): string {
  return s.includes("\u0000") || SURROGATE.test(s) ? s.replaceAll("\u0000", "\\u0000").replace(LONE_SURROGATE, "\ufffd") : s;
}

/**
 * A copy of `v` that JSON.stringify turns into text jsonb always takes: strings (and keys) made safe, bigints as
 * strings, NaN and ±Infinity as strings, cycles and nesting past 64 levels replaced by a marker, toJSON honoured.
 */
export function jsonbSafe(v: unknown, depth = 0, seen: Set<object> = new Set()): unknown {
  switch (typeof v) {
    case "string":
      return jsonbSafeString(v);
    case "number":
      return Number.isFinite(v) ? v : String(v);
    case "boolean":
      return v;
    case "bigint":
      return v.toString();
    case "object": {
      if (v === null) return null;
      if (depth >= MAX_DEPTH) return "[too deep]";
      if (seen.has(v)) return "[circular]";
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") {
        try {
          return jsonbSafe(toJSON.call(v), depth + 1, seen);
        } catch (err) {
          return `[toJSON failed: ${jsonbSafeString((err as Error)?.message ?? String(err))}]`;
        }
      }
      seen.add(v);
      try {
        if (Array.isArray(v)) return v.map((x) => jsonbSafe(x, depth + 1, seen));
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) {
          if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
          out[jsonbSafeString(k)] = jsonbSafe(x, depth + 1, seen);
        }
        return out;
      } finally {
        seen.delete(v);
      }
    }
    default:
      // undefined, functions, symbols
      return null;
  }
}

/** The row as its columns' values (a timestamp as RFC 3339 text), so `jsonb_populate_record(NULL::table, payload)` reads it back. */
function rowPayload<R>(columns: readonly CopyColumn<R>[], row: R): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const col of columns) {
    let v: unknown;
    try {
      v = col.get(row);
    } catch (err) {
      out[jsonbSafeString(col.name)] = `[read failed: ${jsonbSafeString((err as Error)?.message ?? String(err))}]`;
      continue;
    }
    if (col.type === "timestamptz_ms" && typeof v === "number") v = isoMs(v) ?? v;
    out[jsonbSafeString(col.name)] = v === undefined ? null : jsonbSafe(v);
  }
  return out;
}

function refusal(err: unknown): Omit<DeadLetter, "payload"> {
  const pgErr = findPgError(err) as (Error & { code: string; detail?: string; where?: string }) | undefined;
  const context = [pgErr?.detail, pgErr?.where].filter((s): s is string => typeof s === "string" && s !== "").join("\n");
  return {
    sqlstate: pgErr?.code ?? null,
    reason: jsonbSafeString(pgErr?.message ?? String(err)),
    detail: context ? jsonbSafeString(context) : null,
  };
}

const SAVEPOINT = "nms_copy_writer";

/**
 * COPY under a savepoint. True when stored; false when PostgreSQL refused it with a data error (rolled back to the
 * savepoint, the transaction usable again); any other error is thrown with the transaction left aborted.
 */
async function tryCopy(client: pg.ClientBase, sql: string, data: string, onRefused: (err: unknown) => void): Promise<boolean> {
  await client.query(`SAVEPOINT ${SAVEPOINT}`);
  try {
    await sendCopy(client, sql, data);
  } catch (err) {
    if (!isRowDataError(err)) throw err;
    await client.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}; RELEASE SAVEPOINT ${SAVEPOINT}`);
    onRefused(err);
    return false;
  }
  await client.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
  return true;
}

/** Reads refused ranges of `lines` in halves, under savepoints, until the refused lines stand alone (dead letters). */
class Splitter {
  stored = 0;

  constructor(
    private readonly client: pg.ClientBase,
    private readonly sql: string,
    private readonly lines: readonly string[],
    private readonly payloadOf: (k: number) => unknown,
    private readonly dead: DeadLetter[],
  ) {}

  /** Lines `from` to `to` were refused with `err`: a single one is a dead letter, more are tried again in halves. */
  async refused(from: number, to: number, err: unknown): Promise<void> {
    if (to - from === 1) {
      this.dead.push({ ...refusal(err), payload: this.payloadOf(from) });
      return;
    }
    const mid = from + ((to - from) >>> 1);
    await this.attempt(from, mid);
    await this.attempt(mid, to);
  }

  async attempt(from: number, to: number): Promise<void> {
    if (to <= from) return;
    let error: unknown;
    if (await tryCopy(this.client, this.sql, this.lines.slice(from, to).join(""), (err) => (error = err))) this.stored += to - from;
    else await this.refused(from, to, error);
  }
}

async function writeDeadLetters(client: pg.ClientBase, target: string, dead: readonly DeadLetter[], opts: CopyWithDeadLettersOptions): Promise<void> {
  if (!dead.length) return;
  await client.query(
    `INSERT INTO ${opts.deadLetterTable ?? DEAD_LETTER_TABLE} (target, sqlstate, reason, detail, payload)
     SELECT $1, d.sqlstate, d.reason, d.detail, d.payload
       FROM jsonb_to_recordset($2::jsonb) AS d(sqlstate text, reason text, detail text, payload jsonb)`,
    [jsonbSafeString(target), JSON.stringify(dead)],
  );
  opts.counter?.inc({ target }, dead.length);
}

const targetOf = (spec: { table: string; target?: string }) => spec.target ?? spec.table.replaceAll('"', "");

/**
 * Copies `rows` into `spec.table` inside the caller's open transaction; rows PostgreSQL refuses with a data error
 * (`isRowDataError`) are found by halving the batch under savepoints and kept in the dead-letter table, in the same
 * transaction (a rollback of the caller's transaction leaves neither rows nor dead letters). The dead letter's
 * payload is the row by column name (timestamps as RFC 3339 text, jsonb as the value, made safe for jsonb). A row
 * that cannot even be encoded (a getter that throws, a jsonb value JSON.stringify refuses) is a dead letter with a
 * NULL sqlstate.
 *
 * Any other error (connection lost, server shutting down, a missing table or partition, a statement timeout…) is
 * rethrown unchanged and leaves the transaction aborted: roll back and retry the whole batch later.
 *
 * Needs an open transaction (BEGIN) on `client`; opens none and commits nothing. A batch without a bad row costs one
 * COPY and two short statements (SAVEPOINT, RELEASE).
 */
export async function copyWithDeadLetters<R>(
  client: pg.ClientBase,
  spec: CopySpec<R>,
  rows: readonly R[],
  opts: CopyWithDeadLettersOptions = {},
): Promise<CopyOutcome> {
  if (!rows.length) return { stored: 0, deadLettered: 0 };
  const enc = encoders(spec.columns);
  const sql = copySql(spec.table, spec.columns);
  let whole: string | undefined;
  try {
    whole = encodeRange(enc, rows, 0, rows.length);
  } catch {
    whole = undefined; // some row does not encode: found row by row below
  }
  let wholeRefusal: unknown;
  if (whole !== undefined && (await tryCopy(client, sql, whole, (err) => (wholeRefusal = err)))) return { stored: rows.length, deadLettered: 0 };
  const wholeTried = whole !== undefined;
  whole = undefined;

  // Slow path: every row encoded on its own once, then the refused ranges halved until the bad rows stand alone.
  const dead: DeadLetter[] = [];
  const lines: string[] = [];
  const index: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    try {
      lines.push(encodeRange(enc, rows, i, i + 1));
      index.push(i);
    } catch (err) {
      dead.push({
        sqlstate: null,
        reason: jsonbSafeString(`the row could not be encoded for COPY: ${(err as Error)?.message ?? String(err)}`),
        detail: null,
        payload: rowPayload(spec.columns, rows[i]),
      });
    }
  }
  const split = new Splitter(client, sql, lines, (k) => rowPayload(spec.columns, rows[index[k]]), dead);
  // When every row encoded, the whole batch is what was refused already.
  if (wholeTried) await split.refused(0, lines.length, wholeRefusal);
  else await split.attempt(0, lines.length);
  await writeDeadLetters(client, targetOf(spec), dead, opts);
  return { stored: split.stored, deadLettered: dead.length };
}

/**
 * `copyWithDeadLetters` for rows already encoded as COPY text lines (each one row, ending with "\n", its fields in
 * `spec.columns` order), given as an array or as one text: for writers that build the lines elsewhere (a worker thread). A dead letter's payload is the
 * line read back, column name → the field's text (null for `\N`).
 */
export async function copyLinesWithDeadLetters(
  client: pg.ClientBase,
  spec: { table: string; columns: readonly string[]; target?: string },
  input: string | readonly string[],
  opts: CopyWithDeadLettersOptions = {},
): Promise<CopyOutcome> {
  if (!input.length) return { stored: 0, deadLettered: 0 };
  if (!spec.columns.length) throw new Error("a COPY needs at least one column");
  const sql = `COPY ${spec.table} (${spec.columns.map(ident).join(", ")}) FROM STDIN`;
  let wholeRefusal: unknown;
  const whole = typeof input === "string" ? input : input.join("");
  const count = typeof input === "string" ? countLines(input) : input.length;
  if (await tryCopy(client, sql, whole, (err) => (wholeRefusal = err))) return { stored: count, deadLettered: 0 };
  // Refused: the lines one by one (a text is split only now, on the slow path).
  const lines = typeof input === "string" ? (input.match(/[^\n]*\n/g) ?? []) : input;
  const dead: DeadLetter[] = [];
  const split = new Splitter(client, sql, lines, (k) => decodeCopyLine(spec.columns, lines[k]), dead);
  await split.refused(0, lines.length, wholeRefusal);
  await writeDeadLetters(client, targetOf(spec), dead, opts);
  return { stored: split.stored, deadLettered: dead.length };
}

/** Lines in a COPY text (each ends with "\n"). */
function countLines(text: string): number {
  let n = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) n++;
  return n;
}

const COPY_UNESCAPES: Record<string, string> = { t: "\t", n: "\n", r: "\r", b: "\b", f: "\f", v: "\v" };

/** A COPY text line read back as column name → text (null for `\N`), made safe for jsonb (octal and hex escapes left as they are). */
function decodeCopyLine(columns: readonly string[], line: string): Record<string, string | null> {
  const fields = (line.endsWith("\n") ? line.slice(0, -1) : line).split("\t");
  const out: Record<string, string | null> = {};
  fields.forEach((f, i) => {
    const name = jsonbSafeString(columns[i] ?? `_extra_${i - columns.length + 1}`);
    out[name] = f === NULL ? null : jsonbSafeString(f.replace(/\\(.)/gs, (_m, c: string) => COPY_UNESCAPES[c] ?? c));
  });
  return out;
}

/**
 * Keeps the dead-letter table bounded: deletes entries older than `keepDays` and, past that, the oldest beyond the
 * newest `maxRows`. Returns how many went. Call it from a periodic job (or after writing dead letters).
 */
export async function pruneDeadLetters(db: Queryable, keepDays = 30, maxRows = 100_000, table = DEAD_LETTER_TABLE): Promise<number> {
  const old = await db.query(`DELETE FROM ${table} WHERE at < now() - make_interval(days => $1::int)`, [keepDays]);
  const over = await db.query(`DELETE FROM ${table} WHERE id <= (SELECT id FROM ${table} ORDER BY id DESC OFFSET $1::int LIMIT 1)`, [maxRows]);
  return (old.rowCount ?? 0) + (over.rowCount ?? 0);
}
