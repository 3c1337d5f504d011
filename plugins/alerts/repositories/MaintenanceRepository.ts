import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import type { MaintenanceWindowRow, Recurrence } from "../lib/maintenanceTime.js";
import type { MaintenanceWindowView } from "../models/MaintenanceModels.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

export interface MaintenanceInsert {
  name: string;
  target_kind: "node" | "folder";
  target_ids: string[];
  /** RFC 3339 text, one-off windows only. */
  starts_at: string | null;
  ends_at: string | null;
  recurrence: Recurrence | null;
  created_by: string;
}

/** A stored window: the view plus what the time math needs. */
export type MaintenanceRecord = MaintenanceWindowView & { created_at_key: string; timing: MaintenanceWindowRow };

/**
 * Whether every target of window `w` is visible to the folders in parameter `$n` (null = scope All): a node
 * filed beneath one of them; a folder that is one of them or lies beneath one (known through the nodes filed
 * beneath it, as inventory publishes folders only in the node directory's paths).
 */
function visibleTo(param: string): string {
  return `(${param}::uuid[] IS NULL OR NOT EXISTS (
    SELECT 1 FROM unnest(w.target_ids) AS t(id)
     WHERE NOT CASE WHEN w.target_kind = 'node'
       THEN EXISTS (SELECT 1 FROM ${NODE_DIRECTORY_VIEW} d WHERE d.id = t.id AND d.folder_path && ${param}::uuid[])
       ELSE t.id = ANY (${param}::uuid[]) OR EXISTS (
         SELECT 1 FROM ${NODE_DIRECTORY_VIEW} d
          WHERE t.id = ANY (d.folder_path) AND d.folder_path[1:array_position(d.folder_path, t.id)] && ${param}::uuid[])
     END))`;
}

const COLUMNS = `w.id, w.name, w.target_kind, w.target_ids, ${isoTimestamp("w.starts_at")} AS starts_at, ${isoTimestamp("w.ends_at")} AS ends_at,
  w.recurrence, w.created_by, ${isoTimestamp("w.created_at")} AS created_at, ${isoTimestamp("w.created_at")} AS created_at_key,
  w.starts_at AS starts_at_ts, w.ends_at AS ends_at_ts`;

type Raw = MaintenanceWindowView & { created_at_key: string; starts_at_ts: Date | null; ends_at_ts: Date | null; recurrence: Recurrence | null };

function toRecord(r: Raw): MaintenanceRecord {
  const { starts_at_ts, ends_at_ts, ...view } = r;
  return {
    ...view,
    timing: { id: r.id, target_kind: r.target_kind, target_ids: r.target_ids, starts_at: starts_at_ts, ends_at: ends_at_ts, recurrence: r.recurrence },
  };
}

/** SQL of alerts.maintenance_windows (the engine reads them to put nodes in maintenance). */
@Injectable()
export class MaintenanceRepository {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  async insert(w: MaintenanceInsert, db: Queryable = this.ctx.store): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO alerts.maintenance_windows (name, target_kind, target_ids, starts_at, ends_at, recurrence, created_by)
       VALUES ($1, $2, $3::uuid[], $4::timestamptz, $5::timestamptz, $6::jsonb, $7) RETURNING id`,
      [w.name, w.target_kind, w.target_ids, w.starts_at, w.ends_at, w.recurrence === null ? null : JSON.stringify(w.recurrence), w.created_by],
    );
    return rows[0].id;
  }

  /** Replaces the window's fields (not its author or creation time) if it exists and every current target is visible. */
  async update(id: string, w: Omit<MaintenanceInsert, "created_by">, scopeFolders: string[] | null, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE alerts.maintenance_windows w
          SET name = $3, target_kind = $4, target_ids = $5::uuid[], starts_at = $6::timestamptz, ends_at = $7::timestamptz, recurrence = $8::jsonb
        WHERE w.id = $2 AND ${visibleTo("$1")}`,
      [scopeFolders, id, w.name, w.target_kind, w.target_ids, w.starts_at, w.ends_at, w.recurrence === null ? null : JSON.stringify(w.recurrence)],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Newest first by (created_at, id), keyset after `before`; only windows whose every target is visible. */
  async list(
    scopeFolders: string[] | null,
    before: { at: string; id: string } | null,
    limit: number,
    db: Queryable = this.ctx.store,
  ): Promise<MaintenanceRecord[]> {
    const { rows } = await db.query<Raw>(
      `SELECT ${COLUMNS} FROM alerts.maintenance_windows w
        WHERE ${visibleTo("$1")}
          AND ($2::timestamptz IS NULL OR (w.created_at, w.id) < ($2::timestamptz, $3::uuid))
        ORDER BY w.created_at DESC, w.id DESC LIMIT $4`,
      [scopeFolders, before?.at ?? null, before?.id ?? null, limit],
    );
    return rows.map(toRecord);
  }

  /** Every visible window that may be active at `at`: recurring ones, and one-off ones covering it. */
  async candidatesAt(scopeFolders: string[] | null, at: string, db: Queryable = this.ctx.store): Promise<MaintenanceRecord[]> {
    const { rows } = await db.query<Raw>(
      `SELECT ${COLUMNS} FROM alerts.maintenance_windows w
        WHERE ${visibleTo("$1")}
          AND (w.recurrence IS NOT NULL OR (w.starts_at <= $2::timestamptz AND $2::timestamptz < w.ends_at))
        ORDER BY w.created_at DESC, w.id DESC`,
      [scopeFolders, at],
    );
    return rows.map(toRecord);
  }

  async find(id: string, scopeFolders: string[] | null, db: Queryable = this.ctx.store): Promise<MaintenanceRecord | null> {
    const { rows } = await db.query<Raw>(`SELECT ${COLUMNS} FROM alerts.maintenance_windows w WHERE w.id = $2 AND ${visibleTo("$1")}`, [scopeFolders, id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Deletes the window if it exists and every target is visible; false otherwise. */
  async delete(id: string, scopeFolders: string[] | null, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query(`DELETE FROM alerts.maintenance_windows w WHERE w.id = $2 AND ${visibleTo("$1")}`, [scopeFolders, id]);
    return (rowCount ?? 0) > 0;
  }
}
