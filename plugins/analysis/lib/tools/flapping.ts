import { REPORT_HISTORY_VIEW } from "../../../alerts/contract.js";
import { REPORT_INTERFACES_VIEW, REPORT_SAMPLES_VIEW } from "../../../polling/contract.js";
import { interfaceSubject, nodeSubject, type AnalysisTool, type FindingDraft } from "./types.js";

/**
 * Flapping subjects within the window: interfaces by oper-status transitions (if_oper_up samples), nodes by
 * reachability transitions (reachable samples) or by alert history rows (fires and clears) of the node.
 */
export const flapping: AnalysisTool = {
  name: "flapping",
  title: "Flapping interfaces and nodes",
  description:
    "Interfaces whose oper status changed at least minTransitions times within the last windowHours (if_oper_up samples), and nodes whose reachability changed that often (reachable samples) or that have at least minTransitions alert history rows (fires and clears) in the window. Critical from criticalTransitions, else warning.",
  paramsSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      windowHours: { type: "integer", minimum: 1, maximum: 2160, default: 24 },
      minTransitions: { type: "integer", minimum: 1, maximum: 100000, default: 4 },
      criticalTransitions: { type: "integer", minimum: 1, maximum: 100000, default: 10 },
      includeAlerts: { type: "boolean", default: true },
    },
  },
  async run(run) {
    const p = run.params as { windowHours: number; minTransitions: number; criticalTransitions: number; includeAlerts: boolean };
    const ids = run.nodes.map((n) => n.id);
    const byId = new Map(run.nodes.map((n) => [n.id, n]));
    const args = [ids, run.now.toISOString(), p.windowHours];
    const window = `s.at > $2::timestamptz - make_interval(hours => $3) AND s.at <= $2::timestamptz`;
    const transitions = await run.query<{ node_id: string; ifindex: number; metric: string; transitions: number; if_name: string | null }>(
      `SELECT x.node_id, x.ifindex, x.metric, count(*) FILTER (WHERE x.prev IS NOT NULL AND (x.value > 0.5) <> (x.prev > 0.5))::int AS transitions, i.if_name
         FROM (SELECT s.node_id, s.ifindex, s.metric, s.value, lag(s.value) OVER (PARTITION BY s.node_id, s.metric, s.ifindex ORDER BY s.at) AS prev
                 FROM ${REPORT_SAMPLES_VIEW} s
                WHERE s.metric IN ('if_oper_up', 'reachable') AND s.node_id IN (SELECT unnest($1::uuid[])) AND ${window}) x
         LEFT JOIN ${REPORT_INTERFACES_VIEW} i ON x.metric = 'if_oper_up' AND i.node_id = x.node_id AND i.ifindex = x.ifindex
        GROUP BY x.node_id, x.ifindex, x.metric, i.if_name`,
      args,
    );
    await run.progress(0.5);
    const alertRows = p.includeAlerts
      ? await run.query<{ node_id: string; fires: number; clears: number }>(
          `SELECT h.node_id, count(*) FILTER (WHERE NOT h.resolved)::int AS fires, count(*) FILTER (WHERE h.resolved)::int AS clears
             FROM ${REPORT_HISTORY_VIEW} h
            WHERE h.subject_kind = 'node' AND h.node_id IN (SELECT unnest($1::uuid[]))
              AND h.recorded_at > $2::timestamptz - make_interval(hours => $3) AND h.recorded_at <= $2::timestamptz
            GROUP BY h.node_id`,
          args,
        )
      : [];
    await run.progress(0.8);
    const severity = (n: number) => (n >= p.criticalTransitions ? "critical" : "warning");
    const out: FindingDraft[] = [];
    const nodeCounts = new Map<string, { reach: number; fires: number; clears: number }>();
    for (const r of transitions) {
      const node = byId.get(r.node_id);
      if (!node) continue;
      if (r.metric === "reachable") {
        nodeCounts.set(r.node_id, { ...(nodeCounts.get(r.node_id) ?? { fires: 0, clears: 0 }), reach: r.transitions });
      } else if (r.transitions >= p.minTransitions) {
        out.push({
          severity: severity(r.transitions),
          ...interfaceSubject(node, r.ifindex, r.if_name),
          message: `${node.name} ${r.if_name ?? r.ifindex}: oper status changed ${r.transitions} times in ${p.windowHours} h.`,
          data: { oper_transitions: r.transitions, window_hours: p.windowHours },
        });
      }
    }
    for (const a of alertRows) nodeCounts.set(a.node_id, { reach: nodeCounts.get(a.node_id)?.reach ?? 0, fires: a.fires, clears: a.clears });
    for (const [nodeId, c] of nodeCounts) {
      const node = byId.get(nodeId);
      const alerts = c.fires + c.clears;
      const worst = Math.max(c.reach, alerts);
      if (!node || worst < p.minTransitions) continue;
      out.push({
        severity: severity(worst),
        ...nodeSubject(node),
        message:
          c.reach >= alerts
            ? `${node.name}: reachability changed ${c.reach} times in ${p.windowHours} h.`
            : `${node.name}: ${c.fires} alert fires and ${c.clears} clears in ${p.windowHours} h.`,
        data: { reachability_transitions: c.reach, alert_fires: c.fires, alert_clears: c.clears, window_hours: p.windowHours },
      });
    }
    return out;
  },
};
