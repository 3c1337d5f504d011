import { REPORT_INTERFACES_VIEW, REPORT_SAMPLES_VIEW } from "../../../polling/contract.js";
import { interfaceSubject, round, type AnalysisTool, type FindingDraft, type Severity } from "./types.js";

/**
 * Days until an interface reaches thresholdPct of its speed: a least-squares line through the if_in_bps and if_out_bps
 * samples over lookbackDays (bps per hour), extended forward; the direction that gets there first counts.
 */
export const capacityForecast: AnalysisTool = {
  name: "capacity_forecast",
  title: "Interface capacity forecast",
  description:
    "Days until each interface reaches thresholdPct of its ifSpeed, from a least-squares line through its in/out bps samples over the last lookbackDays (at least minHours of history). Reports interfaces expected there within horizonDays (critical within criticalDays, warning within warningDays, else info); a flat or falling trend is never reported.",
  paramsSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      lookbackDays: { type: "integer", minimum: 1, maximum: 90, default: 14 },
      thresholdPct: { type: "number", exclusiveMinimum: 0, maximum: 100, default: 80 },
      horizonDays: { type: "integer", minimum: 1, maximum: 3650, default: 90 },
      warningDays: { type: "integer", minimum: 0, maximum: 3650, default: 30 },
      criticalDays: { type: "integer", minimum: 0, maximum: 3650, default: 7 },
      minHours: { type: "integer", minimum: 2, maximum: 2160, default: 24 },
    },
  },
  async run(run) {
    const p = run.params as { lookbackDays: number; thresholdPct: number; horizonDays: number; warningDays: number; criticalDays: number; minHours: number };
    const byId = new Map(run.nodes.map((n) => [n.id, n]));
    const nowSecs = run.now.getTime() / 1000;
    // A least-squares line through the rate samples, x = hours relative to now (small numbers keep it exact enough), y = bps:
    // with regular polling, the line through the hourly means. One pass, one group per interface and direction.
    const rows = await run.query<{
      node_id: string;
      ifindex: number;
      metric: string;
      hours: number;
      slope: number | null;
      intercept: number | null;
      if_name: string | null;
      if_speed_bps: string | null;
    }>(
      `WITH t AS (
         SELECT s.node_id, s.ifindex, s.metric,
                extract(epoch FROM max(s.at) - min(s.at))::double precision / 3600 AS hours,
                regr_slope(s.value, (extract(epoch FROM s.at)::double precision - $2::double precision) / 3600) AS slope,
                regr_intercept(s.value, (extract(epoch FROM s.at)::double precision - $2::double precision) / 3600) AS intercept
           FROM ${REPORT_SAMPLES_VIEW} s
          WHERE s.metric IN ('if_in_bps', 'if_out_bps') AND s.node_id IN (SELECT unnest($1::uuid[]))
            AND s.at >= to_timestamp($2::double precision) - make_interval(days => $3) AND s.at <= to_timestamp($2::double precision)
          GROUP BY 1, 2, 3)
       SELECT t.node_id, t.ifindex, t.metric, t.hours, t.slope, t.intercept, i.if_name, i.if_speed_bps::text AS if_speed_bps
         FROM t JOIN ${REPORT_INTERFACES_VIEW} i ON i.node_id = t.node_id AND i.ifindex = t.ifindex
        WHERE i.if_speed_bps > 0`,
      [run.nodes.map((n) => n.id), nowSecs, p.lookbackDays],
    );
    await run.progress(0.8);
    const best = new Map<string, FindingDraft & { days: number }>();
    for (const r of rows) {
      const node = byId.get(r.node_id);
      if (!node || r.hours < p.minHours || r.slope === null || r.intercept === null) continue;
      const speed = Number(r.if_speed_bps);
      const limit = (speed * p.thresholdPct) / 100;
      const slopePerHour = r.slope;
      const nowBps = r.intercept; // x = 0 is now
      let days: number;
      if (nowBps >= limit) days = 0;
      else if (slopePerHour <= 0) continue;
      else days = (limit - nowBps) / slopePerHour / 24;
      if (days > p.horizonDays) continue;
      const severity: Severity = days <= p.criticalDays ? "critical" : days <= p.warningDays ? "warning" : "info";
      const key = `${r.node_id}:${r.ifindex}`;
      const prev = best.get(key);
      if (prev && prev.days <= days) continue;
      const direction = r.metric === "if_in_bps" ? "in" : "out";
      const pctNow = (nowBps / speed) * 100;
      best.set(key, {
        days,
        severity,
        ...interfaceSubject(node, r.ifindex, r.if_name),
        message:
          days === 0
            ? `${node.name} ${r.if_name ?? r.ifindex}: ${direction} traffic is already at ${round(pctNow, 1)} % of its speed (threshold ${p.thresholdPct} %).`
            : `${node.name} ${r.if_name ?? r.ifindex}: ${direction} traffic reaches ${p.thresholdPct} % of its speed in about ${round(days, 1)} days.`,
        data: {
          direction,
          days_until_threshold: round(days, 2),
          threshold_pct: p.thresholdPct,
          if_speed_bps: speed,
          trend_bps_now: round(nowBps, 0),
          utilisation_pct_now: round(pctNow, 2),
          slope_bps_per_day: round(slopePerHour * 24, 0),
          history_hours: round(r.hours, 1),
        },
      });
    }
    return [...best.values()].map(({ days: _days, ...f }) => f);
  },
};
