/** `inventory`: nodes by profile, by vendor and by folder (as they are now; the range does not apply). */
import { NODE_DIRECTORY_VIEW, PROFILE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import type { ReportSectionKind } from "../contract.js";
import { folderLabel, limitOf, paramsSchema } from "./common.js";

export const inventorySection: ReportSectionKind = {
  kind: "inventory",
  title: "Inventory",
  description: "Nodes by device profile, by vendor and by folder, as the inventory holds them now",
  paramsSchema: paramsSchema({ limit: { type: "integer", minimum: 1, maximum: 1000, default: 50 } }),
  async render(ctx, params) {
    const base = [ctx.scopeFolders, limitOf(params, 50)];
    const scoped = `($1::uuid[] IS NULL OR d.folder_path && $1::uuid[])`;
    const byProfile = await ctx.query<{ k: string | null; n: number }>(
      `SELECT p.name AS k, count(*)::int AS n FROM ${NODE_DIRECTORY_VIEW} d LEFT JOIN ${PROFILE_DIRECTORY_VIEW} p ON p.id = d.profile_id
        WHERE ${scoped} GROUP BY p.name ORDER BY n DESC, k NULLS LAST LIMIT $2`,
      base,
    );
    const byVendor = await ctx.query<{ k: string | null; n: number }>(
      `SELECT d.vendor AS k, count(*)::int AS n FROM ${NODE_DIRECTORY_VIEW} d WHERE ${scoped} GROUP BY d.vendor ORDER BY n DESC, k NULLS LAST LIMIT $2`,
      base,
    );
    const byFolder = await ctx.query<{ names: string[]; n: number }>(
      `SELECT d.folder_names AS names, count(*)::int AS n FROM ${NODE_DIRECTORY_VIEW} d WHERE ${scoped}
        GROUP BY d.folder_names ORDER BY n DESC, d.folder_names LIMIT $2`,
      base,
    );
    const total = byVendor.reduce((s, r) => s + r.n, 0);
    return {
      tables: [
        { title: "Nodes by profile", columns: ["Profile", "Nodes"], rows: byProfile.map((r) => [r.k ?? "(no profile)", r.n]) },
        { title: "Nodes by vendor", columns: ["Vendor", "Nodes"], rows: byVendor.map((r) => [r.k ?? "(unknown)", r.n]) },
        { title: "Nodes by folder", columns: ["Folder", "Nodes"], rows: byFolder.map((r) => [folderLabel(r.names), r.n]) },
      ],
      charts: byVendor.length
        ? [{ title: "Nodes by vendor", unit: "nodes", labels: byVendor.map((r) => r.k ?? "(unknown)"), values: byVendor.map((r) => r.n) }]
        : [],
      notes: total ? [] : ["No nodes."],
    };
  },
};
