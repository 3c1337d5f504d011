import {
  ApiError,
  bundleField as f,
  existingIds,
  importRows,
  InvalidBundleRow,
  keysetRows,
  pruneRows,
  type BundleTable,
  type SqlBundleTableSpec,
} from "../../core/index.js";
import { FOLDER_RANGES_VIEW, NODE_DIRECTORY_VIEW, PROFILE_DIRECTORY_VIEW } from "../inventory/contract.js";
import { parsePort } from "./lib/rules.js";
import { METRIC_PATTERN, type ThresholdBody } from "./models/ThresholdModels.js";
import { RuleResolver } from "./services/RuleResolver.js";
import { normalise } from "./services/ThresholdService.js";

/**
 * The configuration bundle's thresholds (spec: Configuration bundle): scope_id (the first target) beside scope_ids,
 * so an older deployment reads its first target. On import the rows go through the API's normalisation (an older
 * bundle's direction + warning + critical and lone scope_id are read as the API reads them); a target that is not here
 * is dropped (reference_dropped), and a rule left without any target is skipped (skipped_missing_reference) rather
 * than widened to every node.
 */

const TARGET_TABLE: Record<string, string> = {
  profile: PROFILE_DIRECTORY_VIEW,
  folder: FOLDER_RANGES_VIEW,
  node: NODE_DIRECTORY_VIEW,
  interface: NODE_DIRECTORY_VIEW,
};

const spec: SqlBundleTableSpec = {
  name: "thresholds",
  from: "alerts.thresholds",
  select: `id, metric, direction, dwell_samples, scope_level, scope_ids[1] AS scope_id, scope_ids, warning, critical,
    warning_above, warning_below, critical_above, critical_below, row_match`,
  key: ["id"],
  columns: {
    id: "uuid",
    metric: "text",
    scope_level: "text",
    direction: "text",
    warning: "double precision",
    critical: "double precision",
    warning_above: "double precision",
    critical_above: "double precision",
    warning_below: "double precision",
    critical_below: "double precision",
    dwell_samples: "integer",
    scope_ids: "text[]",
    row_match: "text",
  },
  updatedAt: true,
  after: ["profiles", "node_groups", "nodes"],
  prepare(row) {
    const id = f.uuid(row, "id");
    const metric = f.text(row, "metric", 1, 128);
    if (!METRIC_PATTERN.test(metric)) throw new InvalidBundleRow("metric", "metric must be an identifier");
    f.oneOf(row, "scope_level", ["global", "profile", "folder", "node", "interface"] as const);
    f.oneOf(row, "direction", ["above", "below"] as const);
    for (const b of ["warning", "critical", "warning_above", "critical_above", "warning_below", "critical_below"]) f.num(row, b, { dflt: null });
    f.num(row, "dwell_samples", { int: true, min: 1, max: 1000, dflt: null });
    const ids = row.scope_ids;
    if (ids !== undefined && ids !== null && (!Array.isArray(ids) || ids.length > 32 || !ids.every((x) => typeof x === "string")))
      throw new InvalidBundleRow("scope_ids", "scope_ids must be at most 32 strings");
    if (row.scope_id !== undefined && row.scope_id !== null && typeof row.scope_id !== "string")
      throw new InvalidBundleRow("scope_id", "scope_id must be a string");
    const rowMatch = f.textOrNull(row, "row_match", 200);
    try {
      return { id, ...normalise({ ...(row as unknown as ThresholdBody), row_match: rowMatch }) } as unknown as Record<string, unknown>;
    } catch (err) {
      if (err instanceof ApiError) throw new InvalidBundleRow("scope_ids", err.message);
      throw err;
    }
  },
  async resolve(rows, imp) {
    const out: typeof rows = [];
    for (const level of Object.keys(TARGET_TABLE)) {
      const here = rows.filter((r) => r.scope_level === level);
      if (!here.length) continue;
      const nodeOf = (t: string) => (level === "interface" ? (parsePort(t)?.node_id ?? t) : t);
      const found = await existingIds(
        imp.client,
        TARGET_TABLE[level],
        here.flatMap((r) => (r.scope_ids as string[]).map(nodeOf)),
      );
      for (const r of here) {
        const targets = r.scope_ids as string[];
        const kept = targets.filter((t) => found.has(nodeOf(t).toLowerCase()));
        if (kept.length < targets.length) imp.note("reference_dropped", targets.length - kept.length, "scope_ids");
        if (kept.length === 0) {
          imp.note("skipped_missing_reference", 1, "scope_ids");
          continue;
        }
        out.push({ ...r, scope_ids: kept });
      }
    }
    return [...rows.filter((r) => !((r.scope_level as string) in TARGET_TABLE)), ...out];
  },
};

export const alertsBundleTables: BundleTable[] = [
  {
    name: "thresholds",
    after: spec.after,
    count: async (ctx, exp) => (await (exp?.client ?? ctx.store).query<{ n: number }>(`SELECT count(*)::int AS n FROM alerts.thresholds`)).rows[0].n,
    export: (ctx, exp) => keysetRows(exp?.client ?? ctx.store, spec),
    import: (_ctx, rows, imp) => importRows(spec, rows, imp),
    prune: (_ctx, rows, imp) => pruneRows(imp.client, spec, rows),
    changed: (ctx) => {
      const resolver = ctx.get(RuleResolver);
      resolver.invalidateRules();
      resolver.invalidateNodes();
    },
  },
];
