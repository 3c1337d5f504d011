import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import type { ProfileView } from "../models/ProfileModels.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

export interface ProfileRow {
  name: string;
  category: string | null;
  parent_id: string | null;
  vendor: string | null;
  poll_interval_secs: number;
}

export interface ProfileReferences {
  nodes: number;
  rules: number;
  children: number;
}

const COLUMNS = `id, name, category, parent_id, vendor, poll_interval_secs,
  ${isoTimestamp("created_at")} AS created_at,
  ${isoTimestamp("updated_at")} AS updated_at`;

/** SQL for inventory.profiles. */
@Injectable()
export class ProfileRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** Up to `limit` profiles after the keyset (lower(name), id), in that order. */
  async list(limit: number, after: { key: string; id: string } | null): Promise<(ProfileView & { sort_key: string })[]> {
    const { rows } = await this.ctx.store.query<ProfileView & { sort_key: string }>(
      `SELECT ${COLUMNS}, lower(name) AS sort_key FROM inventory.profiles
        WHERE $1::text IS NULL OR (lower(name), id) > ($1::text, $2::uuid)
        ORDER BY lower(name), id LIMIT $3`,
      [after?.key ?? null, after?.id ?? null, limit],
    );
    return rows;
  }

  async get(id: string, db: Queryable = this.ctx.store): Promise<ProfileView | null> {
    const { rows } = await db.query<ProfileView>(`SELECT ${COLUMNS} FROM inventory.profiles WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async exists(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query("SELECT 1 FROM inventory.profiles WHERE id = $1", [id]);
    return rows.length > 0;
  }

  /** Locks the row against concurrent references and changes until the transaction ends; false when it does not exist. */
  async lock(id: string, db: Queryable): Promise<boolean> {
    const { rows } = await db.query("SELECT 1 FROM inventory.profiles WHERE id = $1 FOR UPDATE", [id]);
    return rows.length > 0;
  }

  /** Serialises changes of the profile tree's parent links (two moves could otherwise close a cycle together). */
  async lockTree(db: Queryable): Promise<void> {
    await db.query("SELECT pg_advisory_xact_lock(hashtext('inventory.profiles.tree'))");
  }

  /** Whether `ancestorOf`'s chain of parents (itself included) passes through `id`. */
  async chainContains(ancestorOf: string, id: string, db: Queryable): Promise<boolean> {
    const { rows } = await db.query(
      `WITH RECURSIVE up AS (
         SELECT id, parent_id, ARRAY[id] AS seen FROM inventory.profiles WHERE id = $1
         UNION ALL
         SELECT p.id, p.parent_id, up.seen || p.id FROM inventory.profiles p JOIN up ON p.id = up.parent_id
          WHERE p.id <> ALL (up.seen)
       )
       SELECT 1 FROM up WHERE id = $2 LIMIT 1`,
      [ancestorOf, id],
    );
    return rows.length > 0;
  }

  async insert(row: ProfileRow, db: Queryable = this.ctx.store): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO inventory.profiles (name, category, parent_id, vendor, poll_interval_secs) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [row.name, row.category, row.parent_id, row.vendor, row.poll_interval_secs],
    );
    return rows[0].id;
  }

  async update(id: string, row: ProfileRow, db: Queryable): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE inventory.profiles SET name = $2, category = $3, parent_id = $4, vendor = $5, poll_interval_secs = $6, updated_at = now() WHERE id = $1`,
      [id, row.name, row.category, row.parent_id, row.vendor, row.poll_interval_secs],
    );
    return (rowCount ?? 0) > 0;
  }

  async references(id: string, db: Queryable): Promise<ProfileReferences> {
    const { rows } = await db.query<ProfileReferences>(
      `SELECT (SELECT count(*) FROM inventory.nodes WHERE profile_id = $1)::int AS nodes,
              (SELECT count(*) FROM inventory.classification_rules WHERE profile_id = $1)::int AS rules,
              (SELECT count(*) FROM inventory.profiles WHERE parent_id = $1)::int AS children`,
      [id],
    );
    return rows[0];
  }

  async delete(id: string, db: Queryable): Promise<void> {
    await db.query("DELETE FROM inventory.profiles WHERE id = $1", [id]);
  }
}
