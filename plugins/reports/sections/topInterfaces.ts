/** `top_interfaces`: the busiest interfaces (mean and peak in + out bit/s) or those with the most errors and discards. */
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { METRICS, REPORT_INTERFACES_VIEW, REPORT_SAMPLES_VIEW } from "../../polling/contract.js";
import type { ReportSectionKind } from "../contract.js";
import { limitOf, limitSchema, paramsSchema, round } from "./common.js";

interface Row {
  node: string;
  ifindex: number;
  if_name: string | null;
  a: number | null;
  b: number | null;
  c: number | null;
  d: number | null;
}

const THROUGHPUT = [METRICS.ifInBps, METRICS.ifOutBps];
const ERRORS = [METRICS.ifInErrorsPs, METRICS.ifOutErrorsPs, METRICS.ifInDiscardsPs, METRICS.ifOutDiscardsPs];

export const topInterfacesSection: ReportSectionKind = {
  kind: "top_interfaces",
  title: "Top interfaces",
  description: "Interfaces ranked by mean throughput (in + out bit/s, with peaks) or by errors and discards per second",
  paramsSchema: paramsSchema({ measure: { type: "string", enum: ["throughput", "errors"], default: "throughput" }, limit: limitSchema }),
  async render(ctx, params, _scope, range) {
    const errors = params.measure === "errors";
    const m = errors ? ERRORS : THROUGHPUT;
    const agg = errors
      ? `avg(s.value) FILTER (WHERE s.metric = $6) AS a, avg(s.value) FILTER (WHERE s.metric = $7) AS b,
         avg(s.value) FILTER (WHERE s.metric = $8) AS c, avg(s.value) FILTER (WHERE s.metric = $9) AS d`
      : `avg(s.value) FILTER (WHERE s.metric = $6) AS a, avg(s.value) FILTER (WHERE s.metric = $7) AS b,
         max(s.value) FILTER (WHERE s.metric = $6) AS c, max(s.value) FILTER (WHERE s.metric = $7) AS d`;
    const rank = errors ? "coalesce(a, 0) + coalesce(b, 0) + coalesce(c, 0) + coalesce(d, 0)" : "coalesce(a, 0) + coalesce(b, 0)";
    const rows = await ctx.query<Row>(
      `WITH agg AS (
         SELECT s.node_id, s.ifindex, ${agg}
           FROM ${REPORT_SAMPLES_VIEW} s
          WHERE s.metric = ANY ($1::text[]) AND s.ifindex >= 0 AND s.at >= $2 AND s.at < $3
            AND ($4::uuid[] IS NULL OR s.node_id IN (SELECT id FROM ${NODE_DIRECTORY_VIEW} WHERE folder_path && $4::uuid[]))
          GROUP BY s.node_id, s.ifindex
       ), top AS (SELECT * FROM agg ORDER BY ${rank} DESC, node_id, ifindex LIMIT $5)
       SELECT d.name AS node, t.ifindex, i.if_name, t.a::float8 AS a, t.b::float8 AS b, t.c::float8 AS c, t.d::float8 AS d
         FROM top t JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = t.node_id
         LEFT JOIN ${REPORT_INTERFACES_VIEW} i ON i.node_id = t.node_id AND i.ifindex = t.ifindex
        ORDER BY ${rank} DESC, d.name, t.ifindex`,
      [m, range.from, range.to, ctx.scopeFolders, limitOf(params), ...(errors ? ERRORS : THROUGHPUT)],
    );
    const label = (r: Row) => `${r.node} ${r.if_name ?? `if${r.ifindex}`}`;
    if (errors) {
      return {
        tables: [
          {
            title: "Interfaces with the most errors and discards (mean per second)",
            columns: ["Node", "Interface", "In errors/s", "Out errors/s", "In discards/s", "Out discards/s"],
            rows: rows.map((r) => [r.node, r.if_name ?? `if${r.ifindex}`, round(r.a, 4), round(r.b, 4), round(r.c, 4), round(r.d, 4)]),
          },
        ],
        charts: rows.length
          ? [
              {
                title: "Errors and discards per second",
                unit: "/s",
                labels: rows.map(label),
                values: rows.map((r) => round((r.a ?? 0) + (r.b ?? 0) + (r.c ?? 0) + (r.d ?? 0), 4) ?? 0),
              },
            ]
          : [],
        notes: rows.length ? [] : ["No error or discard samples in the range."],
      };
    }
    return {
      tables: [
        {
          title: "Busiest interfaces (bit/s)",
          columns: ["Node", "Interface", "Mean in", "Mean out", "Peak in", "Peak out"],
          rows: rows.map((r) => [r.node, r.if_name ?? `if${r.ifindex}`, round(r.a, 0), round(r.b, 0), round(r.c, 0), round(r.d, 0)]),
        },
      ],
      charts: rows.length
        ? [{ title: "Mean throughput, in + out", unit: "bit/s", labels: rows.map(label), values: rows.map((r) => round((r.a ?? 0) + (r.b ?? 0), 0) ?? 0) }]
        : [],
      notes: rows.length ? [] : ["No throughput samples in the range."],
    };
  },
};
