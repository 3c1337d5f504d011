import { Inject, Injectable } from "@tsed/di";
import { type Queryable } from "../../../core/index.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** A classification rule as the classifier reads it (inventory.classification_rules). */
export interface RuleRecord {
  id: string;
  enabled: boolean;
  priority: number;
  profile_id: string;
  sysobjectid_prefix: string | null;
  sysdescr_regex: string | null;
  vendor: string | null;
  model: string | null;
}

/**
 * Read-only access to the classification rules for the classifier. The rules'
 * create/update/delete live with the rules routes; this reads the table only.
 */
@Injectable()
export class RuleReadRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** Enabled rules in evaluation order (ascending priority, then id); served by classification_rules_order_idx. */
  async enabledRules(db: Queryable = this.ctx.store): Promise<RuleRecord[]> {
    const { rows } = await db.query<RuleRecord>(
      `SELECT id, enabled, priority, profile_id, sysobjectid_prefix, sysdescr_regex, vendor, model
         FROM inventory.classification_rules
        WHERE enabled
        ORDER BY priority, id`,
    );
    return rows;
  }
}
