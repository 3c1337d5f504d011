import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { EventRuleView } from "../models/RuleModels.js";

const FIELDS = "name, pattern, match_kind, severity, clear_pattern, enabled, min_count, window_secs, ttl_secs, node_id, source_id, source_kind";
const COLUMNS = `id, ${FIELDS}, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;

export type RuleWrite = Omit<EventRuleView, "id" | "created_at" | "updated_at">;

const values = (r: RuleWrite) => [
  r.name,
  r.pattern,
  r.match_kind,
  r.severity,
  r.clear_pattern,
  r.enabled,
  r.min_count,
  r.window_secs,
  r.ttl_secs,
  r.node_id,
  r.source_id,
  r.source_kind,
];

/** SQL only: event rules, listed oldest first. */
@Injectable()
export class RuleRepository {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  private get t() {
    return this.ctx.store.table("rules");
  }

  async insert(r: RuleWrite): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t} (${FIELDS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
      values(r),
    );
    return rows[0].id;
  }

  async get(id: string): Promise<EventRuleView | null> {
    const { rows } = await this.ctx.store.query<EventRuleView>(`SELECT ${COLUMNS} FROM ${this.t} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async all(): Promise<EventRuleView[]> {
    return (await this.ctx.store.query<EventRuleView>(`SELECT ${COLUMNS} FROM ${this.t} ORDER BY created_at, id`)).rows;
  }

  /** A cheap fingerprint of the rule table (count and newest change), so replicas notice each other's edits. */
  async version(): Promise<string> {
    const { rows } = await this.ctx.store.query<{ v: string }>(`SELECT count(*) || ':' || coalesce(max(updated_at)::text, '') AS v FROM ${this.t}`);
    return rows[0].v;
  }

  async list(limit: number, after: readonly [string, string] | null): Promise<EventRuleView[]> {
    const { rows } = await this.ctx.store.query<EventRuleView>(
      `SELECT ${COLUMNS} FROM ${this.t} WHERE $1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid) ORDER BY created_at, id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async update(id: string, r: RuleWrite): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t} SET (${FIELDS}, updated_at) = ($2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, clock_timestamp()) WHERE id = $1`,
      [id, ...values(r)],
    );
    return rowCount === 1;
  }

  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t} WHERE id = $1`, [id]);
    return rowCount === 1;
  }

  /** The bundle's event_rule records. */
  async bundle(): Promise<unknown[]> {
    return (await this.ctx.store.query(`SELECT id, ${FIELDS} FROM ${this.t} ORDER BY created_at, id`)).rows;
  }
}
