import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import type { AckState, ActiveAlertView, SymptomRef } from "../models/AlertModels.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/** An open incident as the ack route selects it. */
export interface IncidentRecord {
  id: string;
  incident_key: string;
  subject_kind: string;
  node: string | null;
  subject_name: string | null;
  check: string;
  metric: string | null;
  ifindex: number | null;
  row: number | null;
  severity: string;
  title: string | null;
}

export type SubjectRef = { kind: "node"; nodeId: string } | { kind: "pool" | "netcloud_org"; name: string };

export interface IncidentNarrowing {
  check: string | null;
  metric: string | null;
  ifindex: number | null;
  row: number | null;
}

/** Ack columns selected beside a row (a LEFT JOIN of acks on incident key + severity as `a`). */
export const ACK_COLUMNS = `a.acked_by AS ack_by, ${isoTimestamp("a.acked_at")} AS ack_at, a.note AS ack_note`;

export interface AckColumns {
  ack_by: string | null;
  ack_at: string | null;
  ack_note: string | null;
}

/**
 * The row's `acked` field from its selected ack columns. The repositories build each answer row as one object literal
 * around this (and symptomOf), keys in the order the rest-spread copies gave: copying a row twice was 7 % of the alert
 * history route's CPU (docs/performance.md, issue 29).
 */
export function ackOf(row: AckColumns): AckState | null {
  return row.ack_by === null ? null : { by: row.ack_by, at: row.ack_at!, note: row.ack_note };
}

/** Cause columns selected beside an active or history row `x` (migration 0030), the cause node's name from the directory. */
export function causeColumns(x: string): string {
  return `${x}.cause_incident_key, ${x}.cause_node_id,
    CASE WHEN ${x}.cause_node_id IS NULL THEN NULL ELSE (SELECT cd.name FROM ${NODE_DIRECTORY_VIEW} cd WHERE cd.id = ${x}.cause_node_id) END AS cause_node_name`;
}

export interface CauseColumns {
  cause_incident_key: string | null;
  cause_node_id: string | null;
  cause_node_name: string | null;
}

/** The row's `symptom_of` field from its selected cause columns. */
export function symptomOf(row: CauseColumns): SymptomRef | null {
  return row.cause_incident_key === null || row.cause_node_id === null
    ? null
    : { incident_key: row.cause_incident_key, node: row.cause_node_id, node_name: row.cause_node_name };
}

const SEVERITY_RANK = "CASE aa.severity WHEN 'critical' THEN 3 WHEN 'warning' THEN 2 ELSE 1 END";

/** SQL of alerts.active_alerts and alerts.acks, and the look-ups in inventory's published node directory. */
@Injectable()
export class ActiveAlertRepository {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  /** Open incidents, worst first then newest; `scopeFolders` null = all, else only nodes filed beneath those folders. */
  async listActive(scopeFolders: string[] | null, folderId: string | null = null, db: Queryable = this.ctx.store): Promise<ActiveAlertView[]> {
    const { rows } = await db.query<Omit<ActiveAlertView, "acked" | "symptom_of"> & AckColumns & CauseColumns>(
      `SELECT aa.id, aa.incident_key, aa.subject_kind, aa.node_id AS node, d.name AS node_name, aa.subject_name, aa.check_id AS "check",
              aa.metric, aa.ifindex, aa.if_name, aa.row_key AS "row", aa.row_name, aa.severity, aa.state, aa.direction,
              aa.observed_value, aa.threshold_value, aa.title,
              ${isoTimestamp("aa.fired_at")} AS fired_at, ${isoTimestamp("aa.updated_at")} AS updated_at, ${ACK_COLUMNS}, ${causeColumns("aa")}
         FROM alerts.active_alerts aa
         LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = aa.node_id
         LEFT JOIN alerts.acks a ON a.incident_key = aa.incident_key AND a.severity = aa.severity
        WHERE ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[])
          AND ($2::uuid IS NULL OR $2::uuid = ANY (d.folder_path))
        ORDER BY ${SEVERITY_RANK} DESC, aa.fired_at DESC, aa.id`,
      [scopeFolders, folderId],
    );
    return rows.map((r) => ({
      id: r.id,
      incident_key: r.incident_key,
      subject_kind: r.subject_kind,
      node: r.node,
      node_name: r.node_name,
      subject_name: r.subject_name,
      check: r.check,
      metric: r.metric,
      ifindex: r.ifindex,
      if_name: r.if_name,
      row: r.row,
      row_name: r.row_name,
      severity: r.severity,
      state: r.state,
      direction: r.direction,
      observed_value: r.observed_value,
      threshold_value: r.threshold_value,
      title: r.title,
      fired_at: r.fired_at,
      updated_at: r.updated_at,
      acked: ackOf(r),
      symptom_of: symptomOf(r),
    }));
  }

  /** The open incidents of a subject, narrowed, locked against the engine's updates until the transaction ends. */
  async lockIncidents(subject: SubjectRef, narrow: IncidentNarrowing, db: Queryable): Promise<IncidentRecord[]> {
    const params: unknown[] = [];
    const p = (v: unknown) => `$${params.push(v)}`;
    const where =
      subject.kind === "node" ? [`node_id = ${p(subject.nodeId)}::uuid`] : [`subject_kind = ${p(subject.kind)}`, `subject_name = ${p(subject.name)}`];
    if (narrow.check !== null) where.push(`check_id = ${p(narrow.check)}::uuid`);
    if (narrow.metric !== null) where.push(`metric = ${p(narrow.metric)}`);
    if (narrow.ifindex !== null) where.push(`ifindex = ${p(narrow.ifindex)}`);
    if (narrow.row !== null) where.push(`row_key = ${p(narrow.row)}`);
    const { rows } = await db.query<IncidentRecord>(
      `SELECT id, incident_key, subject_kind, node_id AS node, subject_name, check_id AS "check", metric, ifindex, row_key AS "row", severity, title
         FROM alerts.active_alerts WHERE ${where.join(" AND ")}
        ORDER BY incident_key FOR UPDATE`,
      params,
    );
    return rows;
  }

  /**
   * The open incidents with these ids that the scope covers (`scopeFolders` null = all; else only nodes filed beneath
   * those folders), each with its node's folder path (empty for named subjects), locked until the transaction ends.
   */
  async lockIncidentsByIds(ids: string[], scopeFolders: string[] | null, db: Queryable): Promise<(IncidentRecord & { folder_path: string[] })[]> {
    const { rows } = await db.query<IncidentRecord & { folder_path: string[] | null }>(
      `SELECT aa.id, aa.incident_key, aa.subject_kind, aa.node_id AS node, aa.subject_name, aa.check_id AS "check", aa.metric, aa.ifindex,
              aa.row_key AS "row", aa.severity, aa.title, d.folder_path
         FROM alerts.active_alerts aa LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = aa.node_id
        WHERE aa.id = ANY ($1::uuid[]) AND ($2::uuid[] IS NULL OR d.folder_path && $2::uuid[])
        ORDER BY aa.incident_key FOR UPDATE OF aa`,
      [ids, scopeFolders],
    );
    return rows.map((r) => ({ ...r, folder_path: r.folder_path ?? [] }));
  }

  /** Records (or replaces) the ack of each incident at its current severity; one statement. */
  async upsertAcks(incidents: IncidentRecord[], by: string, note: string | null, db: Queryable): Promise<Map<string, AckState>> {
    const { rows } = await db.query<{ incident_key: string; by: string; at: string; note: string | null }>(
      `INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by, acked_at, note)
       SELECT k, s, n, $4, now(), $5 FROM unnest($1::text[], $2::text[], $3::uuid[]) AS t(k, s, n)
       ON CONFLICT (incident_key, severity) DO UPDATE SET acked_by = EXCLUDED.acked_by, acked_at = EXCLUDED.acked_at, note = EXCLUDED.note, node_id = EXCLUDED.node_id
       RETURNING incident_key, acked_by AS by, ${isoTimestamp("acked_at")} AS at, note`,
      [incidents.map((i) => i.incident_key), incidents.map((i) => i.severity), incidents.map((i) => i.node), by, note],
    );
    return new Map(rows.map((r) => [r.incident_key, { by: r.by, at: r.at, note: r.note }]));
  }

  /** Clears the ack of each incident at its current severity; returns the incident keys that had one. */
  async deleteAcks(incidents: IncidentRecord[], db: Queryable): Promise<Set<string>> {
    const { rows } = await db.query<{ incident_key: string }>(
      `DELETE FROM alerts.acks a USING unnest($1::text[], $2::text[]) AS t(k, s)
        WHERE a.incident_key = t.k AND a.severity = t.s
        RETURNING a.incident_key`,
      [incidents.map((i) => i.incident_key), incidents.map((i) => i.severity)],
    );
    return new Set(rows.map((r) => r.incident_key));
  }

  /** Whether a named subject is known: an open incident or history names it, or (pools) a node's effective pool is it. */
  async namedSubjectKnown(kind: "pool" | "netcloud_org", name: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query<{ known: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM alerts.active_alerts WHERE subject_kind = $1 AND subject_name = $2)
           OR EXISTS (SELECT 1 FROM alerts.history WHERE subject_kind = $1 AND subject_name = $2)
           OR ($1 = 'pool' AND EXISTS (SELECT 1 FROM ${NODE_DIRECTORY_VIEW} WHERE effective_pool = $2)) AS known`,
      [kind, name],
    );
    return rows[0].known;
  }

  /** The node's folder path (ids from the root; empty = tree root), or null when there is no such node. */
  async nodeFolderPath(id: string, db: Queryable = this.ctx.store): Promise<string[] | null> {
    const { rows } = await db.query<{ folder_path: string[] }>(`SELECT folder_path FROM ${NODE_DIRECTORY_VIEW} WHERE id = $1`, [id]);
    return rows[0]?.folder_path ?? null;
  }

  /**
   * The folder's path from the root down to it, or null when no node is filed beneath it: inventory
   * publishes folders only through the node directory's folder paths.
   */
  async folderPath(id: string, db: Queryable = this.ctx.store): Promise<string[] | null> {
    const { rows } = await db.query<{ path: string[] }>(
      `SELECT folder_path[1:array_position(folder_path, $1::uuid)] AS path FROM ${NODE_DIRECTORY_VIEW} WHERE $1::uuid = ANY (folder_path) LIMIT 1`,
      [id],
    );
    return rows[0]?.path ?? null;
  }

  /** Of these node ids, those that exist and (scopeFolders non-null) are filed beneath one of the folders. */
  async visibleNodes(ids: string[], scopeFolders: string[] | null, db: Queryable = this.ctx.store): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM ${NODE_DIRECTORY_VIEW} WHERE id = ANY ($1::uuid[]) AND ($2::uuid[] IS NULL OR folder_path && $2::uuid[])`,
      [ids, scopeFolders],
    );
    return rows.map((r) => r.id);
  }
}
