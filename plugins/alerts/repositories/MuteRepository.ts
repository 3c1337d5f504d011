import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import type { MuteView } from "../models/MuteModels.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

export interface MuteInsert {
  nodeIds: string[];
  metricName: string;
  reason: string;
  /** RFC 3339 text (microseconds kept). */
  until: string;
  createdBy: string;
}

/** SQL of alerts.mutes (the engine reads them to suppress notifications). */
@Injectable()
export class MuteRepository {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  /**
   * One mute per node that exists and (scopeFolders non-null) is filed beneath one of those folders; one statement.
   * Returns how many were written.
   */
  async insertForVisibleNodes(m: MuteInsert, scopeFolders: string[] | null, db: Queryable = this.ctx.store): Promise<number> {
    const { rowCount } = await db.query(
      `INSERT INTO alerts.mutes (node_id, metric_name, reason, until, created_by)
       SELECT d.id, $2, $3, $4::timestamptz, $5 FROM ${NODE_DIRECTORY_VIEW} d
        WHERE d.id = ANY ($1::uuid[]) AND ($6::uuid[] IS NULL OR d.folder_path && $6::uuid[])`,
      [m.nodeIds, m.metricName, m.reason, m.until, m.createdBy, scopeFolders],
    );
    return rowCount ?? 0;
  }

  /** Active mutes (until in the future), newest first by (created_at, id); keyset after `before`. */
  async listActive(
    filter: { nodeId: string | null; metricName: string | null },
    scopeFolders: string[] | null,
    before: { at: string; id: string } | null,
    limit: number,
    db: Queryable = this.ctx.store,
  ): Promise<(MuteView & { created_at_key: string })[]> {
    const { rows } = await db.query<MuteView & { created_at_key: string }>(
      `SELECT m.id, m.node_id, d.name AS node_name, m.metric_name, m.reason, ${isoTimestamp("m.until")} AS until, m.created_by,
              ${isoTimestamp("m.created_at")} AS created_at, ${isoTimestamp("m.created_at")} AS created_at_key
         FROM alerts.mutes m LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = m.node_id
        WHERE m.until > now()
          AND ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[])
          AND ($2::uuid IS NULL OR m.node_id = $2::uuid)
          AND ($3::text IS NULL OR m.metric_name = $3::text)
          AND ($4::timestamptz IS NULL OR (m.created_at, m.id) < ($4::timestamptz, $5::uuid))
        ORDER BY m.created_at DESC, m.id DESC
        LIMIT $6`,
      [scopeFolders, filter.nodeId, filter.metricName, before?.at ?? null, before?.id ?? null, limit + 1],
    );
    return rows;
  }

  /** The mute's node folder path (null when the node is gone), or undefined when there is no such mute. */
  async findNodePath(id: string, db: Queryable = this.ctx.store): Promise<{ folder_path: string[] | null } | undefined> {
    const { rows } = await db.query<{ folder_path: string[] | null }>(
      `SELECT d.folder_path FROM alerts.mutes m LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = m.node_id WHERE m.id = $1`,
      [id],
    );
    return rows[0];
  }

  /** One active mute as GET /mutes lists it, or undefined. */
  async findView(id: string, db: Queryable = this.ctx.store): Promise<MuteView | undefined> {
    const { rows } = await db.query<MuteView>(
      `SELECT m.id, m.node_id, d.name AS node_name, m.metric_name, m.reason, ${isoTimestamp("m.until")} AS until, m.created_by,
              ${isoTimestamp("m.created_at")} AS created_at
         FROM alerts.mutes m LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = m.node_id WHERE m.id = $1`,
      [id],
    );
    return rows[0];
  }

  /** Sets a new end and/or reason (null = keep); false when there is no such mute. */
  async update(id: string, until: string | null, reason: string | null, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query("UPDATE alerts.mutes SET until = coalesce($2::timestamptz, until), reason = coalesce($3, reason) WHERE id = $1", [
      id,
      until,
      reason,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async delete(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query("DELETE FROM alerts.mutes WHERE id = $1", [id]);
    return (rowCount ?? 0) > 0;
  }
}

/**
 * Deletes mutes that ended more than `keepDays` ago (GET /mutes lists active ones only); returns how many.
 * For a daily job: `{name: "prune-mutes", every: "1 day", handler: (_job, ctx) => pruneExpiredMutes(ctx.store)}`.
 */
export async function pruneExpiredMutes(db: Queryable, keepDays = 7): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM alerts.mutes WHERE until < now() - make_interval(days => $1)", [keepDays]);
  return rowCount ?? 0;
}
