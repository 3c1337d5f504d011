import { decodeCursor, isoTimestamp, isUuid, page } from "nms-core";
import { Inject, Injectable } from "nms-core/tsed";
import { ALERT_RELAY_CONTEXT, type AlertRelayContext } from "../context.js";
import type { DeliveryKind, RelayDeliveryView } from "../models/DeliveryModels.js";

/** SQL only: the delivery log, newest first, keyset by (at, id). */
@Injectable()
export class DeliveryRepository {
  @Inject(ALERT_RELAY_CONTEXT)
  private ctx: AlertRelayContext;

  async record(row: {
    kind: DeliveryKind;
    incident_key: string | null;
    severity: string | null;
    ok: boolean;
    http_status: number | null;
    error: string | null;
  }) {
    await this.ctx.store.query(
      `INSERT INTO ${this.ctx.store.table("deliveries")} (kind, incident_key, severity, ok, http_status, error) VALUES ($1, $2, $3, $4, $5, $6)`,
      [row.kind, row.incident_key, row.severity, row.ok, row.http_status, row.error],
    );
  }

  async list(limit: number, cursor?: string): Promise<{ rows: RelayDeliveryView[]; next: string | null }> {
    // A cursor part that would fail its SQL cast is refused (400 invalid_cursor), never answered with a 500.
    const after = cursor ? decodeCursor(cursor, 2, ([at, id]) => !Number.isNaN(Date.parse(at)) && isUuid(id)) : null;
    const { rows } = await this.ctx.store.query<RelayDeliveryView>(
      `SELECT id, ${isoTimestamp("at")} AS at, kind, incident_key, severity, ok, http_status, error
         FROM ${this.ctx.store.table("deliveries")}
        WHERE $1::timestamptz IS NULL OR (at, id) < ($1::timestamptz, $2::uuid)
        ORDER BY at DESC, id DESC
        LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return page(rows, limit, (r) => [r.at, r.id]);
  }
}
