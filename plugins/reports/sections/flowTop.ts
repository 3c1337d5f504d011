/** `flow_top`: top talkers (source addresses by bytes) and top source AS, from the flow rollups. */
import { REPORT_ASN_NAMES_VIEW, REPORT_ASN_PREFIXES_VIEW, REPORT_FLOWS_1H_VIEW, REPORT_FLOWS_1M_VIEW } from "../../flows/contract.js";
import type { ReportSectionKind } from "../contract.js";
import { limitOf, limitSchema, paramsSchema } from "./common.js";

/** Ranges up to this read the minute rollups (exact); longer ones the hour rollups (whole hours, kept longer). */
const MINUTE_ROLLUPS_UP_TO_MS = 2 * 86400000;

export const flowTopSection: ReportSectionKind = {
  kind: "flow_top",
  title: "Flows",
  description: "Top talkers (source addresses by bytes) and top source autonomous systems, from the flow rollups",
  paramsSchema: paramsSchema({ limit: limitSchema }),
  async render(ctx, params, _scope, range) {
    const minute = range.to.getTime() - range.from.getTime() <= MINUTE_ROLLUPS_UP_TO_MS;
    const view = minute ? REPORT_FLOWS_1M_VIEW : REPORT_FLOWS_1H_VIEW;
    const from = minute ? "$1" : "date_trunc('hour', $1::timestamptz)";
    const where = `r.at >= ${from} AND r.at < $2 AND ($3::uuid[] IS NULL OR r.folder_path && $3::uuid[])`;
    const base = [range.from, range.to, ctx.scopeFolders, limitOf(params)];
    const talkers = await ctx.query<{ addr: string; bytes: number; packets: number; flows: number; peers: number }>(
      `SELECT host(r.src) AS addr, sum(r.bytes)::float8 AS bytes, sum(r.packets)::float8 AS packets, sum(r.flows)::float8 AS flows,
              count(DISTINCT r.dst)::int AS peers
         FROM ${view} r WHERE ${where} GROUP BY r.src ORDER BY bytes DESC, addr LIMIT $4`,
      base,
    );
    // The AS a record carried, else the longest matching prefix of the AS table, else 0 (unknown).
    const ases = await ctx.query<{ asn: number; name: string | null; bytes: number; flows: number }>(
      `WITH by_src AS (
         SELECT r.src, max(r.src_as) AS src_as, sum(r.bytes) AS bytes, sum(r.flows) AS flows FROM ${view} r WHERE ${where} GROUP BY r.src
       ), resolved AS (
         SELECT CASE WHEN b.src_as > 0 THEN b.src_as
                     ELSE coalesce((SELECT p.asn FROM ${REPORT_ASN_PREFIXES_VIEW} p WHERE p.prefix >>= b.src ORDER BY masklen(p.prefix) DESC LIMIT 1), 0) END AS asn,
                b.bytes, b.flows
           FROM by_src b
       )
       SELECT x.asn::float8 AS asn, n.name, sum(x.bytes)::float8 AS bytes, sum(x.flows)::float8 AS flows
         FROM resolved x LEFT JOIN ${REPORT_ASN_NAMES_VIEW} n ON n.asn = x.asn
        GROUP BY x.asn, n.name ORDER BY bytes DESC, x.asn LIMIT $4`,
      base,
    );
    return {
      tables: [
        {
          title: "Top talkers",
          columns: ["Address", "Bytes", "Packets", "Flows", "Peers"],
          rows: talkers.map((r) => [r.addr, r.bytes, r.packets, r.flows, r.peers]),
        },
        {
          title: "Top source AS",
          columns: ["AS", "Name", "Bytes", "Flows"],
          rows: ases.map((r) => [r.asn ? `AS${r.asn}` : "unknown", r.name ?? "", r.bytes, r.flows]),
        },
      ],
      charts: talkers.length ? [{ title: "Top talkers by bytes", unit: "bytes", labels: talkers.map((r) => r.addr), values: talkers.map((r) => r.bytes) }] : [],
      notes: talkers.length ? [] : ["No flow records in the range."],
    };
  },
};
