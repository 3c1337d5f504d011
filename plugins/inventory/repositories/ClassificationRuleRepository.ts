import { Inject, Injectable } from "@tsed/di";
import { type Queryable } from "../../../core/index.js";
import type { ClassificationRuleView } from "../models/ClassificationRuleModels.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

export type ClassificationRuleRow = Omit<ClassificationRuleView, "id">;

const COLUMNS = "id, enabled, priority, profile_id, sysobjectid_prefix, sysdescr_regex, vendor, model";

/** SQL for inventory.classification_rules. Evaluation order is (priority, id). */
@Injectable()
export class ClassificationRuleRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** Up to `limit` rules (every one when null) after the keyset (priority, id), in evaluation order. */
  async list(limit: number | null, after: { priority: number; id: string } | null): Promise<ClassificationRuleView[]> {
    const { rows } = await this.ctx.store.query<ClassificationRuleView>(
      `SELECT ${COLUMNS} FROM inventory.classification_rules
        WHERE $1::int IS NULL OR (priority, id) > ($1::int, $2::uuid)
        ORDER BY priority, id LIMIT $3::int`,
      [after?.priority ?? null, after?.id ?? null, limit],
    );
    return rows;
  }

  async get(id: string, db: Queryable = this.ctx.store): Promise<ClassificationRuleView | null> {
    const { rows } = await db.query<ClassificationRuleView>(`SELECT ${COLUMNS} FROM inventory.classification_rules WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async insert(row: ClassificationRuleRow, db: Queryable = this.ctx.store): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO inventory.classification_rules (enabled, priority, profile_id, sysobjectid_prefix, sysdescr_regex, vendor, model)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [row.enabled, row.priority, row.profile_id, row.sysobjectid_prefix, row.sysdescr_regex, row.vendor, row.model],
    );
    return rows[0].id;
  }

  /** The updated rule, or null when there is none with this id. */
  async update(id: string, row: ClassificationRuleRow, db: Queryable = this.ctx.store): Promise<ClassificationRuleView | null> {
    const { rows } = await db.query<ClassificationRuleView>(
      `UPDATE inventory.classification_rules
          SET enabled = $2, priority = $3, profile_id = $4, sysobjectid_prefix = $5, sysdescr_regex = $6, vendor = $7, model = $8, updated_at = now()
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, row.enabled, row.priority, row.profile_id, row.sysobjectid_prefix, row.sysdescr_regex, row.vendor, row.model],
    );
    return rows[0] ?? null;
  }

  async delete(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query("DELETE FROM inventory.classification_rules WHERE id = $1", [id]);
    return (rowCount ?? 0) > 0;
  }
}
