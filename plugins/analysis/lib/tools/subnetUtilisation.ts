import { FOLDER_RANGES_VIEW, NODE_DIRECTORY_VIEW } from "../../../inventory/contract.js";
import { round, type AnalysisTool, type FindingDraft, type Severity } from "./types.js";

/** Usable addresses of a prefix: IPv4 without network and broadcast below /31; IPv6 every address. */
export function usableAddresses(family: number, bits: number): number {
  const hostBits = (family === 4 ? 32 : 128) - bits;
  if (family === 4 && hostBits >= 2) return 2 ** hostBits - 2;
  return 2 ** hostBits;
}

/**
 * Each IP range of the folders in scope (inventory folders' ip_ranges) with how many distinct node addresses of the
 * whole inventory fall inside it. IPAM prefixes are not read yet (see the plugin's README).
 */
export const subnetUtilisation: AnalysisTool = {
  name: "subnet_utilisation",
  title: "Subnet utilisation",
  description:
    "For every IP range of the folders in scope (a folder's ip_ranges; for a node scope, the ranges of its folders that hold its address): distinct node addresses in the range against its usable size. Critical at criticalPct, warning at warningPct; below that an info finding only with includeAll.",
  paramsSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      warningPct: { type: "number", minimum: 0, maximum: 100, default: 80 },
      criticalPct: { type: "number", minimum: 0, maximum: 100, default: 95 },
      includeAll: { type: "boolean", default: false },
    },
  },
  async run(run) {
    const p = run.params as { warningPct: number; criticalPct: number; includeAll: boolean };
    const { kind, id, folders } = run.scope;
    const node = kind === "node" ? run.nodes[0] : undefined;
    if (kind === "node" && !node) return [];
    const rows = await run.query<{
      folder_id: string;
      folder_name: string;
      folder_path: string[];
      range: string;
      family: number;
      bits: number;
      used: number;
    }>(
      `WITH r AS (
         SELECT f.id, f.name, f.folder_path, unnest(f.ip_ranges) AS range FROM ${FOLDER_RANGES_VIEW} f
          WHERE ($1::uuid[] IS NULL OR f.folder_path && $1::uuid[])
            AND ($2::uuid IS NULL OR f.folder_path @> ARRAY[$2::uuid]))
       SELECT r.id AS folder_id, r.name AS folder_name, r.folder_path, r.range::text AS range, family(r.range) AS family, masklen(r.range) AS bits,
              (SELECT count(DISTINCT d.address)::int FROM ${NODE_DIRECTORY_VIEW} d WHERE d.address <<= r.range) AS used
         FROM r
        WHERE $3::inet IS NULL OR ($3::inet <<= r.range AND r.id = ANY ($4::uuid[]))
        ORDER BY r.folder_path, r.range`,
      [folders, kind === "folder" ? id : null, node?.address ?? null, node?.folder_path ?? []],
    );
    await run.progress(0.8);
    const out: FindingDraft[] = [];
    for (const r of rows) {
      const size = usableAddresses(r.family, r.bits);
      const pct = size > 0 ? (r.used / size) * 100 : 100;
      const severity: Severity | null = pct >= p.criticalPct ? "critical" : pct >= p.warningPct ? "warning" : p.includeAll ? "info" : null;
      if (!severity) continue;
      out.push({
        severity,
        subject: { kind: "subnet", id: r.range, name: `${r.folder_name} ${r.range}` },
        node_id: null,
        ifindex: null,
        folder_id: r.folder_id,
        folder_path: r.folder_path,
        message: `${r.range} (${r.folder_name}): ${r.used} of ${size} usable addresses in use (${round(pct, 1)} %).`,
        data: { prefix: r.range, used: r.used, size, utilisation_pct: round(pct, 2), source: "folder" },
      });
    }
    return out;
  },
};
