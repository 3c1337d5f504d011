import type { BundleExportContext, BundleImportContext, BundleImportResult, BundleNoteCode, BundleTable, PluginContext } from "../pluginhost/manifest.js";
import type { Queryable } from "../store/Store.js";
import { isUuid } from "../util/uuid.js";

/** Rows per export page and per import statement. */
export const BUNDLE_CHUNK = 2000;

/** A reference column of a bundle record: checked against the referenced table after the tables it comes `after`. */
export interface BundleReference {
  field: string;
  /** The schema-qualified table whose `column` (default `id`) the field names. */
  table: string;
  column?: string;
  /** drop: set it null (note reference_dropped); skip: leave the row out (note skipped_missing_reference). */
  missing: "drop" | "skip";
}

/** A row an import prepared: the record to write, or why it is skipped. */
export type Prepared = Record<string, unknown>;

/** Thrown by `prepare` for a row that fails validation (note skipped_invalid_value naming the field). */
export class InvalidBundleRow extends Error {
  constructor(
    readonly field: string | null,
    message: string,
  ) {
    super(message);
  }
}

/** A bundle table stored in one SQL table with a key; the generic export (keyset pages) and import (batched upsert). */
export interface SqlBundleTableSpec {
  name: string;
  /** Schema-qualified SQL table. */
  from: string;
  /** Export column expressions, giving exactly the record's fields. */
  select: string;
  /** Unique key columns (export order, upsert target, replace-mode identity). */
  key: string[];
  /** Export only rows where this holds. */
  where?: string;
  /** Columns written on import with their PostgreSQL types (key columns included). */
  columns: Record<string, string>;
  /** The table has updated_at (set on update). */
  updatedAt?: boolean;
  after?: string[];
  refs?: BundleReference[];
  /** A column naming a parent row of the same table: rows are written parents first. */
  selfRef?: string;
  /** SQL condition marking built-in rows: bundle rows naming one are skipped (skipped_builtin), replace mode keeps them. */
  builtin?: string;
  /** A column unique case-insensitively: a row whose value another row here (another key) holds is skipped (skipped_invalid_value). */
  uniqueName?: string;
  /** Checks one record and gives the row to write (older bundles: the spec's defaults); throws InvalidBundleRow. */
  prepare: (row: Record<string, unknown>) => Prepared;
  /** After the references: adjusts or leaves out prepared rows with the import's client (notes through imp). */
  resolve?: (rows: Prepared[], imp: BundleImportContext) => Promise<Prepared[]>;
  /** Columns left alone when an existing row is updated (e.g. stored secrets). */
  keepOnUpdate?: string[];
  changed?: BundleTable["changed"];
}

const keyOf = (spec: SqlBundleTableSpec, row: Record<string, unknown>) => spec.key.map((k) => String(row[k]).toLowerCase()).join("\u0000");

/** Pages through `from` by its key, so a big table never sits in memory. */
export async function* keysetRows(db: Queryable, spec: Pick<SqlBundleTableSpec, "from" | "select" | "key" | "where">): AsyncIterable<unknown> {
  let after: unknown[] | null = null;
  const keyList = spec.key.join(", ");
  for (;;) {
    const conditions: string[] = [spec.where, after ? `(${keyList}) > (${spec.key.map((_, i) => `$${i + 1}`).join(", ")})` : null].filter((c): c is string =>
      Boolean(c),
    );
    const sql: string = `SELECT ${spec.select}, ${spec.key.map((k, i) => `${k} AS __k${i}`).join(", ")} FROM ${spec.from}${conditions.length ? ` WHERE ${conditions.join(" AND ")}` : ""} ORDER BY ${keyList} LIMIT ${BUNDLE_CHUNK}`;
    const { rows }: { rows: Record<string, unknown>[] } = await db.query(sql, after ?? []);
    for (const r of rows) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r)) if (!k.startsWith("__k")) out[k] = v;
      yield out;
    }
    if (rows.length < BUNDLE_CHUNK) return;
    const last: Record<string, unknown> = rows[rows.length - 1];
    after = spec.key.map((_, i) => last[`__k${i}`]);
  }
}

/** Which of `ids` exist as `column` of `table`, lower-cased. */
export async function existing(db: Queryable, table: string, ids: unknown[], column = "id"): Promise<Set<string>> {
  const wanted = [...new Set(ids.filter((v): v is string => typeof v === "string" && isUuid(v)).map((v) => v.toLowerCase()))];
  const found = new Set<string>();
  for (let i = 0; i < wanted.length; i += 10000) {
    const { rows } = await db.query<{ v: string }>(`SELECT ${column}::text AS v FROM ${table} WHERE ${column} = ANY($1::uuid[])`, [wanted.slice(i, i + 10000)]);
    for (const r of rows) found.add(r.v.toLowerCase());
  }
  return found;
}

/**
 * Parents before children (a chunk never names a parent a later chunk writes). Rows whose parent chain within the
 * bundle loops back on itself are returned apart: a folder, profile or node cannot be its own ancestor.
 */
function parentsFirst(rows: Prepared[], field: string, key: string): { ordered: Prepared[]; cyclic: Prepared[] } {
  const byId = new Map(rows.map((r) => [String(r[key]), r]));
  const done = new Set<string>();
  const bad = new Set<string>();
  const out: Prepared[] = [];
  for (const r of rows) {
    const chain: Prepared[] = [];
    const onChain = new Set<string>();
    let cur: Prepared | undefined = r;
    let looped = false;
    while (cur && !done.has(String(cur[key])) && !bad.has(String(cur[key]))) {
      const id = String(cur[key]);
      if (onChain.has(id)) {
        looped = true;
        break;
      }
      onChain.add(id);
      chain.push(cur);
      const parent: unknown = cur[field];
      cur = typeof parent === "string" ? byId.get(parent) : undefined;
    }
    // A chain that ends in a loop, or in a row already refused, is refused whole.
    if (looped || (cur && bad.has(String(cur[key])))) {
      for (const c of chain) bad.add(String(c[key]));
      continue;
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      done.add(String(chain[i][key]));
      out.push(chain[i]);
    }
  }
  return { ordered: out, cyclic: rows.filter((r) => bad.has(String(r[key]))) };
}

/** Writes prepared rows (upsert by key) in statements of BUNDLE_CHUNK rows; counts created and updated. */
export async function upsertRows(db: Queryable, spec: SqlBundleTableSpec, rows: Prepared[]): Promise<{ created: number; updated: number }> {
  const cols = Object.keys(spec.columns);
  const recordType = cols.map((c) => `${c} ${spec.columns[c]}`).join(", ");
  const updates = cols.filter((c) => !spec.key.includes(c) && !(spec.keepOnUpdate ?? []).includes(c)).map((c) => `${c} = EXCLUDED.${c}`);
  if (spec.updatedAt) updates.push("updated_at = now()");
  const onConflict = updates.length ? `DO UPDATE SET ${updates.join(", ")}` : `DO UPDATE SET ${spec.key[0]} = EXCLUDED.${spec.key[0]}`;
  const sql = `INSERT INTO ${spec.from} AS t (${cols.join(", ")}) SELECT ${cols.join(", ")} FROM jsonb_to_recordset($1::jsonb) AS x(${recordType}) ON CONFLICT (${spec.key.join(", ")}) ${onConflict} RETURNING (xmax = 0) AS created`;
  let created = 0;
  let updated = 0;
  for (let i = 0; i < rows.length; i += BUNDLE_CHUNK) {
    const chunk = rows.slice(i, i + BUNDLE_CHUNK).map((r) => Object.fromEntries(cols.map((c) => [c, r[c] ?? null])));
    const { rows: out } = await db.query<{ created: boolean }>(sql, [JSON.stringify(chunk)]);
    for (const r of out)
      if (r.created) created++;
      else updated++;
  }
  return { created, updated };
}

/** Replace mode: deletes the rows of `spec.from` whose key the bundle rows do not name (built-in rows stay). */
export async function pruneRows(db: Queryable, spec: SqlBundleTableSpec, rows: unknown[]): Promise<number> {
  const keep = rows.filter((r): r is Record<string, unknown> => typeof r === "object" && r !== null);
  const keepJson = JSON.stringify(keep.map((r) => Object.fromEntries(spec.key.map((k) => [k, typeof r[k] === "string" && isUuid(r[k]) ? r[k] : null]))));
  const recordType = spec.key.map((k) => `${k} uuid`).join(", ");
  const match = spec.key.map((k) => `k.${k} = t.${k}`).join(" AND ");
  const { rowCount } = await db.query(
    `DELETE FROM ${spec.from} AS t WHERE NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($1::jsonb) AS k(${recordType}) WHERE ${match})${spec.builtin ? ` AND NOT (${spec.builtin})` : ""}`,
    [keepJson],
  );
  return rowCount ?? 0;
}

/** The generic import: prepare (validation, older-bundle defaults), built-in rows, references, unique names, upsert. */
export async function importRows(spec: SqlBundleTableSpec, input: unknown[], imp: BundleImportContext): Promise<BundleImportResult> {
  const counts = new Map<string, number>();
  const note = (code: BundleNoteCode, field: string | null = null) =>
    counts.set(`${code}\u0000${field ?? ""}`, (counts.get(`${code}\u0000${field ?? ""}`) ?? 0) + 1);
  let skipped = 0;
  let prepared: Prepared[] = [];
  const seen = new Set<string>();
  for (const raw of input) {
    try {
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new InvalidBundleRow(null, "not an object");
      const row = spec.prepare(raw as Record<string, unknown>);
      const k = keyOf(spec, row);
      if (seen.has(k)) throw new InvalidBundleRow(spec.key.join(","), "repeats a key");
      seen.add(k);
      prepared.push(row);
    } catch (err) {
      if (!(err instanceof InvalidBundleRow)) throw err;
      note("skipped_invalid_value", err.field);
      skipped++;
    }
  }
  if (spec.builtin && prepared.length) {
    const idCol = spec.key[0];
    const { rows } = await imp.client.query<{ v: string }>(`SELECT ${idCol}::text AS v FROM ${spec.from} WHERE ${spec.builtin}`);
    const builtins = new Set(rows.map((r) => r.v.toLowerCase()));
    prepared = prepared.filter((r) => {
      if (!builtins.has(String(r[idCol]).toLowerCase())) return true;
      note("skipped_builtin");
      skipped++;
      return false;
    });
  }
  for (const ref of spec.refs ?? []) {
    const self = ref.table === spec.from;
    const found = await existing(
      imp.client,
      ref.table,
      prepared.map((r) => r[ref.field]),
      ref.column,
    );
    if (self) for (const r of prepared) found.add(String(r[spec.key[0]]).toLowerCase());
    prepared = prepared.filter((r) => {
      const v = r[ref.field];
      if (v === null || v === undefined || found.has(String(v).toLowerCase())) return true;
      if (ref.missing === "drop") {
        r[ref.field] = null;
        note("reference_dropped", ref.field);
        return true;
      }
      note("skipped_missing_reference", ref.field);
      skipped++;
      return false;
    });
  }
  if (spec.uniqueName && prepared.length) {
    const col = spec.uniqueName;
    const idCol = spec.key[0];
    const taken = new Map<string, string>();
    const { rows } = await imp.client.query<{ n: string; id: string }>(
      `SELECT lower(${col}) AS n, ${idCol}::text AS id FROM ${spec.from} WHERE lower(${col}) = ANY($1::text[])`,
      [prepared.map((r) => String(r[col]).toLowerCase())],
    );
    for (const r of rows) taken.set(r.n, r.id.toLowerCase());
    prepared = prepared.filter((r) => {
      const n = String(r[col]).toLowerCase();
      const holder = taken.get(n);
      const id = String(r[idCol]).toLowerCase();
      if (holder === undefined || holder === id) {
        taken.set(n, id);
        return true;
      }
      note("skipped_invalid_value", col);
      skipped++;
      return false;
    });
  }
  if (spec.resolve) {
    const before = prepared.length;
    prepared = await spec.resolve(prepared, imp);
    skipped += before - prepared.length;
  }
  if (spec.selfRef) {
    const { ordered, cyclic } = parentsFirst(prepared, spec.selfRef, spec.key[0]);
    for (let i = 0; i < cyclic.length; i++) note("skipped_invalid_value", spec.selfRef);
    skipped += cyclic.length;
    prepared = ordered;
  }
  const { created, updated } = await upsertRows(imp.client, spec, prepared);
  for (const [k, count] of counts) {
    const [code, field] = k.split("\u0000");
    imp.note(code as BundleNoteCode, count, field || null);
  }
  return { created, updated, skipped, deleted: 0 };
}

/** A BundleTable from a SQL table spec: keyset export, counted, generic import and replace-mode prune. */
export function sqlBundleTable(spec: SqlBundleTableSpec): BundleTable {
  return {
    name: spec.name,
    after: spec.after,
    export: (ctx: PluginContext, exp?: BundleExportContext) => keysetRows(exp?.client ?? ctx.store, spec),
    count: async (ctx: PluginContext, exp?: BundleExportContext) =>
      (await (exp?.client ?? ctx.store).query<{ n: number }>(`SELECT count(*)::int AS n FROM ${spec.from}${spec.where ? ` WHERE ${spec.where}` : ""}`)).rows[0]
        .n,
    import: (_ctx, rows, imp) => importRows(spec, rows, imp),
    prune: (_ctx, rows, imp) => pruneRows(imp.client, spec, rows),
    changed: spec.changed,
  };
}

// ---- Field checks for `prepare` (each throws InvalidBundleRow naming the field). ----

type Row = Record<string, unknown>;
const bad = (field: string, what: string): never => {
  throw new InvalidBundleRow(field, `${field} ${what}`);
};

export const field = {
  uuid(row: Row, f: string): string {
    const v = row[f];
    if (typeof v !== "string" || !isUuid(v)) bad(f, "must be a uuid");
    return (v as string).toLowerCase();
  },
  uuidOrNull(row: Row, f: string): string | null {
    const v = row[f];
    if (v === undefined || v === null) return null;
    return field.uuid(row, f);
  },
  text(row: Row, f: string, min = 1, max = 10000): string {
    const v = row[f];
    if (typeof v !== "string" || v.length < min || v.length > max) bad(f, `must be a string of ${min} to ${max} characters`);
    return v as string;
  },
  textOrNull(row: Row, f: string, max = 10000): string | null {
    const v = row[f];
    if (v === undefined || v === null) return null;
    return field.text(row, f, 0, max);
  },
  bool(row: Row, f: string, dflt: boolean): boolean {
    const v = row[f];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== "boolean") bad(f, "must be a boolean");
    return v as boolean;
  },
  num(row: Row, f: string, opts: { min?: number; max?: number; int?: boolean; dflt?: number | null } = {}): number | null {
    const v = row[f];
    if (v === undefined || v === null) {
      if (opts.dflt === undefined) bad(f, "is required");
      return opts.dflt ?? null;
    }
    if (typeof v !== "number" || !Number.isFinite(v)) bad(f, "must be a number");
    const n = v as number;
    if (opts.int && !Number.isInteger(n)) bad(f, "must be an integer");
    if ((opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) bad(f, `must be from ${opts.min} to ${opts.max}`);
    return n;
  },
  oneOf<T extends string>(row: Row, f: string, values: readonly T[], dflt?: T): T {
    const v = row[f];
    if ((v === undefined || v === null) && dflt !== undefined) return dflt;
    if (!(values as readonly unknown[]).includes(v)) bad(f, `must be one of ${values.join(", ")}`);
    return v as T;
  },
  /** Labels: an array of strings; an older bundle's object form (`{label: true}` or `{key: value}`) is read as its keys (or key=value). */
  labels(row: Row, f: string): string[] {
    const v = row[f];
    if (v === undefined || v === null) return [];
    let list: unknown[];
    if (Array.isArray(v)) list = v;
    else if (typeof v === "object")
      list = Object.entries(v as Record<string, unknown>).flatMap(([k, x]) =>
        x === true || x === null || x === "" ? [k] : x === false ? [] : [`${k}=${String(x)}`],
      );
    else return bad(f, "must be an array of strings");
    if (!list.every((t) => typeof t === "string" && t.length > 0 && t.length <= 200)) bad(f, "must hold strings of 1 to 200 characters");
    return [...new Set(list as string[])];
  },
  json(row: Row, f: string, dflt: unknown): unknown {
    const v = row[f];
    return v === undefined ? dflt : v;
  },
};

/** An import failure that is the bundle's fault and names the table (answered as 400 bundle_row_rejected). */
export class BundleRowRejected extends Error {
  constructor(
    readonly table: string,
    message: string,
  ) {
    super(message);
  }
}

export type { Queryable };
