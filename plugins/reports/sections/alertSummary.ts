/** `alert_summary`: fires by severity, the nodes that fired most, and the mean time to acknowledge and to resolve. */
import { REPORT_ACKS_VIEW, REPORT_HISTORY_VIEW } from "../../alerts/contract.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import type { ReportSectionKind } from "../contract.js";
import { folderLabel, limitOf, limitSchema, paramsSchema, round } from "./common.js";

const SEVERITIES = ["critical", "warning", "info"];

/** History rows in the range the scope may see (non-node subjects only for unrestricted runs). */
const IN_SCOPE = `(h.recorded_at >= $1 AND h.recorded_at < $2 AND
  ($3::uuid[] IS NULL OR h.node_id IN (SELECT id FROM ${NODE_DIRECTORY_VIEW} WHERE folder_path && $3::uuid[])))`;

function duration(secs: number | null): string {
  if (secs === null) return "n/a";
  if (secs < 60) return `${Math.round(secs)} s`;
  if (secs < 3600) return `${round(secs / 60, 1)} min`;
  return `${round(secs / 3600, 1)} h`;
}

export const alertSummarySection: ReportSectionKind = {
  kind: "alert_summary",
  title: "Alerts",
  description: "Alert fires by severity, the nodes with the most fires, and the mean time to acknowledge and to resolve",
  paramsSchema: paramsSchema({ limit: limitSchema }),
  async render(ctx, params, _scope, range) {
    const base = [range.from, range.to, ctx.scopeFolders];
    const bySeverity = await ctx.query<{ severity: string; fires: number; resolves: number }>(
      `SELECT h.severity, count(*) FILTER (WHERE NOT h.resolved)::int AS fires, count(*) FILTER (WHERE h.resolved)::int AS resolves
         FROM ${REPORT_HISTORY_VIEW} h WHERE ${IN_SCOPE} GROUP BY h.severity`,
      base,
    );
    const topNodes = await ctx.query<{ name: string; folder_names: string[]; fires: number; critical: number; warning: number; info: number }>(
      `SELECT d.name, d.folder_names, count(*)::int AS fires,
              count(*) FILTER (WHERE h.severity = 'critical')::int AS critical, count(*) FILTER (WHERE h.severity = 'warning')::int AS warning,
              count(*) FILTER (WHERE h.severity = 'info')::int AS info
         FROM ${REPORT_HISTORY_VIEW} h JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = h.node_id
        WHERE ${IN_SCOPE} AND NOT h.resolved
        GROUP BY d.id, d.name, d.folder_names ORDER BY fires DESC, d.name LIMIT $4`,
      [...base, limitOf(params)],
    );
    // Time to acknowledge: each ack made in the range, from the latest fire of its incident and severity before it.
    const [ack] = await ctx.query<{ n: number; mean_secs: number | null }>(
      `SELECT count(*)::int AS n, avg(extract(epoch FROM a.acked_at) - f.at_unix_ms / 1000.0)::float8 AS mean_secs
         FROM ${REPORT_ACKS_VIEW} a
         CROSS JOIN LATERAL (SELECT h.at_unix_ms FROM ${REPORT_HISTORY_VIEW} h
                              WHERE h.incident_key = a.incident_key AND h.severity = a.severity AND NOT h.resolved
                                AND h.at_unix_ms <= extract(epoch FROM a.acked_at) * 1000
                              ORDER BY h.at_unix_ms DESC LIMIT 1) f
        WHERE a.acked_at >= $1 AND a.acked_at < $2
          AND ($3::uuid[] IS NULL OR a.node_id IN (SELECT id FROM ${NODE_DIRECTORY_VIEW} WHERE folder_path && $3::uuid[]))`,
      base,
    );
    // Time to resolve: each clear in the range, from the latest fire of its incident before it.
    const [res] = await ctx.query<{ n: number; mean_secs: number | null }>(
      `SELECT count(*)::int AS n, avg((h.at_unix_ms - f.at_unix_ms) / 1000.0)::float8 AS mean_secs
         FROM ${REPORT_HISTORY_VIEW} h
         CROSS JOIN LATERAL (SELECT p.at_unix_ms FROM ${REPORT_HISTORY_VIEW} p
                              WHERE p.incident_key = h.incident_key AND NOT p.resolved AND p.at_unix_ms <= h.at_unix_ms
                              ORDER BY p.at_unix_ms DESC LIMIT 1) f
        WHERE ${IN_SCOPE} AND h.resolved`,
      base,
    );
    const sev = new Map(bySeverity.map((r) => [r.severity, r]));
    const severityRows = SEVERITIES.map((s) => [s, sev.get(s)?.fires ?? 0, sev.get(s)?.resolves ?? 0]);
    return {
      tables: [
        { title: "Alerts by severity", columns: ["Severity", "Fired", "Resolved"], rows: severityRows },
        {
          title: "Nodes with the most alerts",
          columns: ["Node", "Folder", "Fired", "Critical", "Warning", "Info"],
          rows: topNodes.map((r) => [r.name, folderLabel(r.folder_names), r.fires, r.critical, r.warning, r.info]),
        },
        {
          title: "Response times",
          columns: ["Measure", "Incidents", "Mean", "Mean (seconds)"],
          rows: [
            ["Mean time to acknowledge", ack?.n ?? 0, duration(ack?.mean_secs ?? null), round(ack?.mean_secs ?? null, 1)],
            ["Mean time to resolve", res?.n ?? 0, duration(res?.mean_secs ?? null), round(res?.mean_secs ?? null, 1)],
          ],
        },
      ],
      charts: [{ title: "Alerts fired by severity", unit: "alerts", labels: SEVERITIES, values: severityRows.map((r) => Number(r[1])) }],
    };
  },
};
