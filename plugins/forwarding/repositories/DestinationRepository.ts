import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import { FORWARDING_CONTEXT, type ForwardingContext } from "../context.js";
import type { DestKind, Filter, SourceKind } from "../lib/types.js";

/** A destination row; `community` and `service_account_json` are sealed. */
export interface DestinationRow {
  id: string;
  name: string;
  dest_kind: DestKind;
  source_kind: SourceKind;
  target: string;
  enabled: boolean;
  pool: string | null;
  rate_limit_per_sec: number | null;
  verbatim: boolean;
  ca_cert: string | null;
  community: string | null;
  service_account_json: string | null;
  filter: Filter | null;
  disabled_reason: "secret_missing" | null;
  created_at: string;
  updated_at: string;
}

export type DestinationWrite = Omit<DestinationRow, "id" | "created_at" | "updated_at">;

const COLUMNS = `id, name, dest_kind, source_kind, target, enabled, pool, rate_limit_per_sec, verbatim, ca_cert, community,
  service_account_json, filter, disabled_reason, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;

const WRITE_COLUMNS = [
  "name",
  "dest_kind",
  "source_kind",
  "target",
  "enabled",
  "pool",
  "rate_limit_per_sec",
  "verbatim",
  "ca_cert",
  "community",
  "service_account_json",
  "filter",
  "disabled_reason",
] as const satisfies readonly (keyof DestinationWrite)[];

const values = (row: DestinationWrite) => WRITE_COLUMNS.map((c) => (c === "filter" ? (row.filter === null ? null : JSON.stringify(row.filter)) : row[c]));

/** Serialises creates so the destination cap holds across concurrent requests and replicas. */
const CAP_LOCK = "forwarding.destinations.cap";

/** SQL only: forwarding destinations, listed by lower-case name. */
@Injectable()
export class DestinationRepository {
  @Inject(FORWARDING_CONTEXT)
  private ctx: ForwardingContext;

  private get t() {
    return this.ctx.store.table("destinations");
  }

  /** Inserts unless `max` destinations exist already (then null), under a lock so that concurrent creates count right. */
  async insertCapped(row: DestinationWrite, max: number, id?: string): Promise<string | null> {
    return this.ctx.store.tx(async (c) => {
      await c.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [CAP_LOCK]);
      const { rows: n } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.t}`);
      if (n[0].n >= max) return null;
      const cols = id ? ["id", ...WRITE_COLUMNS] : [...WRITE_COLUMNS];
      const params = id ? [id, ...values(row)] : values(row);
      const { rows } = await c.query<{ id: string }>(
        `INSERT INTO ${this.t} (${cols.join(", ")}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`,
        params,
      );
      return rows[0].id;
    });
  }

  async get(id: string): Promise<DestinationRow | null> {
    const { rows } = await this.ctx.store.query<DestinationRow>(`SELECT ${COLUMNS} FROM ${this.t} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async list(limit: number, after: readonly [string, string] | null): Promise<DestinationRow[]> {
    const { rows } = await this.ctx.store.query<DestinationRow>(
      `SELECT ${COLUMNS} FROM ${this.t}
        WHERE $1::text IS NULL OR (lower(name), id) > ($1::text, $2::uuid)
        ORDER BY lower(name), id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  /** Every destination (the bundle, the tee's reload); the cap bounds them. */
  async all(): Promise<DestinationRow[]> {
    const { rows } = await this.ctx.store.query<DestinationRow>(`SELECT ${COLUMNS} FROM ${this.t} ORDER BY lower(name), id`);
    return rows;
  }

  async enabled(): Promise<DestinationRow[]> {
    const { rows } = await this.ctx.store.query<DestinationRow>(
      `SELECT ${COLUMNS} FROM ${this.t} WHERE enabled AND disabled_reason IS NULL ORDER BY lower(name), id`,
    );
    return rows;
  }

  async update(id: string, row: DestinationWrite): Promise<boolean> {
    const set = WRITE_COLUMNS.map((c, i) => `${c} = $${i + 2}`).join(", ");
    const { rowCount } = await this.ctx.store.query(`UPDATE ${this.t} SET ${set}, updated_at = clock_timestamp() WHERE id = $1`, [id, ...values(row)]);
    return rowCount === 1;
  }

  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t} WHERE id = $1`, [id]);
    return rowCount === 1;
  }
}
