import { Inject, Injectable } from "@tsed/di";
import { assertFolderInScope, assertNodeInScope, type Scope, scopeFolders } from "../../../core/index.js";
import type { ActiveAlertView } from "../models/AlertModels.js";
import { ActiveAlertRepository } from "../repositories/ActiveAlertRepository.js";

/**
 * Active alerts, and the folder-scope checks the alert routes share. A node is
 * visible when it is filed beneath one of the caller's folders (the tree root
 * only for scope All); subjects other than nodes (pools, netcloud organizations)
 * have no folder and are visible to scope All only. Anything invisible answers
 * 404 exactly like something missing.
 */
@Injectable()
export class ActiveAlertService {
  @Inject(ActiveAlertRepository)
  private repo: ActiveAlertRepository;

  /** The visible active alerts; with `folderId`, only those of nodes filed beneath it (404 when the folder is not visible). */
  async list(scope: Scope, folderId?: string): Promise<ActiveAlertView[]> {
    if (folderId !== undefined) await this.assertFolderVisible(folderId.toLowerCase(), scope);
    return this.repo.listActive(scopeFolders(scope), folderId?.toLowerCase() ?? null);
  }

  /** The node's folder path; 404 when it does not exist or lies outside the scope. */
  async assertNodeVisible(id: string, scope: Scope): Promise<string[]> {
    const path = await this.repo.nodeFolderPath(id);
    assertNodeInScope(scope, path);
    return path!;
  }

  /**
   * 404 unless the folder is visible: one of the caller's folders, or known (through a node filed beneath it)
   * with a path the scope covers. For scope All a folder is known when a node is filed beneath it.
   */
  async assertFolderVisible(id: string, scope: Scope): Promise<void> {
    if (scope !== "All" && scope.folders.includes(id)) return;
    assertFolderInScope(scope, await this.repo.folderPath(id));
  }
}
