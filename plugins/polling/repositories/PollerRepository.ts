import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import type { HostTelemetry } from "../poller/wire.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

export interface PollerRow {
  id: string;
  pool: string;
  kind: "embedded" | "remote";
  version: string | null;
  listeners: string[];
  registered_at: string;
  last_seen_at: string;
  online: boolean;
  telemetry: HostTelemetry | null;
}

/** What a poller was before this contact: enough to decide whether it had been silent. */
export interface PollerBefore {
  pool: string;
  kind: "embedded" | "remote";
  online: boolean;
  listeners: string[];
  last_seen_at: string;
  /** last_seen_at is older than the allowance. */
  silent: boolean;
}

const COLUMNS = `id, pool, kind, version, listeners, ${isoTimestamp("registered_at")} AS registered_at,
  ${isoTimestamp("last_seen_at")} AS last_seen_at, online, telemetry`;

/** SQL for polling.pollers. */
@Injectable()
export class PollerRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  /** The row as it stands, locked until the transaction ends (contacts of one poller take turns). */
  async lockBefore(id: string, allowanceSecs: number, db: Queryable): Promise<PollerBefore | null> {
    const { rows } = await db.query<PollerBefore>(
      `SELECT pool, kind, online, listeners, ${isoTimestamp("last_seen_at")} AS last_seen_at,
              last_seen_at < now() - make_interval(secs => $2) AS silent
         FROM ${this.ctx.store.table("pollers")} WHERE id = $1 FOR UPDATE`,
      [id, allowanceSecs],
    );
    return rows[0] ?? null;
  }

  /** Registration: creates or refreshes the poller (online, seen now). */
  async upsert(p: { id: string; pool: string; kind: "embedded" | "remote"; version: string | null; listeners: string[] }, db: Queryable): Promise<void> {
    await db.query(
      `INSERT INTO ${this.ctx.store.table("pollers")} (id, pool, kind, version, listeners, registered_at, last_seen_at, online)
       VALUES ($1, $2, $3, $4, $5, now(), now(), true)
       ON CONFLICT (id) DO UPDATE SET pool = EXCLUDED.pool, kind = EXCLUDED.kind, version = EXCLUDED.version,
              listeners = EXCLUDED.listeners, registered_at = now(), last_seen_at = now(), online = true`,
      [p.id, p.pool, p.kind, p.version, p.listeners],
    );
  }

  /** A heartbeat: seen now, online, with the telemetry it reported (kept when none came). */
  async touch(id: string, telemetry: HostTelemetry | null, db: Queryable): Promise<void> {
    await db.query(
      `UPDATE ${this.ctx.store.table("pollers")} SET last_seen_at = now(), online = true, telemetry = coalesce($2::jsonb, telemetry) WHERE id = $1`,
      [id, telemetry === null ? null : JSON.stringify(telemetry)],
    );
  }

  /** Marks pollers silent past the allowance offline; returns those that just went. */
  async markSilentOffline(allowanceSecs: number): Promise<{ id: string; pool: string }[]> {
    const { rows } = await this.ctx.store.query<{ id: string; pool: string }>(
      `UPDATE ${this.ctx.store.table("pollers")} SET online = false
        WHERE online AND last_seen_at < now() - make_interval(secs => $1)
        RETURNING id, pool`,
      [allowanceSecs],
    );
    return rows;
  }

  async get(id: string): Promise<PollerRow | null> {
    const { rows } = await this.ctx.store.query<PollerRow>(`SELECT ${COLUMNS} FROM ${this.ctx.store.table("pollers")} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Every poller, by pool then id (a deployment has a handful; capped all the same). */
  async list(limit: number): Promise<PollerRow[]> {
    const { rows } = await this.ctx.store.query<PollerRow>(`SELECT ${COLUMNS} FROM ${this.ctx.store.table("pollers")} ORDER BY pool, id LIMIT $1`, [limit]);
    return rows;
  }

  /** Remote pollers that reported host telemetry, by pool then id. */
  async reporting(limit: number): Promise<PollerRow[]> {
    const { rows } = await this.ctx.store.query<PollerRow>(
      `SELECT ${COLUMNS} FROM ${this.ctx.store.table("pollers")} WHERE kind = 'remote' AND telemetry IS NOT NULL ORDER BY pool, id LIMIT $1`,
      [limit],
    );
    return rows;
  }
}
