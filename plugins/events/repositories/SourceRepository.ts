import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { EventSourceView } from "../models/SourceModels.js";

const COLUMNS = `id, kind, name, node_id, enabled, builtin, token_hash IS NOT NULL AS has_token, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;

export interface SourceWrite {
  kind: string;
  name: string;
  node_id: string | null;
  enabled: boolean;
}

/** SQL only: event sources, listed oldest first (the built-in ones first of all). */
@Injectable()
export class SourceRepository {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  private get t() {
    return this.ctx.store.table("sources");
  }

  async insert(s: SourceWrite, token: { hash: string; sealed: string } | null): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t} (kind, name, node_id, enabled, token_hash, token_sealed) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [s.kind, s.name, s.node_id, s.enabled, token?.hash ?? null, token?.sealed ?? null],
    );
    return rows[0].id;
  }

  async get(id: string): Promise<EventSourceView | null> {
    const { rows } = await this.ctx.store.query<EventSourceView>(`SELECT ${COLUMNS} FROM ${this.t} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async all(): Promise<EventSourceView[]> {
    return (await this.ctx.store.query<EventSourceView>(`SELECT ${COLUMNS} FROM ${this.t} ORDER BY created_at, id`)).rows;
  }

  async list(limit: number, after: readonly [string, string] | null): Promise<EventSourceView[]> {
    const { rows } = await this.ctx.store.query<EventSourceView>(
      `SELECT ${COLUMNS} FROM ${this.t} WHERE $1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid) ORDER BY created_at, id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async update(id: string, s: Omit<SourceWrite, "kind">): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t} SET name = $2, node_id = $3, enabled = $4, updated_at = clock_timestamp() WHERE id = $1`,
      [id, s.name, s.node_id, s.enabled],
    );
    return rowCount === 1;
  }

  async setToken(id: string, token: { hash: string; sealed: string }): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t} SET token_hash = $2, token_sealed = $3, updated_at = clock_timestamp() WHERE id = $1 AND kind = 'http'`,
      [id, token.hash, token.sealed],
    );
    return rowCount === 1;
  }

  async byTokenHash(hash: string): Promise<EventSourceView | null> {
    const { rows } = await this.ctx.store.query<EventSourceView>(`SELECT ${COLUMNS} FROM ${this.t} WHERE token_hash = $1`, [hash]);
    return rows[0] ?? null;
  }

  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t} WHERE id = $1 AND NOT builtin`, [id]);
    return rowCount === 1;
  }

  /** The bundle's event_source records (no tokens). */
  async bundle(): Promise<unknown[]> {
    return (await this.ctx.store.query(`SELECT id, kind, name, node_id, enabled FROM ${this.t} ORDER BY created_at, id`)).rows;
  }
}
