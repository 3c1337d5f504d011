import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import type { ThresholdRule } from "../lib/rules.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/** A normalised rule as written (no id, no timestamps). */
export type ThresholdRow = Omit<ThresholdRule, "id" | "created_at">;

export interface StoredThreshold extends ThresholdRule {
  updated_at: string;
}

/** What the engine needs of a node: the published directory row. */
export interface DirectoryEntry {
  id: string;
  name: string;
  folder_path: string[];
  profile_id: string | null;
  effective_pool: string;
}

const COLUMNS = `id, metric, scope_level, direction, warning, critical, warning_above, critical_above, warning_below, critical_below,
  dwell_samples, scope_ids, row_match, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;

const WRITE_PARAMS = (r: ThresholdRow) => [
  r.metric,
  r.scope_level,
  r.direction,
  r.warning,
  r.critical,
  r.warning_above,
  r.critical_above,
  r.warning_below,
  r.critical_below,
  r.dwell_samples,
  r.scope_ids,
  r.row_match,
];

/** SQL for alerts.thresholds, and the reads of inventory's published node directory that rule resolution needs. */
@Injectable()
export class ThresholdRepository {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  private get table(): string {
    return this.ctx.store.table("thresholds");
  }

  /** Up to `limit` rules after the keyset (created_at, id), oldest first; optionally of one metric. */
  async list(limit: number, after: { created_at: string; id: string } | null, metric: string | null): Promise<StoredThreshold[]> {
    const { rows } = await this.ctx.store.query<StoredThreshold>(
      `SELECT ${COLUMNS} FROM ${this.table}
        WHERE ($1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid))
          AND ($3::text IS NULL OR metric = $3)
        ORDER BY created_at, id LIMIT $4`,
      [after?.created_at ?? null, after?.id ?? null, metric, limit],
    );
    return rows;
  }

  /** Changes when a rule is added, changed or removed (on any replica): the count and the latest update. */
  async version(): Promise<string> {
    const { rows } = await this.ctx.store.query<{ v: string }>(`SELECT count(*) || ':' || coalesce(max(updated_at)::text, '') AS v FROM ${this.table}`);
    return rows[0].v;
  }

  /** Every rule (the engine's cache). */
  async all(): Promise<StoredThreshold[]> {
    const { rows } = await this.ctx.store.query<StoredThreshold>(`SELECT ${COLUMNS} FROM ${this.table} ORDER BY created_at, id`);
    return rows;
  }

  async get(id: string, db: Queryable = this.ctx.store): Promise<StoredThreshold | null> {
    const { rows } = await db.query<StoredThreshold>(`SELECT ${COLUMNS} FROM ${this.table} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async insert(row: ThresholdRow): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.table} (metric, scope_level, direction, warning, critical, warning_above, critical_above, warning_below, critical_below,
              dwell_samples, scope_ids, row_match)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text[], $12) RETURNING id`,
      WRITE_PARAMS(row),
    );
    return rows[0].id;
  }

  async update(id: string, row: ThresholdRow): Promise<StoredThreshold | null> {
    const { rows } = await this.ctx.store.query<StoredThreshold>(
      `UPDATE ${this.table} SET metric = $2, scope_level = $3, direction = $4, warning = $5, critical = $6, warning_above = $7, critical_above = $8,
              warning_below = $9, critical_below = $10, dwell_samples = $11, scope_ids = $12::text[], row_match = $13, updated_at = now()
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, ...WRITE_PARAMS(row)],
    );
    return rows[0] ?? null;
  }

  async delete(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.table} WHERE id = $1`, [id]);
    return (rowCount ?? 0) > 0;
  }

  /** Directory rows of these nodes (missing ids are left out). */
  async directory(ids: readonly string[]): Promise<DirectoryEntry[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.ctx.store.query<DirectoryEntry>(
      `SELECT id, name, folder_path::text[] AS folder_path, profile_id, effective_pool FROM ${NODE_DIRECTORY_VIEW} WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return rows;
  }
}
