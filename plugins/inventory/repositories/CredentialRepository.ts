import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import type { CredentialKind, CredentialSettingsValue } from "../models/CredentialModels.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

export interface CredentialRow {
  id: string;
  name: string;
  kind: CredentialKind;
  settings: CredentialSettingsValue;
  has_secret: boolean;
  created_at: string;
  updated_at: string;
}

export interface CredentialWrite {
  name: string;
  kind: CredentialKind;
  settings: CredentialSettingsValue;
  secret_sealed: string | null;
}

// secret_sealed never leaves this repository except through sealed(), for reveal and updates.
const COLUMNS = `id, name, kind, settings, secret_sealed IS NOT NULL AS has_secret,
  ${isoTimestamp("created_at")} AS created_at,
  ${isoTimestamp("updated_at")} AS updated_at`;

/** SQL for inventory.credentials. */
@Injectable()
export class CredentialRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** Up to `limit` credentials after the keyset (lower(name), id), optionally of one kind. */
  async list(limit: number, after: { key: string; id: string } | null, kind: CredentialKind | null): Promise<(CredentialRow & { sort_key: string })[]> {
    const { rows } = await this.ctx.store.query<CredentialRow & { sort_key: string }>(
      `SELECT ${COLUMNS}, lower(name) AS sort_key FROM inventory.credentials
        WHERE ($1::text IS NULL OR (lower(name), id) > ($1::text, $2::uuid)) AND ($3::text IS NULL OR kind = $3)
        ORDER BY lower(name), id LIMIT $4`,
      [after?.key ?? null, after?.id ?? null, kind, limit],
    );
    return rows;
  }

  async get(id: string, db: Queryable = this.ctx.store): Promise<CredentialRow | null> {
    const { rows } = await db.query<CredentialRow>(`SELECT ${COLUMNS} FROM inventory.credentials WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** The stored row with its sealed secrets, locked until the transaction ends when `lock` is set. */
  async sealed(
    id: string,
    db: Queryable = this.ctx.store,
    lock = false,
  ): Promise<{ name: string; kind: CredentialKind; settings: CredentialSettingsValue; secret_sealed: string | null } | null> {
    const { rows } = await db.query<{ name: string; kind: CredentialKind; settings: CredentialSettingsValue; secret_sealed: string | null }>(
      `SELECT name, kind, settings, secret_sealed FROM inventory.credentials WHERE id = $1${lock ? " FOR UPDATE" : ""}`,
      [id],
    );
    return rows[0] ?? null;
  }

  async insert(row: CredentialWrite, db: Queryable = this.ctx.store): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      "INSERT INTO inventory.credentials (name, kind, settings, secret_sealed) VALUES ($1, $2, $3, $4) RETURNING id",
      [row.name, row.kind, JSON.stringify(row.settings), row.secret_sealed],
    );
    return rows[0].id;
  }

  async update(id: string, row: CredentialWrite, db: Queryable): Promise<void> {
    await db.query("UPDATE inventory.credentials SET name = $2, kind = $3, settings = $4, secret_sealed = $5, updated_at = now() WHERE id = $1", [
      id,
      row.name,
      row.kind,
      JSON.stringify(row.settings),
      row.secret_sealed,
    ]);
  }

  async references(id: string, db: Queryable): Promise<{ nodes: number; url_checks: number }> {
    const { rows } = await db.query<{ nodes: number; url_checks: number }>(
      `SELECT (SELECT count(*) FROM inventory.nodes WHERE credential_id = $1)::int AS nodes,
              (SELECT count(*) FROM inventory.url_checks WHERE credential_id = $1)::int AS url_checks`,
      [id],
    );
    return rows[0];
  }

  async delete(id: string, db: Queryable): Promise<void> {
    await db.query("DELETE FROM inventory.credentials WHERE id = $1", [id]);
  }
}
