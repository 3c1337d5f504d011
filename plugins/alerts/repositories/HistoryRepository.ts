import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import type { AlertHistoryRow, AlertNodeCount, AlertTransitionView, CalendarBucket, HistoryFilter } from "../models/HistoryModels.js";
import { ACK_COLUMNS, ackOf, causeColumns, symptomOf, type AckColumns, type CauseColumns } from "./ActiveAlertRepository.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/** The spec's row, from history `h` and acks `a`. at_unix_ms is bigint: read as a double (exact below 2^53). */
const ROW_COLUMNS = `h.id, ${isoTimestamp("h.recorded_at")} AS recorded_at, h.at_unix_ms::float8 AS at_unix_ms, h.check_id AS "check", h.direction,
  h.ifindex, h.if_name, h.metric, h.node_id AS node, h.observed_value, h.threshold_value, h.resolved, h.row_key AS "row", h.row_name,
  h.severity, h.state, h.subject_kind, h.subject_name, h.title, ${ACK_COLUMNS}, ${causeColumns("h")}`;

type SelectedRow = Omit<AlertHistoryRow, "acked" | "symptom_of"> & AckColumns & CauseColumns;

/**
 * The answer row from a selected one, built once as one literal (ackOf): keys in ROW_COLUMNS' order, then acked and
 * symptom_of, the order the earlier rest-spread copies gave.
 */
function historyRow(r: SelectedRow): AlertHistoryRow {
  return {
    id: r.id,
    recorded_at: r.recorded_at,
    at_unix_ms: r.at_unix_ms,
    check: r.check,
    direction: r.direction,
    ifindex: r.ifindex,
    if_name: r.if_name,
    metric: r.metric,
    node: r.node,
    observed_value: r.observed_value,
    threshold_value: r.threshold_value,
    resolved: r.resolved,
    row: r.row,
    row_name: r.row_name,
    severity: r.severity,
    state: r.state,
    subject_kind: r.subject_kind,
    subject_name: r.subject_name,
    title: r.title,
    acked: ackOf(r),
    symptom_of: symptomOf(r),
  };
}

/** historyRow with the node's name after title (where the spread copies left it). */
function transitionRow(r: SelectedRow & { node_name: string | null }): AlertTransitionView {
  return {
    id: r.id,
    recorded_at: r.recorded_at,
    at_unix_ms: r.at_unix_ms,
    check: r.check,
    direction: r.direction,
    ifindex: r.ifindex,
    if_name: r.if_name,
    metric: r.metric,
    node: r.node,
    observed_value: r.observed_value,
    threshold_value: r.threshold_value,
    resolved: r.resolved,
    row: r.row,
    row_name: r.row_name,
    severity: r.severity,
    state: r.state,
    subject_kind: r.subject_kind,
    subject_name: r.subject_name,
    title: r.title,
    node_name: r.node_name,
    acked: ackOf(r),
    symptom_of: symptomOf(r),
  };
}

const ACK_JOIN = "LEFT JOIN alerts.acks a ON a.incident_key = h.incident_key AND a.severity = h.severity";

/**
 * SQL of alerts.history (written by the engine; read here). Pages walk the keyset index
 * (recorded_at DESC, id DESC) or, for one node or a few, the node index; node conditions that
 * need inventory (scope, folder, name) are resolved to node ids first (directoryNodes). Every read here goes to
 * `ctx.store.read` (a read replica when configured): history is append-only and may be a few seconds stale.
 */
@Injectable()
export class HistoryRepository {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  /**
   * The ids of the nodes that pass the directory filters (folder scope, folder and everything beneath, name
   * substring), read once per request. The history queries then take them as a constant array: the planner sees
   * how many nodes (and so how many rows) match and walks the keyset index for a large set, or the node index for a
   * few nodes, instead of guessing the size of a join with the view.
   */
  async directoryNodes(
    filter: { scopeFolders: string[] | null; groupId: string | null; nodeQ: string | null },
    db: Queryable = this.ctx.store.read,
  ): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM ${NODE_DIRECTORY_VIEW}
        WHERE ($1::uuid[] IS NULL OR folder_path && $1::uuid[])
          AND ($2::uuid IS NULL OR $2::uuid = ANY (folder_path))
          AND ($3::text IS NULL OR strpos(lower(name), lower($3::text)) > 0)`,
      [filter.scopeFolders, filter.groupId, filter.nodeQ],
    );
    return rows.map((r) => r.id);
  }

  /** One page, newest first by (recorded_at, id); `nodes` null = every row, else only rows of those nodes (directoryNodes). */
  async page(filter: HistoryFilter, nodes: string[] | null, db: Queryable = this.ctx.store.read): Promise<AlertHistoryRow[]> {
    const params: unknown[] = [];
    const p = (v: unknown) => `$${params.push(v)}`;
    const where: string[] = [];
    if (filter.before) {
      where.push(
        filter.before.id === null
          ? `h.recorded_at < ${p(filter.before.at)}::timestamptz`
          : `(h.recorded_at, h.id) < (${p(filter.before.at)}::timestamptz, ${p(filter.before.id)}::uuid)`,
      );
    }
    if (filter.since !== null) where.push(`h.recorded_at >= ${p(filter.since)}::timestamptz`);
    if (filter.until !== null) where.push(`h.recorded_at <= ${p(filter.until)}::timestamptz`);
    if (filter.severities) where.push(`h.severity = ANY (${p(filter.severities)}::text[])`);
    if (filter.states) where.push(`h.state = ANY (${p(filter.states)}::text[])`);
    if (filter.resolved !== null) where.push(`h.resolved = ${p(filter.resolved)}`);
    if (filter.acked !== null) where.push(filter.acked ? "a.incident_key IS NOT NULL" : "a.incident_key IS NULL");
    // Liveness rows store no metric: strpos(NULL, …) is NULL, so they never match.
    if (filter.metric !== null) where.push(`strpos(lower(h.metric), lower(${p(filter.metric)})) > 0`);
    if (filter.nodeId !== null) where.push(`h.node_id = ${p(filter.nodeId)}::uuid`);
    if (nodes !== null) where.push(`h.node_id = ANY (${p(nodes)}::uuid[])`);
    const { rows } = await db.query<SelectedRow>(
      `SELECT ${ROW_COLUMNS} FROM alerts.history h ${ACK_JOIN}
        ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY h.recorded_at DESC, h.id DESC
        LIMIT ${p(filter.limit)}`,
      params,
    );
    return rows.map(historyRow);
  }

  /** Fires (resolved = false) of the last `days` days by UTC weekday (0 = Sunday) and hour; non-empty cells only. */
  async calendar(days: number, nodes: string[] | null, db: Queryable = this.ctx.store.read): Promise<CalendarBucket[]> {
    const { rows } = await db.query<CalendarBucket>(
      `SELECT extract(dow FROM h.recorded_at AT TIME ZONE 'UTC')::int AS weekday, extract(hour FROM h.recorded_at AT TIME ZONE 'UTC')::int AS hour,
              count(*)::int AS count
         FROM alerts.history h
        WHERE NOT h.resolved AND h.recorded_at >= now() - make_interval(days => $1)
          AND ($2::uuid[] IS NULL OR h.node_id = ANY ($2::uuid[]))
        GROUP BY 1, 2 ORDER BY 1, 2`,
      [days, nodes],
    );
    return rows;
  }

  /** Nodes with the most fires within the last `windowSecs`, highest first (ties by node id); only nodes that still exist. */
  async topNodes(windowSecs: number, limit: number, scopeFolders: string[] | null, db: Queryable = this.ctx.store.read): Promise<AlertNodeCount[]> {
    const { rows } = await db.query<AlertNodeCount>(
      `WITH counts AS (
         SELECT h.node_id, count(*)::int AS count FROM alerts.history h
          WHERE NOT h.resolved AND h.node_id IS NOT NULL AND h.recorded_at >= now() - make_interval(secs => $1)
          GROUP BY h.node_id)
       SELECT c.node_id, d.name AS node_name, c.count
         FROM counts c JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = c.node_id
        WHERE $3::uuid[] IS NULL OR d.folder_path && $3::uuid[]
        ORDER BY c.count DESC, c.node_id
        LIMIT $2`,
      [windowSecs, limit, scopeFolders],
    );
    return rows;
  }

  /** The latest fires and clears with the node's current name. */
  async transitions(limit: number, nodes: string[] | null, db: Queryable = this.ctx.store.read): Promise<AlertTransitionView[]> {
    const { rows } = await db.query<SelectedRow & { node_name: string | null }>(
      `SELECT ${ROW_COLUMNS}, d.name AS node_name
         FROM (SELECT * FROM alerts.history h
                WHERE $2::uuid[] IS NULL OR h.node_id = ANY ($2::uuid[])
                ORDER BY h.recorded_at DESC, h.id DESC LIMIT $1) h
         LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = h.node_id
         ${ACK_JOIN}
        ORDER BY h.recorded_at DESC, h.id DESC`,
      [limit, nodes],
    );
    return rows.map(transitionRow);
  }
}
