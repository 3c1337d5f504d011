/** `availability`: share of liveness checks a node answered over the range, per node or per folder (lowest first). */
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { METRICS, REPORT_SAMPLES_VIEW } from "../../polling/contract.js";
import type { ReportSectionKind } from "../contract.js";
import { folderLabel, limitOf, limitSchema, paramsSchema, round } from "./common.js";

interface Row {
  label: string;
  folder_names: string[] | null;
  nodes: number;
  checks: number;
  up: number;
}

export const availabilitySection: ReportSectionKind = {
  kind: "availability",
  title: "Availability",
  description: "Percentage of liveness checks answered (the polling `reachable` samples), per node or per folder, lowest first",
  paramsSchema: paramsSchema({ group_by: { type: "string", enum: ["node", "folder"], default: "node" }, limit: { ...limitSchema, default: 50 } }),
  async render(ctx, params, _scope, range) {
    const byFolder = params.group_by === "folder";
    const limit = limitOf(params, 50);
    const key = byFolder ? "d.group_id" : "d.id";
    const rows = await ctx.query<Row>(
      `SELECT ${byFolder ? "coalesce(max(d.folder_names[array_length(d.folder_names, 1)]), '(root)')" : "max(d.name)"} AS label,
              ${byFolder ? "max(d.folder_names::text)::text[]" : "max(d.folder_names::text)::text[]"} AS folder_names,
              count(DISTINCT d.id)::int AS nodes, count(*)::int AS checks, sum(CASE WHEN s.value > 0 THEN 1 ELSE 0 END)::int AS up
         FROM ${REPORT_SAMPLES_VIEW} s JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = s.node_id
        WHERE s.metric = $1 AND s.ifindex = -1 AND s.at >= $2 AND s.at < $3 AND ($4::uuid[] IS NULL OR d.folder_path && $4::uuid[])
        GROUP BY ${key}
        ORDER BY sum(CASE WHEN s.value > 0 THEN 1 ELSE 0 END)::float8 / count(*) ASC, 1 ASC
        LIMIT $5`,
      [METRICS.reachable, range.from, range.to, ctx.scopeFolders, limit],
    );
    const pct = (r: Row) => round((100 * r.up) / Math.max(r.checks, 1), 3) ?? 0;
    const table = byFolder
      ? {
          title: "Availability per folder",
          columns: ["Folder", "Nodes", "Checks", "Answered", "Availability %"],
          rows: rows.map((r) => [folderLabel(r.folder_names), r.nodes, r.checks, r.up, pct(r)]),
        }
      : {
          title: "Availability per node",
          columns: ["Node", "Folder", "Checks", "Answered", "Availability %"],
          rows: rows.map((r) => [r.label, folderLabel(r.folder_names), r.checks, r.up, pct(r)]),
        };
    return {
      tables: [table],
      charts: rows.length ? [{ title: `${table.title} (lowest first)`, unit: "%", labels: table.rows.map((r) => String(r[0])), values: rows.map(pct) }] : [],
      notes: rows.length ? [] : ["No liveness samples in the range."],
    };
  },
};
