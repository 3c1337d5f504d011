import { Inject, Injectable } from "@tsed/di";
import { assertFolderInScope, assertNodeInScope, forbidden, type Queryable, type Scope } from "../../../core/index.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";
import { folderPathOf, nodeFolderPathOf } from "../repositories/folderWalk.js";

/**
 * Folder scope for the inventory: a folder-restricted caller sees only the
 * folders of its scope and everything beneath them, and the nodes filed there;
 * everything else answers 404 as if it did not exist.
 */
@Injectable()
export class InventoryScope {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** null for scope All; else every visible folder id (the scope's folders and their descendants). */
  async visibleFolders(scope: Scope, db: Queryable = this.ctx.store): Promise<string[] | null> {
    if (scope === "All") return null;
    const { rows } = await db.query<{ id: string }>("SELECT id FROM inventory.folder_paths WHERE path && $1::uuid[]", [scope.folders]);
    return rows.map((r) => r.id);
  }

  /** 404 unless the folder exists and the caller may see it. */
  async assertFolderVisible(id: string, scope: Scope, db: Queryable = this.ctx.store): Promise<void> {
    const { rows } = await db.query<{ path: string[] | null }>(`SELECT ${folderPathOf("$1::uuid")} AS path`, [id]);
    assertFolderInScope(scope, rows[0]?.path);
  }

  /** 404 unless the node exists and sits in a folder the caller may see (the tree root only for scope All). */
  async assertNodeVisible(id: string, scope: Scope, db: Queryable = this.ctx.store): Promise<void> {
    const { rows } = await db.query<{ folder_path: string[] }>(
      `SELECT ${nodeFolderPathOf("n.group_id")} AS folder_path FROM inventory.nodes n WHERE n.id = $1`,
      [id],
    );
    assertNodeInScope(scope, rows[0]?.folder_path);
  }

  /** A folder-scoped caller cannot put anything at the tree root (403 out_of_scope). */
  assertMayUseRoot(scope: Scope): void {
    if (scope !== "All") throw forbidden("out_of_scope", "A folder-scoped account cannot file anything at the tree root; choose one of your folders.");
  }
}
