/** `event_summary`: received events by kind, by source and by rule outcome. */
import { REPORT_EVENTS_VIEW } from "../../events/contract.js";
import type { ReportSectionKind } from "../contract.js";
import { limitOf, limitSchema, paramsSchema } from "./common.js";

/** Events in the range the scope may see (a scoped run sees only events attributed to a node in its folders). */
const WHERE = `e.received_at >= $1 AND e.received_at < $2 AND ($3::uuid[] IS NULL OR e.folder_path && $3::uuid[])`;

export const eventSummarySection: ReportSectionKind = {
  kind: "event_summary",
  title: "Events",
  description: "Syslog messages, traps and ingested events by kind, by source and by rule outcome",
  paramsSchema: paramsSchema({ limit: limitSchema }),
  async render(ctx, params, _scope, range) {
    const base = [range.from, range.to, ctx.scopeFolders];
    const limit = limitOf(params);
    const byKind = await ctx.query<{ k: string; n: number }>(
      `SELECT e.kind AS k, count(*)::int AS n FROM ${REPORT_EVENTS_VIEW} e WHERE ${WHERE} GROUP BY 1 ORDER BY n DESC, 1 LIMIT $4`,
      [...base, limit],
    );
    const bySource = await ctx.query<{ k: string; kind: string; n: number }>(
      `SELECT coalesce(e.source_name, '(no source)') AS k, min(e.kind) AS kind, count(*)::int AS n
         FROM ${REPORT_EVENTS_VIEW} e WHERE ${WHERE} GROUP BY 1 ORDER BY n DESC, 1 LIMIT $4`,
      [...base, limit],
    );
    const byOutcome = await ctx.query<{ k: string; n: number }>(
      `SELECT e.action AS k, count(*)::int AS n FROM ${REPORT_EVENTS_VIEW} e WHERE ${WHERE} GROUP BY 1 ORDER BY n DESC, 1 LIMIT $4`,
      [...base, limit],
    );
    const total = byKind.reduce((s, r) => s + r.n, 0);
    return {
      tables: [
        { title: "Events by kind", columns: ["Kind", "Events"], rows: byKind.map((r) => [r.k, r.n]) },
        { title: "Events by source", columns: ["Source", "Event kind", "Events"], rows: bySource.map((r) => [r.k, r.kind, r.n]) },
        { title: "Events by rule outcome", columns: ["Outcome", "Events"], rows: byOutcome.map((r) => [r.k, r.n]) },
      ],
      charts: byKind.length ? [{ title: "Events by kind", unit: "events", labels: byKind.map((r) => r.k), values: byKind.map((r) => r.n) }] : [],
      notes: total ? [] : ["No events in the range."],
    };
  },
};
