import { randomBytes } from "node:crypto";
import {
  bundleField as f,
  importRows,
  InvalidBundleRow,
  keysetRows,
  pruneRows,
  type BundleExportContext,
  type BundleTable,
  type PluginContext,
  type SqlBundleTableSpec,
} from "../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../inventory/contract.js";
import { compileRule } from "./rules/compile.js";
import { RULE_BOUNDS } from "./rules/vocab.js";
import { EventPipeline } from "./services/EventPipeline.js";
import { hashIngestToken } from "./services/SourceService.js";

/**
 * The configuration bundle's event tables (spec: Configuration bundle). Event sources carry no ingest token: an http
 * source new to the deployment gets a fresh token nobody knows (note webhook_token_reset; rotate it with
 * POST /events/sources/{id}/token to learn it), one that exists here keeps its token. Built-in sources are exported
 * for reference and never imported (skipped_builtin).
 */

const BUILTIN = "builtin";

const sourcesSpec = (ctx: PluginContext): SqlBundleTableSpec => ({
  name: "event_sources",
  from: "events.sources",
  select: "id, kind, name, node_id, enabled",
  key: ["id"],
  columns: { id: "uuid", kind: "text", name: "text", node_id: "uuid", enabled: "boolean", token_hash: "text", token_sealed: "text" },
  keepOnUpdate: ["token_hash", "token_sealed", "kind"],
  updatedAt: true,
  after: ["nodes"],
  builtin: BUILTIN,
  uniqueName: "name",
  refs: [{ field: "node_id", table: NODE_DIRECTORY_VIEW, missing: "drop" }],
  prepare(row) {
    return {
      id: f.uuid(row, "id"),
      kind: f.oneOf(row, "kind", ["syslog", "trap", "http"] as const),
      name: f.text(row, "name", 1, 120),
      node_id: f.uuidOrNull(row, "node_id"),
      enabled: f.bool(row, "enabled", true),
    };
  },
  async resolve(rows, imp) {
    const ids = rows.map((r) => r.id);
    const { rows: here } = await imp.client.query<{ id: string; kind: string }>(`SELECT id::text, kind FROM events.sources WHERE id = ANY($1::uuid[])`, [ids]);
    const kinds = new Map(here.map((r) => [r.id, r.kind]));
    // One syslog (trap) source per node: a pair another source here holds is refused like the API does.
    const { rows: held } = await imp.client.query<{ id: string; k: string }>(
      `SELECT id::text, kind || '/' || node_id AS k FROM events.sources WHERE node_id IS NOT NULL AND kind <> 'http' AND id <> ALL($1::uuid[])`,
      [ids],
    );
    const taken = new Set(held.map((h) => h.k));
    let reset = 0;
    let refused = 0;
    const out = rows.filter((r) => {
      const existingKind = kinds.get(String(r.id));
      if (existingKind !== undefined && existingKind !== r.kind) {
        // An id whose kind differs here: the kind of a source never changes (its token would not fit).
        refused++;
        return false;
      }
      if (r.kind !== "http" && r.node_id) {
        const k = `${String(r.kind)}/${String(r.node_id)}`;
        if (taken.has(k)) {
          refused++;
          return false;
        }
        taken.add(k);
      }
      if (r.kind === "http") {
        // A new http source gets a fresh token. One that exists keeps its own (keepOnUpdate), but the row offered to
        // the upsert must still hold one: PostgreSQL checks the insert row's CHECK constraints before the conflict.
        const text = `nmsev_${randomBytes(32).toString("base64url")}`;
        r.token_hash = hashIngestToken(text);
        r.token_sealed = ctx.secrets.seal(text);
        if (existingKind === undefined) reset++;
      }
      return true;
    });
    imp.note("skipped_invalid_value", refused, "node_id");
    imp.note("webhook_token_reset", reset, "token");
    return out;
  },
});

const rulesSpec: SqlBundleTableSpec = {
  name: "event_rules",
  from: "events.rules",
  select: "id, name, pattern, match_kind, severity, clear_pattern, enabled, min_count, window_secs, ttl_secs, node_id, source_id, source_kind",
  key: ["id"],
  columns: {
    id: "uuid",
    name: "text",
    pattern: "text",
    match_kind: "text",
    severity: "text",
    clear_pattern: "text",
    enabled: "boolean",
    min_count: "integer",
    window_secs: "integer",
    ttl_secs: "integer",
    node_id: "uuid",
    source_id: "uuid",
    source_kind: "text",
  },
  updatedAt: true,
  after: ["event_sources", "nodes"],
  // A rule narrowed to a node or source that is not here would widen to everything if dropped: it is left out.
  refs: [
    { field: "node_id", table: NODE_DIRECTORY_VIEW, missing: "skip" },
    { field: "source_id", table: "events.sources", missing: "skip" },
  ],
  prepare(row) {
    const id = f.uuid(row, "id");
    const { id: _id, ...body } = row;
    const compiled = compileRule(body);
    if (!compiled.ok) throw new InvalidBundleRow(compiled.field, `${compiled.field}: ${compiled.message}`);
    const name = f.text(row, "name", 1, 120).trim();
    if (!name) throw new InvalidBundleRow("name", "name is blank");
    return {
      id,
      name,
      pattern: row.pattern,
      match_kind: row.match_kind,
      severity: row.severity,
      clear_pattern: row.clear_pattern ?? null,
      enabled: f.bool(row, "enabled", true),
      min_count: f.num(row, "min_count", { int: true, dflt: RULE_BOUNDS.min_count.default }),
      window_secs: f.num(row, "window_secs", { int: true, dflt: RULE_BOUNDS.window_secs.default }),
      ttl_secs: f.num(row, "ttl_secs", { int: true, dflt: null }),
      node_id: f.uuidOrNull(row, "node_id"),
      source_id: f.uuidOrNull(row, "source_id"),
      source_kind: row.source_kind ?? null,
    };
  },
};

async function reload(ctx: PluginContext, what: "rules" | "sources"): Promise<void> {
  const pipeline = ctx.get(EventPipeline);
  if (!pipeline.isRunning) return;
  if (what === "rules") await pipeline.reloadRules();
  else await pipeline.reloadSources();
}

const count = (spec: Pick<SqlBundleTableSpec, "from">) => async (ctx: PluginContext, exp?: BundleExportContext) =>
  (await (exp?.client ?? ctx.store).query<{ n: number }>(`SELECT count(*)::int AS n FROM ${spec.from}`)).rows[0].n;

export const eventsBundleTables: BundleTable[] = [
  {
    name: "event_sources",
    after: ["nodes"],
    count: count({ from: "events.sources" }),
    async *export(ctx, exp) {
      const db = exp?.client ?? ctx.store;
      const { rows } = await db.query<{ builtin: number; http: number }>(
        `SELECT count(*) FILTER (WHERE builtin)::int AS builtin, count(*) FILTER (WHERE kind = 'http')::int AS http FROM events.sources`,
      );
      exp?.note("skipped_builtin", rows[0].builtin);
      exp?.note("webhook_token_reset", rows[0].http, "token");
      yield* keysetRows(db, sourcesSpec(ctx));
    },
    import: (ctx, rows, imp) => importRows(sourcesSpec(ctx), rows, imp),
    prune: (ctx, rows, imp) => pruneRows(imp.client, sourcesSpec(ctx), rows),
    changed: (ctx) => reload(ctx, "sources"),
  },
  {
    name: "event_rules",
    after: rulesSpec.after,
    count: count(rulesSpec),
    export: (ctx, exp) => keysetRows(exp?.client ?? ctx.store, rulesSpec),
    import: (_ctx, rows, imp) => importRows(rulesSpec, rows, imp),
    prune: (_ctx, rows, imp) => pruneRows(imp.client, rulesSpec, rows),
    changed: (ctx) => reload(ctx, "rules"),
  },
];
