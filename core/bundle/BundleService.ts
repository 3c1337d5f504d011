import type { KernelConfig } from "../config/Config.js";
import { ApiError, badRequest } from "../errors.js";
import type { Logger } from "../logging/Logger.js";
import type {
  BundleExportContext,
  BundleImportContext,
  BundleImportResult,
  BundleNote,
  BundleNoteCode,
  BundleTable,
  PluginContext,
} from "../pluginhost/manifest.js";
import { pgErrorCode } from "../store/pgErrors.js";
import type { Queryable, Store } from "../store/Store.js";

/** The bundle's `format`, always. */
export const BUNDLE_FORMAT = "service.config-bundle";
/**
 * The version this kernel writes and the newest it reads. 1: the first bundles (direction + warning + critical,
 * scope_id only, tags as an object, no notes). 2: notes, tags/tags_excluded arrays, profile_locked, scope_ids,
 * row_match and the four bounds.
 */
export const BUNDLE_VERSION = 2;
/** The import route's body limit: far above http.bodyLimit, since a bundle carries whole tables. */
export const BUNDLE_IMPORT_BODY_LIMIT = "512mb";
/** The spec's arrays, in the order the bundle writes them. */
export const BUNDLE_ARRAYS = [
  "analysis_schedules",
  "classification_rules",
  "collection_template_items",
  "collection_templates",
  "dns_checks",
  "event_rules",
  "event_sources",
  "forward_destinations",
  "node_groups",
  "nodes",
  "profile_collection_templates",
  "profiles",
  "report_definitions",
  "report_schedules",
  "thresholds",
  "url_checks",
] as const;

/** A table a loaded plugin declared, with that plugin's context. */
export interface DeclaredTable {
  plugin: string;
  table: BundleTable;
  ctx: PluginContext;
}

export interface BundleServiceOptions {
  store: Store;
  config: KernelConfig;
  version: string;
  tables: DeclaredTable[];
  log: Logger;
  /** false in the CLI: no serving kernel, so no cache reloads after an import. */
  notifyChanges?: boolean;
}

export interface ImportOptions {
  mode: "merge" | "replace";
  dryRun: boolean;
  /** Called after each table the bundle carries is imported (the CLI's progress bar). */
  progress?: BundleProgress;
}

/** How far an export or import is: tables done of the tables it works through, and the one just done. */
export type BundleProgress = (done: number, total: number, table: string) => void;

export interface ImportOutcome {
  ok: true;
  dry_run: boolean;
  mode: "merge" | "replace";
  format: string;
  version: number;
  tables: Record<string, BundleImportResult>;
  notes: BundleNote[];
}

export const bundleTooLarge = (table: string, max: number) =>
  new ApiError(413, "bundle_too_large", `The ${table} table holds more rows than one bundle carries (bundle.maxRows = ${max}).`);

class Notes {
  private readonly map = new Map<string, BundleNote>();
  add(table: string, code: BundleNoteCode, count = 1, field: string | null = null): void {
    if (count <= 0) return;
    const k = `${table}\u0000${code}\u0000${field ?? ""}`;
    const n = this.map.get(k);
    if (n) n.count += count;
    else this.map.set(k, { table, code, count, field: field ?? null });
  }
  list(): BundleNote[] {
    return [...this.map.values()].sort(
      (a, b) => a.table.localeCompare(b.table) || a.code.localeCompare(b.code) || (a.field ?? "").localeCompare(b.field ?? ""),
    );
  }
}

class DryRunRollback extends Error {
  constructor(readonly outcome: ImportOutcome) {
    super("dry run");
  }
}

/** Order by `after` (a table after the tables it references, among those loaded); ties keep declaration order. */
export function importOrder(tables: DeclaredTable[]): DeclaredTable[] {
  const byName = new Map(tables.map((t) => [t.table.name, t]));
  const out: DeclaredTable[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (t: DeclaredTable) => {
    const s = state.get(t.table.name);
    if (s === "done") return;
    if (s === "visiting") throw new Error(`bundle tables' "after" forms a cycle at ${t.table.name}`);
    state.set(t.table.name, "visiting");
    for (const dep of t.table.after ?? []) {
      const d = byName.get(dep);
      if (d) visit(d);
    }
    state.set(t.table.name, "done");
    out.push(t);
  };
  for (const t of tables) visit(t);
  return out;
}

/** Export (streamed JSON) and import (one transaction) of the configuration bundle over every loaded plugin's tables. */
export class BundleService {
  private readonly tables: DeclaredTable[];

  constructor(private readonly options: BundleServiceOptions) {
    this.tables = importOrder(options.tables);
  }

  get maxRows(): number {
    return this.options.config.bundle.maxRows;
  }

  /**
   * Checks the row cap (throws 413 bundle_too_large before anything is written), then yields the bundle's JSON text
   * piece by piece: each table page by page, notes and the closing brace last.
   */
  async export(progress?: BundleProgress): Promise<AsyncIterable<string>> {
    const snapshot = await this.snapshot();
    try {
      const body = await this.exportFrom(snapshot.client, progress);
      return (async function* () {
        try {
          yield* body;
        } finally {
          snapshot.release();
        }
      })();
    } catch (err) {
      snapshot.release();
      throw err;
    }
  }

  /**
   * One read-only REPEATABLE READ transaction the whole export reads through (tables that use `exp.client`), so rows
   * written while it streams never make the bundle inconsistent. `release()` ends it (the stream's end, an error, or
   * the client going away).
   */
  private snapshot(): Promise<{ client: Queryable; release: () => void }> {
    let release!: () => void;
    const done = new Promise<void>((r) => (release = r));
    return new Promise((resolve, reject) => {
      this.options.store
        .tx(async (client) => {
          await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
          resolve({ client, release });
          await done;
        })
        .catch((err: unknown) => {
          reject(err as Error);
          this.options.log.warn("bundle export: the snapshot transaction ended with an error", { error: (err as Error).message });
        });
    });
  }

  private async exportFrom(client: Queryable, progress?: BundleProgress): Promise<AsyncIterable<string>> {
    const max = this.maxRows;
    const ready = new Map<string, unknown[] | AsyncIterable<unknown> | (() => AsyncIterable<unknown>)>();
    const notes = new Notes();
    const exp = (table: string): BundleExportContext => ({
      client,
      note: (code: BundleNoteCode, count = 1, field: string | null = null) => notes.add(table, code, count, field),
    });
    for (const t of this.tables) {
      if (t.table.count) {
        const n = await t.table.count(t.ctx, exp(t.table.name));
        if (n > max) throw bundleTooLarge(t.table.name, max);
        ready.set(t.table.name, () => this.iterable(t.table.export(t.ctx, exp(t.table.name))));
      } else {
        const rows = await t.table.export(t.ctx, exp(t.table.name));
        if (Array.isArray(rows)) {
          if (rows.length > max) throw bundleTooLarge(t.table.name, max);
          ready.set(t.table.name, rows);
        } else ready.set(t.table.name, rows);
      }
    }
    const names = [...BUNDLE_ARRAYS, ...this.tables.map((t) => t.table.name).filter((n) => !(BUNDLE_ARRAYS as readonly string[]).includes(n))];
    const head = {
      format: BUNDLE_FORMAT,
      version: BUNDLE_VERSION,
      service_version: this.options.version,
      exported_at: new Date().toISOString(),
      secrets: "references",
      app_settings: this.appSettings(),
    };
    const iterable = this.iterable.bind(this);
    return (async function* () {
      yield JSON.stringify(head).slice(0, -1);
      let done = 0;
      for (const name of names) {
        const source = ready.get(name);
        yield `,${JSON.stringify(name)}:[`;
        if (source) {
          let n = 0;
          let buf = "";
          const rows = typeof source === "function" ? source() : iterable(source);
          for await (const row of rows) {
            if (++n > max) throw bundleTooLarge(name, max);
            buf += (n > 1 ? "," : "") + JSON.stringify(row);
            if (buf.length >= 65536) {
              yield buf;
              buf = "";
            }
          }
          if (buf) yield buf;
        }
        yield "]";
        progress?.(++done, names.length, name);
      }
      yield `,"notes":${JSON.stringify(notes.list())}}`;
    })();
  }

  /** Deployment settings a user would carry over: every setting of this kernel lives in its config file and environment, not the store, so none. */
  private appSettings(): Record<string, unknown> | null {
    return null;
  }

  private async *iterable(src: Promise<unknown[]> | unknown[] | AsyncIterable<unknown>): AsyncIterable<unknown> {
    const resolved = await src;
    if (Array.isArray(resolved)) yield* resolved;
    else yield* resolved as AsyncIterable<unknown>;
  }

  /** Checks the top level: format, version, arrays; 400 with a stable code, nothing written. */
  check(bundle: unknown): Record<string, unknown> {
    if (typeof bundle !== "object" || bundle === null || Array.isArray(bundle)) throw badRequest("bundle_invalid", "The bundle must be a JSON object.");
    const b = bundle as Record<string, unknown>;
    if (b.format !== BUNDLE_FORMAT) throw badRequest("bundle_format_unsupported", `The bundle's format must be "${BUNDLE_FORMAT}".`);
    if (typeof b.version !== "number" || !Number.isInteger(b.version) || b.version < 1)
      throw badRequest("bundle_invalid", "The bundle's version must be a positive integer.");
    if (b.version > BUNDLE_VERSION)
      throw badRequest("bundle_version_unsupported", `This deployment reads bundles up to version ${BUNDLE_VERSION}; this one is version ${b.version}.`);
    const names = new Set([...BUNDLE_ARRAYS, ...this.tables.map((t) => t.table.name)]);
    for (const name of names) {
      const v = b[name];
      if (v === undefined || v === null) continue;
      if (!Array.isArray(v)) throw badRequest("bundle_invalid", `The bundle's ${name} must be an array.`);
      if (v.length > this.maxRows) throw bundleTooLarge(name, this.maxRows);
    }
    if (b.app_settings !== undefined && b.app_settings !== null && (typeof b.app_settings !== "object" || Array.isArray(b.app_settings)))
      throw badRequest("bundle_invalid", "The bundle's app_settings must be null or an object.");
    return b;
  }

  /** Imports a bundle in one transaction (rolled back for a dry run, or on any failure: nothing half-written). */
  async import(bundle: unknown, opts: ImportOptions): Promise<ImportOutcome> {
    const b = this.check(bundle);
    const notes = new Notes();
    const results: Record<string, BundleImportResult> = {};
    const touched: DeclaredTable[] = [];
    let current = "";
    const run = async (client: BundleImportContext["client"]): Promise<ImportOutcome> => {
      const present: { t: DeclaredTable; rows: unknown[] }[] = [];
      const carried = this.tables.filter((t) => Array.isArray(b[t.table.name])).length;
      for (const t of this.tables) {
        // A table the bundle does not carry is left alone (replace mode too).
        const list = b[t.table.name];
        if (!Array.isArray(list)) continue;
        current = t.table.name;
        const imp: BundleImportContext = {
          client,
          mode: opts.mode,
          dryRun: opts.dryRun,
          note: (code, count = 1, field = null) => notes.add(t.table.name, code, count, field),
        };
        const r = t.table.import ? await t.table.import(t.ctx, list, imp) : { created: 0, updated: 0, skipped: list.length, deleted: 0 };
        results[t.table.name] = { ...r };
        present.push({ t, rows: list });
        opts.progress?.(present.length, carried, t.table.name);
      }
      if (opts.mode === "replace") {
        for (const { t, rows } of [...present].reverse()) {
          if (!t.table.prune) continue;
          current = t.table.name;
          const imp: BundleImportContext = {
            client,
            mode: opts.mode,
            dryRun: opts.dryRun,
            note: (code, count = 1, field = null) => notes.add(t.table.name, code, count, field),
          };
          results[t.table.name].deleted += await t.table.prune(t.ctx, rows, imp);
        }
      }
      for (const { t } of present) {
        const r = results[t.table.name];
        if (r.created + r.updated + r.deleted > 0) touched.push(t);
      }
      // Arrays no loaded plugin declares: every row skipped.
      for (const name of BUNDLE_ARRAYS) {
        const rows = b[name];
        if (results[name] || !Array.isArray(rows)) continue;
        results[name] = { created: 0, updated: 0, skipped: rows.length, deleted: 0 };
      }
      const outcome: ImportOutcome = {
        ok: true,
        dry_run: opts.dryRun,
        mode: opts.mode,
        format: BUNDLE_FORMAT,
        version: b.version as number,
        tables: results,
        notes: notes.list(),
      };
      if (opts.dryRun) throw new DryRunRollback(outcome);
      return outcome;
    };
    let outcome: ImportOutcome;
    try {
      outcome = await this.options.store.tx((client) => run(client));
    } catch (err) {
      if (err instanceof DryRunRollback) return err.outcome;
      if (err instanceof ApiError) throw err;
      const code = pgErrorCode(err);
      if (code && (code.startsWith("23") || code.startsWith("22"))) {
        this.options.log.warn("bundle import refused by the store", { table: current, pg_code: code });
        throw badRequest(
          "bundle_row_rejected",
          `A row of the bundle's ${current} table breaks a rule of this deployment (a duplicate or a broken reference); nothing was imported.`,
        );
      }
      throw err;
    }
    // Rows of one table feed other tables' caches (nodes and folders feed the threshold engine's directory): after an
    // import that wrote anything, every table reloads.
    if (this.options.notifyChanges !== false && touched.length > 0) {
      for (const t of this.tables) {
        try {
          await t.table.changed?.(t.ctx);
        } catch (err) {
          this.options.log.warn("bundle import: reload after import failed", { table: t.table.name, error: (err as Error).message });
        }
      }
    }
    return outcome;
  }
}

/** Every bundle table the loaded plugins declare, each with its plugin's context. */
export function declaredBundleTables(
  plugins: readonly { manifest: { id: string; bundle?: { tables: BundleTable[] } } }[],
  contexts: Map<string, PluginContext>,
): DeclaredTable[] {
  return plugins.flatMap((p) => {
    const ctx = contexts.get(p.manifest.id);
    return ctx ? (p.manifest.bundle?.tables ?? []).map((table) => ({ plugin: p.manifest.id, table, ctx })) : [];
  });
}
