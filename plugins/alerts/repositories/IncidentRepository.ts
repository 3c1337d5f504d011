import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import type { NodeState, Severity } from "../contract.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { REPORT_SAMPLES_VIEW } from "../../polling/contract.js";
import type { MaintenanceWindowRow } from "../lib/maintenanceTime.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/**
 * One history row as the engine writes it (recorded_at is the flush's): the incident's columns, the
 * incident's fire time, and whether it is the clear. Built by lib/history.ts historyRow() only.
 */
export type HistoryInsert = Omit<ActiveRow, "fired_at_ms"> & {
  id: string;
  at_unix_ms: number;
  resolved: boolean;
};

/** One open incident (a row of active_alerts). */
/** A stored sample as replayed (polling's report view: -1 for no port or row). */
export interface RecentSample {
  node_id: string;
  metric: string;
  ifindex: number;
  row_key: number;
  at_ms: number;
  value: number;
}

export interface ActiveRow {
  incident_key: string;
  subject_kind: "node" | "pool" | "netcloud_org";
  node_id: string | null;
  subject_name: string | null;
  check_id: string;
  metric: string | null;
  ifindex: number | null;
  if_name: string | null;
  row_key: number | null;
  row_name: string | null;
  severity: Severity;
  state: NodeState;
  direction: string | null;
  observed_value: number | null;
  threshold_value: number | null;
  title: string | null;
  fired_at_ms: number;
}

const STATE_RANK_SQL = `CASE state WHEN 'unreachable' THEN 4 WHEN 'critical' THEN 3 WHEN 'warning' THEN 2 WHEN 'unknown' THEN 1 ELSE 0 END`;

/**
 * SQL of the alert engine: history inserts, open incidents, node states, and the
 * reads of mutes and maintenance windows that decide suppression. Every write takes
 * a whole flush at once (multi-row statements over unnest).
 */
@Injectable()
export class IncidentRepository {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  /** The transaction's time, as RFC 3339 text with microseconds (the flush's recorded_at). */
  async now(db: Queryable): Promise<string> {
    const { rows } = await db.query<{ now: string }>(`SELECT ${isoTimestamp("now()")} AS now`);
    return rows[0].now;
  }

  async insertHistory(rows: readonly HistoryInsert[], recordedAt: string, db: Queryable): Promise<void> {
    if (rows.length === 0) return;
    const col = <K extends keyof HistoryInsert>(k: K) => rows.map((r) => r[k]);
    await db.query(
      `INSERT INTO ${this.t("history")} (id, recorded_at, at_unix_ms, incident_key, check_id, direction, ifindex, if_name, metric, node_id,
              observed_value, threshold_value, resolved, row_key, row_name, severity, state, subject_kind, subject_name, title)
       SELECT u.id, $2::timestamptz, u.at_unix_ms, u.incident_key, u.check_id, u.direction, u.ifindex, u.if_name, u.metric, u.node_id,
              u.observed_value, u.threshold_value, u.resolved, u.row_key, u.row_name, u.severity, u.state, u.subject_kind, u.subject_name, u.title
         FROM unnest($1::uuid[], $3::bigint[], $4::text[], $5::uuid[], $6::text[], $7::int[], $8::text[], $9::text[], $10::uuid[],
                     $11::float8[], $12::float8[], $13::bool[], $14::int[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[])
           AS u(id, at_unix_ms, incident_key, check_id, direction, ifindex, if_name, metric, node_id, observed_value, threshold_value, resolved,
                row_key, row_name, severity, state, subject_kind, subject_name, title)`,
      [
        col("id"),
        recordedAt,
        col("at_unix_ms"),
        col("incident_key"),
        col("check_id"),
        col("direction"),
        col("ifindex"),
        col("if_name"),
        col("metric"),
        col("node_id"),
        col("observed_value"),
        col("threshold_value"),
        col("resolved"),
        col("row_key"),
        col("row_name"),
        col("severity"),
        col("state"),
        col("subject_kind"),
        col("subject_name"),
        col("title"),
      ],
    );
  }

  /** Opens or moves incidents (one row per incident key; a moved incident keeps its row id). */
  async upsertActive(rows: readonly ActiveRow[], db: Queryable): Promise<void> {
    if (rows.length === 0) return;
    const col = <K extends keyof ActiveRow>(k: K) => rows.map((r) => r[k]);
    await db.query(
      `INSERT INTO ${this.t("active_alerts")} (incident_key, subject_kind, node_id, subject_name, check_id, metric, ifindex, if_name, row_key, row_name,
              severity, state, direction, observed_value, threshold_value, title, fired_at, updated_at)
       SELECT u.incident_key, u.subject_kind, u.node_id, u.subject_name, u.check_id, u.metric, u.ifindex, u.if_name, u.row_key, u.row_name,
              u.severity, u.state, u.direction, u.observed_value, u.threshold_value, u.title, to_timestamp(u.fired_at_ms / 1000.0), now()
         FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::int[], $8::text[], $9::int[], $10::text[],
                     $11::text[], $12::text[], $13::text[], $14::float8[], $15::float8[], $16::text[], $17::bigint[])
           AS u(incident_key, subject_kind, node_id, subject_name, check_id, metric, ifindex, if_name, row_key, row_name,
                severity, state, direction, observed_value, threshold_value, title, fired_at_ms)
       ON CONFLICT (incident_key) DO UPDATE SET
         subject_kind = EXCLUDED.subject_kind, node_id = EXCLUDED.node_id, subject_name = EXCLUDED.subject_name, check_id = EXCLUDED.check_id,
         metric = EXCLUDED.metric, ifindex = EXCLUDED.ifindex, if_name = EXCLUDED.if_name, row_key = EXCLUDED.row_key, row_name = EXCLUDED.row_name,
         severity = EXCLUDED.severity, state = EXCLUDED.state, direction = EXCLUDED.direction, observed_value = EXCLUDED.observed_value,
         threshold_value = EXCLUDED.threshold_value, title = EXCLUDED.title, fired_at = EXCLUDED.fired_at, updated_at = now()`,
      [
        col("incident_key"),
        col("subject_kind"),
        col("node_id"),
        col("subject_name"),
        col("check_id"),
        col("metric"),
        col("ifindex"),
        col("if_name"),
        col("row_key"),
        col("row_name"),
        col("severity"),
        col("state"),
        col("direction"),
        col("observed_value"),
        col("threshold_value"),
        col("title"),
        col("fired_at_ms"),
      ],
    );
  }

  async deleteActive(keys: readonly string[], db: Queryable): Promise<void> {
    if (keys.length === 0) return;
    await db.query(`DELETE FROM ${this.t("active_alerts")} WHERE incident_key = ANY($1::text[])`, [keys]);
  }

  /** Every open incident (the engine's state after a restart). */
  /**
   * The live samples of the last `secs` seconds of these metrics (polling's report view), oldest first: what a new owner
   * of a partition replays to rebuild dwell counts (ADR 0017).
   */
  async recentSamples(metrics: readonly string[], secs: number): Promise<RecentSample[]> {
    if (metrics.length === 0 || secs <= 0) return [];
    const { rows } = await this.ctx.store.query<RecentSample>(
      `SELECT node_id::text AS node_id, metric, ifindex, row_key, (extract(epoch FROM at) * 1000)::float8 AS at_ms, value
         FROM ${REPORT_SAMPLES_VIEW}
        WHERE at > now() - make_interval(secs => $1) AND metric = ANY($2::text[])
        ORDER BY at`,
      [secs, metrics],
    );
    return rows;
  }

  /** When each incident key last had a transition written, within the last `secs` seconds (Unix ms). */
  async lastTransitions(secs: number): Promise<Map<string, number>> {
    if (secs <= 0) return new Map();
    const { rows } = await this.ctx.store.query<{ incident_key: string; at_ms: number }>(
      `SELECT incident_key, (extract(epoch FROM max(recorded_at)) * 1000)::float8 AS at_ms
         FROM ${this.t("history")} WHERE recorded_at > now() - make_interval(secs => $1) GROUP BY incident_key`,
      [secs],
    );
    return new Map(rows.map((r) => [r.incident_key, r.at_ms]));
  }

  async loadActive(): Promise<ActiveRow[]> {
    const { rows } = await this.ctx.store.query<ActiveRow & { fired_at_ms: string }>(
      `SELECT incident_key, subject_kind, node_id, subject_name, check_id, metric, ifindex, if_name, row_key, row_name, severity, state, direction,
              observed_value, threshold_value, title, (extract(epoch FROM fired_at) * 1000)::bigint AS fired_at_ms
         FROM ${this.t("active_alerts")}`,
    );
    return rows.map((r) => ({ ...r, fired_at_ms: Number(r.fired_at_ms) }));
  }

  /** The worst open incident state per node (unreachable > critical > warning > unknown > ok); nodes without one are absent. */
  async worstStates(nodeIds: readonly string[], db: Queryable): Promise<Map<string, NodeState>> {
    const out = new Map<string, NodeState>();
    if (nodeIds.length === 0) return out;
    const { rows } = await db.query<{ node_id: string; rank: number }>(
      `SELECT node_id, max(${STATE_RANK_SQL}) AS rank FROM ${this.t("active_alerts")} WHERE node_id = ANY($1::uuid[]) GROUP BY node_id`,
      [nodeIds],
    );
    const byRank: NodeState[] = ["ok", "unknown", "warning", "critical", "unreachable"];
    for (const r of rows) out.set(r.node_id, byRank[Number(r.rank)] ?? "ok");
    return out;
  }

  /** How many nodes of the inventory are in each state (a node without a state row is unknown). */
  async nodeStateCounts(): Promise<Record<string, number>> {
    const { rows } = await this.ctx.store.query<{ state: string; n: number }>(
      `SELECT coalesce(s.state, 'unknown') AS state, count(*)::int AS n
         FROM ${NODE_DIRECTORY_VIEW} d LEFT JOIN ${this.t("node_states")} s ON s.node_id = d.id
        GROUP BY 1`,
    );
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  async nodeStates(nodeIds: readonly string[], db: Queryable = this.ctx.store): Promise<Map<string, NodeState>> {
    const out = new Map<string, NodeState>();
    if (nodeIds.length === 0) return out;
    const { rows } = await db.query<{ node_id: string; state: NodeState }>(
      `SELECT node_id, state FROM ${this.t("node_states")} WHERE node_id = ANY($1::uuid[])`,
      [nodeIds],
    );
    for (const r of rows) out.set(r.node_id, r.state);
    return out;
  }

  async upsertNodeStates(rows: readonly { node_id: string; state: NodeState }[], db: Queryable): Promise<void> {
    if (rows.length === 0) return;
    await db.query(
      `INSERT INTO ${this.t("node_states")} (node_id, state, updated_at)
       SELECT u.node_id, u.state, now() FROM unnest($1::uuid[], $2::text[]) AS u(node_id, state)
       ON CONFLICT (node_id) DO UPDATE SET state = EXCLUDED.state, updated_at = now()`,
      [rows.map((r) => r.node_id), rows.map((r) => r.state)],
    );
  }

  async deleteNodeStates(nodeIds: readonly string[], db: Queryable): Promise<void> {
    if (nodeIds.length === 0) return;
    await db.query(`DELETE FROM ${this.t("node_states")} WHERE node_id = ANY($1::uuid[])`, [nodeIds]);
  }

  /** Nodes whose stored state is this one (the maintenance refresh looks for nodes leaving maintenance). */
  async nodesInState(state: NodeState): Promise<string[]> {
    const { rows } = await this.ctx.store.query<{ node_id: string }>(`SELECT node_id FROM ${this.t("node_states")} WHERE state = $1`, [state]);
    return rows.map((r) => r.node_id);
  }

  /** Mutes in force now on these nodes: (node, metric name) pairs. */
  async activeMutes(nodeIds: readonly string[], db: Queryable = this.ctx.store): Promise<{ node_id: string; metric_name: string }[]> {
    if (nodeIds.length === 0) return [];
    const { rows } = await db.query<{ node_id: string; metric_name: string }>(
      `SELECT DISTINCT node_id, metric_name FROM ${this.t("mutes")} WHERE node_id = ANY($1::uuid[]) AND until > now()`,
      [nodeIds],
    );
    return rows;
  }

  /**
   * Maintenance windows that may be open now (one-off windows spanning now, every recurring window) and name
   * one of these nodes or folders; whether a recurring one is open is decided by the caller.
   * With both lists null: every such window.
   */
  async candidateWindows(
    nodeIds: readonly string[] | null,
    folderIds: readonly string[] | null,
    db: Queryable = this.ctx.store,
  ): Promise<MaintenanceWindowRow[]> {
    const { rows } = await db.query<MaintenanceWindowRow>(
      `SELECT id, target_kind, target_ids::text[] AS target_ids, starts_at, ends_at, recurrence
         FROM ${this.t("maintenance_windows")}
        WHERE (recurrence IS NOT NULL OR (starts_at <= now() AND ends_at > now()))
          AND ($1::uuid[] IS NULL OR (target_kind = 'node' AND target_ids && $1::uuid[]) OR (target_kind = 'folder' AND target_ids && $2::uuid[]))`,
      [nodeIds, folderIds ?? []],
    );
    return rows;
  }

  /** Directory rows (id, folder_path) of the nodes named directly or filed under these folders. */
  async nodesCovered(nodeIds: readonly string[], folderIds: readonly string[]): Promise<{ id: string; folder_path: string[] }[]> {
    if (nodeIds.length === 0 && folderIds.length === 0) return [];
    const { rows } = await this.ctx.store.query<{ id: string; folder_path: string[] }>(
      `SELECT id, folder_path::text[] AS folder_path FROM ${NODE_DIRECTORY_VIEW} WHERE id = ANY($1::uuid[]) OR folder_path && $2::uuid[]`,
      [nodeIds, folderIds],
    );
    return rows;
  }
}
