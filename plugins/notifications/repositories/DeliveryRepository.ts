import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import type { AlertTransition } from "../../alerts/contract.js";
import { NOTIFICATIONS_CONTEXT, type NotificationsContext } from "../context.js";
import type { LifecyclePoint } from "../contract.js";
import type { DeliveryAttemptView, DeliveryView } from "../models/DeliveryModels.js";

const VIEW = `id, ${isoTimestamp("created_at")} AS created_at, transition_id, channel_id, channel_name, event, incident_key, severity, test, status, sent_by,
  attempts, CASE WHEN status IN ('queued', 'sending') THEN ${isoTimestamp("next_attempt_at")} END AS next_attempt_at, last_status, last_error,
  last_error_class, ${isoTimestamp("finished_at")} AS finished_at`;

/** A delivery as the worker holds it. */
export interface ClaimedDelivery {
  id: string;
  transition_id: string;
  channel_id: string | null;
  event: LifecyclePoint;
  incident_key: string;
  alert: AlertTransition;
  test: boolean;
  attempts: number;
  age_ms: number;
}

export interface DeliveryFilter {
  channel_id?: string;
  status?: string;
  incident_key?: string;
  since?: string;
  until?: string;
}

/** SQL only: the durable delivery queue and its log. */
@Injectable()
export class DeliveryRepository {
  @Inject(NOTIFICATIONS_CONTEXT)
  private ctx: NotificationsContext;

  private get t() {
    return this.ctx.store.table("deliveries");
  }

  /**
   * One row per (transition, channel); a second replica that saw the same transition inserts nothing. Returns how
   * many rows this call wrote.
   */
  async enqueue(transitionId: string, event: LifecyclePoint, alert: AlertTransition, channels: { id: string; name: string }[]): Promise<number> {
    if (!channels.length) return 0;
    const { rowCount } = await this.ctx.store.query(
      `INSERT INTO ${this.t} (transition_id, channel_id, channel_name, event, incident_key, severity, alert)
       SELECT $1, c.id, c.name, $2, $3, $4, $5 FROM unnest($6::uuid[], $7::text[]) AS c(id, name)
       ON CONFLICT (transition_id, channel_id) DO NOTHING`,
      [transitionId, event, alert.incident_key, alert.severity, alert, channels.map((c) => c.id), channels.map((c) => c.name)],
    );
    return rowCount ?? 0;
  }

  /** A test delivery, written as sending (it is sent at once, once). */
  async insertTest(channel: { id: string; name: string }, alert: AlertTransition): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t} (transition_id, channel_id, channel_name, event, incident_key, severity, alert, test, status)
       VALUES ('test:' || gen_random_uuid(), $1, $2, 'fire', $3, $4, $5, true, 'sending') RETURNING id`,
      [channel.id, channel.name, alert.incident_key, alert.severity, alert],
    );
    return rows[0].id;
  }

  /**
   * Claims up to `limit` due deliveries for `leaseMs`: queued ones whose time has come, and ones whose sender's lease
   * ran out (a replica killed mid-send). SKIP LOCKED lets replicas claim side by side without taking the same row.
   */
  async claim(limit: number, leaseMs: number, by: string): Promise<ClaimedDelivery[]> {
    const { rows } = await this.ctx.store.query<ClaimedDelivery>(
      `UPDATE ${this.t} d SET status = 'sending', sent_by = $3, lease_until = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
        WHERE d.id IN (
          SELECT id FROM ${this.t}
           WHERE test = false AND next_attempt_at <= clock_timestamp()
             AND (status = 'queued' OR (status = 'sending' AND lease_until < clock_timestamp()))
           ORDER BY next_attempt_at
           LIMIT $1
           FOR UPDATE SKIP LOCKED)
        RETURNING d.id, d.transition_id, d.channel_id, d.event, d.incident_key, d.alert, d.test, d.attempts,
                  (extract(epoch FROM clock_timestamp() - d.created_at) * 1000)::bigint::float8 AS age_ms`,
      [limit, leaseMs, by],
    );
    return rows;
  }

  async recordAttempt(id: string, attempt: number, a: { ok: boolean; status: number | null; error_class: string | null; error: string | null; ms: number }) {
    await this.ctx.store.query(
      `INSERT INTO ${this.ctx.store.table("delivery_attempts")} (delivery_id, attempt, ok, status, error_class, error, ms) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (delivery_id, attempt) DO NOTHING`,
      [id, attempt, a.ok, a.status, a.error_class, a.error, a.ms],
    );
  }

  /** Ends a delivery (delivered, failed or expired), or puts it back in the queue for `retryInMs`. */
  async settle(
    id: string,
    outcome: {
      status: "delivered" | "failed" | "expired" | "queued";
      attempts: number;
      last_status: number | null;
      error: string | null;
      error_class: string | null;
      retryInMs?: number;
    },
  ): Promise<void> {
    await this.ctx.store.query(
      `UPDATE ${this.t} SET status = $2, attempts = $3, last_status = $4, last_error = $5, last_error_class = $6, lease_until = NULL,
              next_attempt_at = CASE WHEN $2 = 'queued' THEN clock_timestamp() + make_interval(secs => $7::double precision / 1000) ELSE next_attempt_at END,
              finished_at = CASE WHEN $2 = 'queued' THEN NULL ELSE clock_timestamp() END
        WHERE id = $1`,
      [id, outcome.status, outcome.attempts, outcome.last_status, outcome.error, outcome.error_class, outcome.retryInMs ?? 0],
    );
  }

  /** Puts a claimed delivery back without counting an attempt (its channel's circuit is open). */
  async postpone(id: string, ms: number): Promise<void> {
    await this.ctx.store.query(
      `UPDATE ${this.t} SET status = 'queued', lease_until = NULL, next_attempt_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000) WHERE id = $1`,
      [id, ms],
    );
  }

  async get(id: string): Promise<DeliveryView | null> {
    const { rows } = await this.ctx.store.query<DeliveryView>(`SELECT ${VIEW} FROM ${this.t} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async attempts(id: string): Promise<DeliveryAttemptView[]> {
    const { rows } = await this.ctx.store.query<DeliveryAttemptView>(
      `SELECT attempt, ${isoTimestamp("at")} AS at, ok, status, error_class, error, ms FROM ${this.ctx.store.table("delivery_attempts")} WHERE delivery_id = $1 ORDER BY attempt`,
      [id],
    );
    return rows;
  }

  /** Newest first, keyset by (created_at, id). */
  async list(f: DeliveryFilter, limit: number, before: readonly [string, string] | null): Promise<DeliveryView[]> {
    const { rows } = await this.ctx.store.query<DeliveryView>(
      `SELECT ${VIEW} FROM ${this.t}
        WHERE ($1::uuid IS NULL OR channel_id = $1) AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR incident_key = $3)
          AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)
          AND ($6::timestamptz IS NULL OR (created_at, id) < ($6::timestamptz, $7::uuid))
        ORDER BY created_at DESC, id DESC LIMIT $8`,
      [f.channel_id ?? null, f.status ?? null, f.incident_key ?? null, f.since ?? null, f.until ?? null, before?.[0] ?? null, before?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async incidentRef(channelId: string, incidentKey: string): Promise<string | null> {
    const { rows } = await this.ctx.store.query<{ ref: string }>(
      `SELECT ref FROM ${this.ctx.store.table("incident_refs")} WHERE channel_id = $1 AND incident_key = $2`,
      [channelId, incidentKey],
    );
    return rows[0]?.ref ?? null;
  }

  async setIncidentRef(channelId: string, incidentKey: string, ref: string | null): Promise<void> {
    if (ref === null) {
      await this.ctx.store.query(`DELETE FROM ${this.ctx.store.table("incident_refs")} WHERE channel_id = $1 AND incident_key = $2`, [channelId, incidentKey]);
      return;
    }
    await this.ctx.store.query(
      `INSERT INTO ${this.ctx.store.table("incident_refs")} (channel_id, incident_key, ref) VALUES ($1, $2, $3) ON CONFLICT (channel_id, incident_key) DO UPDATE SET ref = EXCLUDED.ref`,
      [channelId, incidentKey, ref],
    );
  }
}
