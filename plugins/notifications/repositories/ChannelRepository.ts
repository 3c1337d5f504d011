import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import { NOTIFICATIONS_CONTEXT, type NotificationsContext } from "../context.js";
import type { TemplateItem } from "../contract.js";

export interface ChannelRow {
  id: string;
  name: string;
  kind: string;
  enabled: boolean;
  config: Record<string, unknown>;
  /** field → sealed value */
  secrets: Record<string, string>;
  template: Partial<Record<"fire" | "resolve" | "suppress", TemplateItem>>;
  created_at: string;
  updated_at: string;
}

const COLUMNS = `id, name, kind, enabled, config, secrets, template, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;

/** SQL only: notification channels, listed by lower-case name. */
@Injectable()
export class ChannelRepository {
  @Inject(NOTIFICATIONS_CONTEXT)
  private ctx: NotificationsContext;

  private get t() {
    return this.ctx.store.table("channels");
  }

  async insert(row: Pick<ChannelRow, "name" | "kind" | "enabled" | "config" | "secrets" | "template">): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t} (name, kind, enabled, config, secrets, template) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [row.name, row.kind, row.enabled, row.config, row.secrets, row.template],
    );
    return rows[0].id;
  }

  async get(id: string): Promise<ChannelRow | null> {
    const { rows } = await this.ctx.store.query<ChannelRow>(`SELECT ${COLUMNS} FROM ${this.t} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async list(limit: number, after: readonly [string, string] | null): Promise<ChannelRow[]> {
    const { rows } = await this.ctx.store.query<ChannelRow>(
      `SELECT ${COLUMNS} FROM ${this.t}
        WHERE $1::text IS NULL OR (lower(name), id) > ($1::text, $2::uuid)
        ORDER BY lower(name), id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async update(id: string, row: Pick<ChannelRow, "name" | "config" | "secrets" | "template">): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t} SET name = $2, config = $3, secrets = $4, template = $5, updated_at = clock_timestamp() WHERE id = $1`,
      [id, row.name, row.config, row.secrets, row.template],
    );
    return rowCount === 1;
  }

  async setEnabled(id: string, enabled: boolean): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`UPDATE ${this.t} SET enabled = $2, updated_at = clock_timestamp() WHERE id = $1`, [id, enabled]);
    return rowCount === 1;
  }

  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t} WHERE id = $1`, [id]);
    return rowCount === 1;
  }

  /** Which of these ids name no channel. */
  async missing(ids: readonly string[]): Promise<string[]> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `SELECT x.id::text AS id FROM unnest($1::uuid[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM ${this.t} c WHERE c.id = x.id)`,
      [ids],
    );
    return rows.map((r) => r.id);
  }
}
