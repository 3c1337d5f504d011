import { REPORT_EVENTS_VIEW } from "../../../events/contract.js";
import { REPORT_SAMPLES_VIEW } from "../../../polling/contract.js";
import { nodeSubject, round, type AnalysisTool, type FindingDraft } from "./types.js";

/** Nodes with neither a polled sample nor a received event within the last `hours`. */
export const silentNodes: AnalysisTool = {
  name: "silent_nodes",
  title: "Silent nodes",
  description:
    "Nodes with no polled sample and no received event (syslog, trap) within the last hours. Warning; critical when silent for criticalHours or more (or never heard from within lookbackDays). data.last_seen is the newest sample or event within lookbackDays, or null.",
  paramsSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      hours: { type: "integer", minimum: 1, maximum: 8760, default: 24 },
      criticalHours: { type: "integer", minimum: 1, maximum: 87600, default: 72 },
      lookbackDays: { type: "integer", minimum: 1, maximum: 366, default: 30 },
    },
  },
  async run(run) {
    const p = run.params as { hours: number; criticalHours: number; lookbackDays: number };
    const ids = run.nodes.map((n) => n.id);
    const now = run.now.toISOString();
    const heard = await run.query<{ node_id: string }>(
      `SELECT DISTINCT s.node_id FROM ${REPORT_SAMPLES_VIEW} s
        WHERE s.node_id IN (SELECT unnest($1::uuid[])) AND s.at > $2::timestamptz - make_interval(hours => $3) AND s.at <= $2::timestamptz
       UNION
       SELECT DISTINCT e.node_id FROM ${REPORT_EVENTS_VIEW} e
        WHERE e.node_id IN (SELECT unnest($1::uuid[])) AND e.received_at > $2::timestamptz - make_interval(hours => $3) AND e.received_at <= $2::timestamptz`,
      [ids, now, p.hours],
    );
    await run.progress(0.5);
    const alive = new Set(heard.map((r) => r.node_id));
    const silent = run.nodes.filter((n) => !alive.has(n.id));
    if (!silent.length) return [];
    const last = await run.query<{ node_id: string; last_seen: string | null }>(
      `SELECT x.node_id, to_char(max(x.at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS last_seen FROM (
         SELECT s.node_id, max(s.at) AS at FROM ${REPORT_SAMPLES_VIEW} s
          WHERE s.node_id IN (SELECT unnest($1::uuid[])) AND s.at > $2::timestamptz - make_interval(days => $3) AND s.at <= $2::timestamptz GROUP BY s.node_id
         UNION ALL
         SELECT e.node_id, max(e.received_at) FROM ${REPORT_EVENTS_VIEW} e
          WHERE e.node_id IN (SELECT unnest($1::uuid[])) AND e.received_at > $2::timestamptz - make_interval(days => $3) AND e.received_at <= $2::timestamptz GROUP BY e.node_id) x
        GROUP BY x.node_id`,
      [silent.map((n) => n.id), now, p.lookbackDays],
    );
    await run.progress(0.8);
    const lastSeen = new Map(last.map((r) => [r.node_id, r.last_seen]));
    return silent.map((node): FindingDraft => {
      const seen = lastSeen.get(node.id) ?? null;
      const silentHours = seen === null ? null : (run.now.getTime() - Date.parse(seen)) / 3600000;
      return {
        severity: silentHours === null || silentHours >= p.criticalHours ? "critical" : "warning",
        ...nodeSubject(node),
        message:
          silentHours === null
            ? `${node.name}: no sample or event in the last ${p.lookbackDays} days.`
            : `${node.name}: no sample or event for ${round(silentHours, 1)} h.`,
        data: { last_seen: seen, silent_hours: silentHours === null ? null : round(silentHours, 2), hours: p.hours },
      };
    });
  },
};
