import {
  ApiError,
  badRequest,
  bundleField as f,
  importRows,
  InvalidBundleRow,
  keysetRows,
  pruneRows,
  type BundleTable,
  type PluginContext,
  type Queryable,
  type SqlBundleTableSpec,
} from "../../core/index.js";
import type { ForwardingConfig } from "./context.js";
import { DEST_KINDS, SOURCE_KINDS, type DestKind, type Filter } from "./lib/types.js";
import { ForwardingTee } from "./services/ForwardingTee.js";
import { checkCaCert, checkFilter, checkKindPair, checkPool, checkRateLimit, parseTarget } from "./lib/validate.js";

/**
 * The configuration bundle's forward_destinations (spec: Configuration bundle): the destination body plus id and
 * had_secret, never a secret. On import a destination that exists here keeps its stored secret; one that had a secret
 * and has none here arrives disabled (disabled_reason secret_missing; note secret_dropped_imported_disabled) until
 * someone sets it with PUT. The destination cap holds (400 too_many_destinations, nothing imported).
 */

const SECRET_OF: Partial<Record<DestKind, "community" | "service_account_json">> = { snmp_trap_udp: "community", warehouse: "service_account_json" };

/** An API check's 400 as a skipped row naming the field. */
function checked<T>(field: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ApiError) throw new InvalidBundleRow(field, err.message);
    throw err;
  }
}

const spec: SqlBundleTableSpec = {
  name: "forward_destinations",
  from: "forwarding.destinations",
  select: `id, name, dest_kind, source_kind, target, enabled, pool, rate_limit_per_sec, verbatim, ca_cert, filter,
    (community IS NOT NULL OR service_account_json IS NOT NULL OR disabled_reason IS NOT DISTINCT FROM 'secret_missing') AS had_secret`,
  key: ["id"],
  columns: {
    id: "uuid",
    name: "text",
    dest_kind: "text",
    source_kind: "text",
    target: "text",
    enabled: "boolean",
    pool: "text",
    rate_limit_per_sec: "integer",
    verbatim: "boolean",
    ca_cert: "text",
    filter: "jsonb",
    disabled_reason: "text",
  },
  updatedAt: true,
  uniqueName: "name",
  prepare(row) {
    const name = f.text(row, "name", 1, 120).trim();
    if (!name) throw new InvalidBundleRow("name", "name is blank");
    const destKind = f.oneOf(row, "dest_kind", DEST_KINDS);
    const sourceKind = f.oneOf(row, "source_kind", SOURCE_KINDS);
    const target = f.text(row, "target", 1, 300);
    checked("target", () => parseTarget(target));
    checked("source_kind", () => checkKindPair(destKind, sourceKind));
    const pool = f.textOrNull(row, "pool", 63);
    checked("pool", () => checkPool(pool));
    const rate = f.num(row, "rate_limit_per_sec", { int: true, dflt: null });
    checked("rate_limit_per_sec", () => checkRateLimit(rate));
    const filterIn = f.json(row, "filter", null) as Filter | null;
    if (filterIn !== null && (typeof filterIn !== "object" || Array.isArray(filterIn))) throw new InvalidBundleRow("filter", "filter must be an object");
    checked("filter", () => checkFilter(filterIn));
    const caCert = checked("ca_cert", () => checkCaCert(f.textOrNull(row, "ca_cert", 1_000_000), destKind));
    const filter = filterIn
      ? { mode: filterIn.mode ?? "all", conditions: (filterIn.conditions ?? []).map(({ field, op, value }) => ({ field, op, value })) }
      : null;
    return {
      id: f.uuid(row, "id"),
      name,
      dest_kind: destKind,
      source_kind: sourceKind,
      target,
      enabled: f.bool(row, "enabled", true),
      pool,
      rate_limit_per_sec: rate,
      verbatim: f.bool(row, "verbatim", true),
      ca_cert: caCert,
      filter,
      had_secret: f.bool(row, "had_secret", false),
      disabled_reason: null,
    };
  },
  async resolve(rows, imp) {
    const { rows: here } = await imp.client.query<{ id: string; community: boolean; service_account_json: boolean }>(
      `SELECT id::text, community IS NOT NULL AS community, service_account_json IS NOT NULL AS service_account_json FROM forwarding.destinations WHERE id = ANY($1::uuid[])`,
      [rows.map((r) => r.id)],
    );
    const stored = new Map(here.map((r) => [r.id, r]));
    for (const r of rows) {
      const secret = SECRET_OF[r.dest_kind as DestKind];
      const has = stored.get(String(r.id));
      if (r.had_secret && secret !== undefined && !has?.[secret]) {
        r.enabled = false;
        r.disabled_reason = "secret_missing";
        imp.note("secret_dropped_imported_disabled", 1, secret);
      }
    }
    return rows;
  },
  // Stored secrets are never overwritten by an import (the bundle carries none).
  keepOnUpdate: [],
};

async function capped(ctx: PluginContext, client: Queryable): Promise<void> {
  const max = (ctx.config as ForwardingConfig).maxDestinations;
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM forwarding.destinations`);
  if (rows[0].n > max)
    throw badRequest(
      "too_many_destinations",
      `This deployment keeps at most ${max} forwarding destinations (pluginConfig.forwarding.maxDestinations); nothing was imported.`,
    );
}

export const forwardingBundleTables: BundleTable[] = [
  {
    name: "forward_destinations",
    count: async (ctx, exp) => (await (exp?.client ?? ctx.store).query<{ n: number }>(`SELECT count(*)::int AS n FROM forwarding.destinations`)).rows[0].n,
    async *export(ctx, exp) {
      const db = exp?.client ?? ctx.store;
      const { rows } = await db.query<{ community: number; service_account_json: number }>(
        `SELECT count(*) FILTER (WHERE dest_kind = 'snmp_trap_udp' AND (community IS NOT NULL OR disabled_reason = 'secret_missing'))::int AS community,
                count(*) FILTER (WHERE dest_kind = 'warehouse' AND (service_account_json IS NOT NULL OR disabled_reason = 'secret_missing'))::int AS service_account_json
           FROM forwarding.destinations`,
      );
      exp?.note("secret_dropped_imported_disabled", rows[0].community, "community");
      exp?.note("secret_dropped_imported_disabled", rows[0].service_account_json, "service_account_json");
      yield* keysetRows(db, spec);
    },
    async import(ctx, rows, imp) {
      const result = await importRows(spec, rows, imp);
      await capped(ctx, imp.client);
      return result;
    },
    prune: (_ctx, rows, imp) => pruneRows(imp.client, spec, rows),
    // This replica's tee re-reads its destinations now; other replicas at their next reload.
    changed: (ctx) => ctx.get(ForwardingTee).reload(),
  },
];
