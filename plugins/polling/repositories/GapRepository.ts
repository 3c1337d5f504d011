import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

export interface GapRow {
  id: string;
  poller_id: string;
  pool: string;
  started_at: string;
  ended_at: string;
  recorded_at: string;
  duration_secs: number;
  listeners: string[];
}

/** SQL for polling.monitoring_gaps. */
@Injectable()
export class GapRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  /** A gap from `startedAt` (the poller's last contact) to now. */
  async insert(g: { poller_id: string; pool: string; started_at: string; listeners: string[] }, db: Queryable): Promise<GapRow> {
    const { rows } = await db.query<GapRow>(
      `INSERT INTO ${this.ctx.store.table("monitoring_gaps")} (poller_id, pool, started_at, ended_at, listeners)
       VALUES ($1, $2, $3::timestamptz, greatest(now(), $3::timestamptz), $4)
       RETURNING ${this.columns()}`,
      [g.poller_id, g.pool, g.started_at, g.listeners],
    );
    return rows[0];
  }

  /** Newest first (by when the gap was recorded), at most `limit`. */
  async recent(limit: number): Promise<GapRow[]> {
    const { rows } = await this.ctx.store.query<GapRow>(
      `SELECT ${this.columns()} FROM ${this.ctx.store.table("monitoring_gaps")} ORDER BY recorded_at DESC, id DESC LIMIT $1`,
      [limit],
    );
    return rows;
  }

  private columns(): string {
    return `id, poller_id, pool, ${isoTimestamp("started_at")} AS started_at, ${isoTimestamp("ended_at")} AS ended_at,
      ${isoTimestamp("recorded_at")} AS recorded_at, floor(extract(epoch FROM ended_at - started_at))::float8 AS duration_secs, listeners`;
  }
}
