import { REPORT_INTERFACES_VIEW, REPORT_SAMPLES_VIEW } from "../../../polling/contract.js";
import { interfaceSubject, round, type AnalysisTool, type FindingDraft } from "./types.js";

/** Interfaces whose mean error or discard rate (in + out, per second) over the window is at or above a threshold. */
export const errorHotspots: AnalysisTool = {
  name: "error_hotspots",
  title: "Error and discard hot spots",
  description:
    "Interfaces whose mean error rate (if_in_errors_ps + if_out_errors_ps) or discard rate (if_in_discards_ps + if_out_discards_ps) over the last windowHours is at or above its threshold, worst first, at most top of them (0 = all). Critical at criticalFactor times a threshold, else warning.",
  paramsSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      windowHours: { type: "integer", minimum: 1, maximum: 2160, default: 24 },
      errorsPerSec: { type: "number", minimum: 0, default: 1 },
      discardsPerSec: { type: "number", minimum: 0, default: 10 },
      criticalFactor: { type: "number", minimum: 1, default: 10 },
      top: { type: "integer", minimum: 0, maximum: 100000, default: 50 },
    },
  },
  async run(run) {
    const p = run.params as { windowHours: number; errorsPerSec: number; discardsPerSec: number; criticalFactor: number; top: number };
    const byId = new Map(run.nodes.map((n) => [n.id, n]));
    const rows = await run.query<{ node_id: string; ifindex: number; errors: number | null; discards: number | null; if_name: string | null }>(
      `WITH m AS (
         SELECT s.node_id, s.ifindex, s.metric, avg(s.value) AS v
           FROM ${REPORT_SAMPLES_VIEW} s
          WHERE s.metric IN ('if_in_errors_ps', 'if_out_errors_ps', 'if_in_discards_ps', 'if_out_discards_ps')
            AND s.node_id IN (SELECT unnest($1::uuid[])) AND s.at > $2::timestamptz - make_interval(hours => $3) AND s.at <= $2::timestamptz
          GROUP BY 1, 2, 3)
       SELECT m.node_id, m.ifindex,
              sum(m.v) FILTER (WHERE m.metric LIKE '%errors%') AS errors,
              sum(m.v) FILTER (WHERE m.metric LIKE '%discards%') AS discards,
              i.if_name
         FROM m LEFT JOIN ${REPORT_INTERFACES_VIEW} i ON i.node_id = m.node_id AND i.ifindex = m.ifindex
        GROUP BY m.node_id, m.ifindex, i.if_name`,
      [run.nodes.map((n) => n.id), run.now.toISOString(), p.windowHours],
    );
    await run.progress(0.8);
    const hits: (FindingDraft & { ratio: number })[] = [];
    for (const r of rows) {
      const node = byId.get(r.node_id);
      if (!node) continue;
      const errors = r.errors ?? 0;
      const discards = r.discards ?? 0;
      const errorRatio = p.errorsPerSec > 0 ? errors / p.errorsPerSec : errors > 0 ? Infinity : 0;
      const discardRatio = p.discardsPerSec > 0 ? discards / p.discardsPerSec : discards > 0 ? Infinity : 0;
      const ratio = Math.max(errorRatio, discardRatio);
      if (ratio < 1) continue;
      const what = errorRatio >= discardRatio ? "errors" : "discards";
      hits.push({
        ratio,
        severity: ratio >= p.criticalFactor ? "critical" : "warning",
        ...interfaceSubject(node, r.ifindex, r.if_name),
        message: `${node.name} ${r.if_name ?? r.ifindex}: ${round(what === "errors" ? errors : discards, 2)} ${what}/s on average over ${p.windowHours} h.`,
        data: {
          errors_per_sec: round(errors, 4),
          discards_per_sec: round(discards, 4),
          errors_threshold: p.errorsPerSec,
          discards_threshold: p.discardsPerSec,
          window_hours: p.windowHours,
        },
      });
    }
    hits.sort((a, b) => b.ratio - a.ratio);
    return (p.top > 0 ? hits.slice(0, p.top) : hits).map(({ ratio: _ratio, ...f }) => f);
  },
};
