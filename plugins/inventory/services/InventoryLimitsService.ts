import { Inject, Injectable } from "@tsed/di";
import type { InventoryLimits } from "../contract.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** Inventory's limits that its dependants honour too (part of the contract: a sweep never finds more than one import takes). */
@Injectable()
export class InventoryLimitsService implements InventoryLimits {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** Most nodes one discovery import carries: `pluginConfig.inventory.sweepSize`. */
  get sweepSize(): number {
    return this.ctx.config.sweepSize;
  }
}
