import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import { FOLDER_RANGES_VIEW } from "../../inventory/contract.js";
import { NOTIFICATIONS_CONTEXT, type NotificationsContext } from "../context.js";
import type { RoutingRuleView } from "../models/RoutingRuleModels.js";

const COLUMNS = `id, name, severity, channel_ids::text[] AS channel_ids, enabled, folder_ids::text[] AS folder_ids, root_cause_only, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;

export type RuleWrite = Pick<RoutingRuleView, "name" | "severity" | "channel_ids" | "enabled" | "folder_ids" | "root_cause_only">;

/** A channel a transition is routed to. */
export interface RoutedChannel {
  id: string;
  name: string;
  root_cause_only: boolean;
}

/** SQL only: routing rules, listed oldest first. */
@Injectable()
export class RoutingRuleRepository {
  @Inject(NOTIFICATIONS_CONTEXT)
  private ctx: NotificationsContext;

  private get t() {
    return this.ctx.store.table("routing_rules");
  }

  async insert(rule: RuleWrite): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t} (name, severity, channel_ids, enabled, folder_ids, root_cause_only) VALUES ($1, $2, $3::uuid[], $4, $5::uuid[], $6) RETURNING id`,
      [rule.name, rule.severity, rule.channel_ids, rule.enabled, rule.folder_ids, rule.root_cause_only],
    );
    return rows[0].id;
  }

  async get(id: string): Promise<RoutingRuleView | null> {
    const { rows } = await this.ctx.store.query<RoutingRuleView>(`SELECT ${COLUMNS} FROM ${this.t} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async list(limit: number, after: readonly [string, string] | null): Promise<RoutingRuleView[]> {
    const { rows } = await this.ctx.store.query<RoutingRuleView>(
      `SELECT ${COLUMNS} FROM ${this.t} WHERE $1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid) ORDER BY created_at, id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async update(id: string, rule: RuleWrite): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t} SET name = $2, severity = $3, channel_ids = $4::uuid[], enabled = $5, folder_ids = $6::uuid[], root_cause_only = $7, updated_at = clock_timestamp() WHERE id = $1`,
      [id, rule.name, rule.severity, rule.channel_ids, rule.enabled, rule.folder_ids, rule.root_cause_only],
    );
    return rowCount === 1;
  }

  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t} WHERE id = $1`, [id]);
    return rowCount === 1;
  }

  /**
   * The enabled channels of every enabled rule matching this severity (null = any) and the alert's folder path (a rule
   * without folders matches every alert; one with folders only an alert whose path holds one of them), each once;
   * root_cause_only when every rule that picks the channel sends only root causes (a plain rule to the same channel
   * sends everything).
   */
  async channelsFor(severity: string, folderPath: readonly string[]): Promise<RoutedChannel[]> {
    const { rows } = await this.ctx.store.query<RoutedChannel>(
      `SELECT c.id, c.name, bool_and(r.root_cause_only) AS root_cause_only
         FROM ${this.t} r
         JOIN ${this.ctx.store.table("channels")} c ON c.id = ANY (r.channel_ids)
        WHERE r.enabled AND (r.severity IS NULL OR r.severity = $1) AND c.enabled
          AND (cardinality(r.folder_ids) = 0 OR r.folder_ids && $2::uuid[])
        GROUP BY c.id, c.name`,
      [severity, folderPath],
    );
    return rows;
  }

  /** Which of these folder ids name no folder. */
  async missingFolders(ids: readonly string[]): Promise<string[]> {
    if (!ids.length) return [];
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `SELECT x.id::text AS id FROM unnest($1::uuid[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM ${FOLDER_RANGES_VIEW} f WHERE f.id = x.id)`,
      [ids],
    );
    return rows.map((r) => r.id);
  }
}
