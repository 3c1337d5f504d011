import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import type { HistoryPoint, InterfaceTopEntry, NodeInterfaceView, NodeSeriesView } from "../models/MetricsModels.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

/** "none" in the key columns of latest and samples. */
const NONE = -1;

export interface TopQuery {
  /** Stored rate metrics added up per interface (one or two). */
  metrics: readonly string[];
  /** null = the latest table; else the aggregate over the trailing window. */
  window: { fn: "avg" | "max"; secs: number } | null;
  latestMaxAgeSecs: number;
  /** Folder ids of a restricted caller, or null for scope All. */
  folders: string[] | null;
  limit: number;
}

export interface HistoryQuery {
  nodeId: string;
  metric: string;
  ifindex: number;
  row: number;
  fromMs: number;
  toMs: number;
  /** Bucket width in seconds, or null for raw samples. */
  step: number | null;
  /** Rows fetched at most (raw: the cap plus one, to tell "too many"). */
  limit: number;
}

const TS = (ms: string) => `timestamptz 'epoch' + ${ms}::bigint * interval '1 millisecond'`;

/** SQL for the metric reads: polling.latest, polling.samples and polling.interfaces, filtered through inventory's published node directory. */
@Injectable()
export class MetricsRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  /**
   * Interfaces ranked by the sum of `metrics`. The latest variant reads polling.latest (its
   * primary key per node); the windowed one finds the interfaces with a rate inside the window
   * in polling.latest, then reads each one's samples through the series index (node, metric,
   * ifindex, row, at) in the window's partitions only.
   */
  async interfaceTop(q: TopQuery): Promise<InterfaceTopEntry[]> {
    const params: unknown[] = [q.folders, q.metrics, q.limit];
    let values: string;
    if (q.window === null) {
      params.push(q.latestMaxAgeSecs);
      values = `
        SELECT l.node_id, l.ifindex, sum(l.value) AS value, max(l.if_name) AS latest_if_name
          FROM ${this.t("latest")} l JOIN vis ON vis.id = l.node_id
         WHERE l.metric = ANY ($2::text[]) AND l.ifindex >= 0 AND l.row_key = ${NONE}
           AND l.at >= now() - make_interval(secs => $4)
         GROUP BY l.node_id, l.ifindex`;
    } else {
      params.push(q.window.secs);
      const series = `x.node_id = s.node_id AND x.metric = ANY ($2::text[]) AND x.ifindex = s.ifindex AND x.row_key = ${NONE} AND x.at >= s.since`;
      // avg: the per-metric averages added up; max: the largest in + out sum of one poll (samples of one poll share `at`).
      const agg =
        q.window.fn === "avg"
          ? `SELECT sum(m.v) AS value FROM (SELECT avg(x.value) AS v FROM ${this.t("samples")} x WHERE ${series} GROUP BY x.metric) m`
          : q.metrics.length === 1
            ? `SELECT max(x.value) AS value FROM ${this.t("samples")} x WHERE ${series}`
            : `SELECT max(m.v) AS value FROM (SELECT sum(x.value) AS v FROM ${this.t("samples")} x WHERE ${series} GROUP BY x.at) m`;
      values = `
        SELECT s.node_id, s.ifindex, a.value, s.latest_if_name
          FROM (SELECT l.node_id, l.ifindex, max(l.if_name) AS latest_if_name, now() - make_interval(secs => $4) AS since
                  FROM ${this.t("latest")} l JOIN vis ON vis.id = l.node_id
                 WHERE l.metric = ANY ($2::text[]) AND l.ifindex >= 0 AND l.row_key = ${NONE}
                   AND l.at >= now() - make_interval(secs => $4)
                 GROUP BY l.node_id, l.ifindex) s
          CROSS JOIN LATERAL (${agg}) a
         WHERE a.value IS NOT NULL`;
    }
    const { rows } = await this.ctx.store.query<InterfaceTopEntry & { if_speed_bps: string | number | null }>(
      `WITH vis AS (
         SELECT d.id, d.name FROM ${NODE_DIRECTORY_VIEW} d WHERE $1::uuid[] IS NULL OR d.folder_path && $1::uuid[]
       ), val AS (${values})
       SELECT val.node_id, vis.name AS node_name, val.ifindex, coalesce(i.if_name, val.latest_if_name) AS if_name,
              i.if_alias, i.if_speed_bps, val.value
         FROM val JOIN vis ON vis.id = val.node_id
         LEFT JOIN ${this.t("interfaces")} i ON i.node_id = val.node_id AND i.ifindex = val.ifindex
        ORDER BY val.value DESC, vis.name, val.node_id, val.ifindex
        LIMIT $3`,
      params,
    );
    return rows.map((r) => ({ ...r, if_speed_bps: r.if_speed_bps === null ? null : Number(r.if_speed_bps) }));
  }

  /** Whether the node exists and the caller's folders (null = all) cover it. */
  async nodeVisible(nodeId: string, folders: string[] | null): Promise<boolean> {
    const { rows } = await this.ctx.store.query(
      `SELECT 1 FROM ${NODE_DIRECTORY_VIEW} d WHERE d.id = $1 AND ($2::uuid[] IS NULL OR d.folder_path && $2::uuid[])`,
      [nodeId, folders],
    );
    return rows.length > 0;
  }

  /** A node's interfaces with their latest rates, by ifindex. */
  async nodeInterfaces(nodeId: string): Promise<NodeInterfaceView[]> {
    const rate = (metric: string) => `max(l.value) FILTER (WHERE l.metric = '${metric}')`;
    const { rows } = await this.ctx.store.query<NodeInterfaceView & { if_speed_bps: string | number | null }>(
      `SELECT i.ifindex, coalesce(i.if_name, max(l.if_name)) AS if_name, i.if_alias, i.if_speed_bps, i.oper_up,
              ${rate("if_in_bps")} AS in_bps, ${rate("if_out_bps")} AS out_bps,
              ${rate("if_in_errors_ps")} AS in_errors_ps, ${rate("if_out_errors_ps")} AS out_errors_ps,
              ${rate("if_in_discards_ps")} AS in_discards_ps, ${rate("if_out_discards_ps")} AS out_discards_ps,
              ${rate("if_util_in_pct")} AS util_in_pct, ${rate("if_util_out_pct")} AS util_out_pct,
              ${isoTimestamp("max(l.at)")} AS rates_at, ${isoTimestamp("i.last_polled_at")} AS last_polled_at
         FROM ${this.t("interfaces")} i
         LEFT JOIN ${this.t("latest")} l ON l.node_id = i.node_id AND l.ifindex = i.ifindex AND l.row_key = ${NONE}
              AND l.metric IN ('if_in_bps', 'if_out_bps', 'if_in_errors_ps', 'if_out_errors_ps', 'if_in_discards_ps',
                               'if_out_discards_ps', 'if_util_in_pct', 'if_util_out_pct')
        WHERE i.node_id = $1
        GROUP BY i.node_id, i.ifindex
        ORDER BY i.ifindex`,
      [nodeId],
    );
    return rows.map((r) => ({ ...r, if_speed_bps: r.if_speed_bps === null ? null : Number(r.if_speed_bps) }));
  }

  /** One series in [from, to): raw samples, or buckets of `step` seconds aligned to the epoch. */
  async history(q: HistoryQuery): Promise<HistoryPoint[]> {
    const where = `node_id = $1 AND metric = $2 AND ifindex = $3 AND row_key = $4 AND at >= ${TS("$5")} AND at < ${TS("$6")}`;
    const base = [q.nodeId, q.metric, q.ifindex, q.row, q.fromMs, q.toMs, q.limit];
    if (q.step === null) {
      const { rows } = await this.ctx.store.query<HistoryPoint>(
        `SELECT ${isoTimestamp("at")} AS at, value, value AS min, value AS max, 1 AS count
           FROM ${this.t("samples")} WHERE ${where} ORDER BY at LIMIT $7`,
        base,
      );
      return rows;
    }
    const { rows } = await this.ctx.store.query<HistoryPoint & { count: string | number }>(
      `SELECT ${isoTimestamp("b")} AS at, avg AS value, min, max, count
         FROM (SELECT date_bin(make_interval(secs => $8), at, timestamptz 'epoch') AS b,
                      avg(value) AS avg, min(value) AS min, max(value) AS max, count(*) AS count
                 FROM ${this.t("samples")} WHERE ${where}
                GROUP BY 1) g
        ORDER BY b LIMIT $7`,
      [...base, q.step],
    );
    return rows.map((r) => ({ ...r, count: Number(r.count) }));
  }

  /** A node's series in polling.latest (its primary key leads with node_id), optionally one metric only. */
  async nodeSeries(nodeId: string, metric: string | null): Promise<NodeSeriesView[]> {
    const { rows } = await this.ctx.store.query<NodeSeriesView>(
      `SELECT metric, nullif(ifindex, ${NONE}) AS ifindex, nullif(row_key, ${NONE}) AS row, coalesce(if_name, row_name) AS name, value, ${isoTimestamp("at")} AS at
         FROM ${this.t("latest")} WHERE node_id = $1 AND ($2::text IS NULL OR metric = $2)
        ORDER BY metric, ifindex, row_key`,
      [nodeId, metric],
    );
    return rows;
  }
}
