import { Inject, Injectable } from "@tsed/di";
import { type Queryable } from "../../../core/index.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** SQL for inventory.pins (a person's pinned folders). No logic here. */
@Injectable()
export class PinRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** Serialises one account's pin changes, so two concurrent pins cannot both pass the cap. */
  async lockAccount(accountId: string, db: Queryable): Promise<void> {
    await db.query("SELECT pg_advisory_xact_lock(hashtext('inventory.pins:' || $1::text))", [accountId]);
  }

  async exists(accountId: string, groupId: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query("SELECT 1 FROM inventory.pins WHERE account_id = $1 AND group_id = $2", [accountId, groupId]);
    return rows.length > 0;
  }

  /** Pins of the account on folders the scope shows (all of them for null). */
  async countVisible(accountId: string, scopeFolders: string[] | null, db: Queryable = this.ctx.store): Promise<number> {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n
         FROM inventory.pins p JOIN inventory.folder_paths f ON f.id = p.group_id
        WHERE p.account_id = $1 AND ($2::uuid[] IS NULL OR f.path && $2::uuid[])`,
      [accountId, scopeFolders],
    );
    return rows[0].n;
  }

  async listVisible(accountId: string, scopeFolders: string[] | null, db: Queryable = this.ctx.store): Promise<{ id: string; name: string }[]> {
    const { rows } = await db.query<{ id: string; name: string }>(
      `SELECT g.id, g.name
         FROM inventory.pins p
         JOIN inventory.node_groups g ON g.id = p.group_id
         JOIN inventory.folder_paths f ON f.id = p.group_id
        WHERE p.account_id = $1 AND ($2::uuid[] IS NULL OR f.path && $2::uuid[])
        ORDER BY lower(g.name), g.id`,
      [accountId, scopeFolders],
    );
    return rows;
  }

  async insert(accountId: string, groupId: string, db: Queryable = this.ctx.store): Promise<void> {
    await db.query("INSERT INTO inventory.pins (account_id, group_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", [accountId, groupId]);
  }

  async delete(accountId: string, groupId: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query("DELETE FROM inventory.pins WHERE account_id = $1 AND group_id = $2", [accountId, groupId]);
    return (rowCount ?? 0) > 0;
  }
}
