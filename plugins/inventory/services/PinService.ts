import { Inject, Injectable } from "@tsed/di";
import { conflict, isPgError, notFound, PG_ERROR, requireCaller, type Scope, scopeFolders } from "../../../core/index.js";
import type { PinnedFolder } from "../models/PinModels.js";
import { PinRepository } from "../repositories/PinRepository.js";
import { InventoryScope } from "./InventoryScope.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** The caller's account id (the routes are person-only; a session always names one). */
function personAccount(): string {
  const caller = requireCaller();
  if (!caller.accountId) throw notFound("No such account.");
  return caller.accountId;
}

/**
 * Folder pins of a person. The cap (pluginConfig.inventory.pinLimit) counts the pins the
 * person can still see: pins left on folders a narrowed scope hides neither show nor count.
 */
@Injectable()
export class PinService {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  @Inject(PinRepository)
  private repo: PinRepository;

  @Inject(InventoryScope)
  private scope: InventoryScope;

  async list(scope: Scope): Promise<PinnedFolder[]> {
    return this.repo.listVisible(personAccount(), scopeFolders(scope));
  }

  /** Pins a visible folder; repeating is not an error and does not count twice; 409 pin_limit at the cap. */
  async pin(groupId: string, scope: Scope): Promise<void> {
    const accountId = personAccount();
    await this.ctx.store.tx(async (db) => {
      await this.repo.lockAccount(accountId, db);
      await this.scope.assertFolderVisible(groupId, scope, db);
      if (await this.repo.exists(accountId, groupId, db)) return;
      const limit = this.ctx.config.pinLimit;
      if ((await this.repo.countVisible(accountId, scopeFolders(scope), db)) >= limit) {
        throw conflict("pin_limit", `An account can pin at most ${limit} folders; unpin one first.`);
      }
      try {
        await this.repo.insert(accountId, groupId, db);
      } catch (err) {
        // The account (its session) or the folder went away meanwhile.
        if (isPgError(err, PG_ERROR.foreignKeyViolation)) throw notFound("No such folder or account.");
        throw err;
      }
    });
  }

  /** Unpins; a folder that was not pinned is not an error, but one that does not exist for the caller is 404. */
  async unpin(groupId: string, scope: Scope): Promise<void> {
    const accountId = personAccount();
    if (await this.repo.delete(accountId, groupId)) return;
    await this.scope.assertFolderVisible(groupId, scope);
  }
}
