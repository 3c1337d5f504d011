import { Inject, Injectable } from "@tsed/di";
import { assertInScope, badRequest, type Queryable, type Scope, scopeFolders } from "../../../core/index.js";
import type { ScopeKind } from "../models/AnalysisModels.js";
import { AnalysisRepository } from "../repositories/AnalysisRepository.js";

/** A run's or schedule's scope, resolved against the inventory and the caller's scope. */
export interface ResolvedTarget {
  scope_kind: ScopeKind;
  scope_id: string | null;
  /** The name of the folder or node, or "All". */
  label: string;
  /** The folders the run is restricted to (null = the whole inventory). */
  run_folders: string[] | null;
  /** Who may see the job or schedule (scoped callers whose folders meet these); '{}' = unrestricted callers only. */
  visible_folders: string[];
}

@Injectable()
export class ScopeTargets {
  @Inject(AnalysisRepository)
  private repo: AnalysisRepository;

  /**
   * 400 validation_failed when scope_id is missing for folder/node or given for all; 404 when the folder or node does
   * not exist or lies outside the caller's scope (a scoped caller may only run what it may see).
   */
  async resolve(kind: ScopeKind, id: string | null | undefined, scope: Scope, db?: Queryable): Promise<ResolvedTarget> {
    const callerFolders = scopeFolders(scope);
    if (kind === "all") {
      if (id !== null && id !== undefined) throw badRequest("validation_failed", "scope_id must be null or absent when scope_kind is all.");
      return { scope_kind: kind, scope_id: null, label: "All", run_folders: callerFolders, visible_folders: callerFolders ?? [] };
    }
    if (id === null || id === undefined) throw badRequest("validation_failed", `scope_id is required when scope_kind is ${kind}.`);
    const target = kind === "folder" ? await this.repo.folder(id.toLowerCase(), db) : await this.repo.node(id.toLowerCase(), db);
    assertInScope(scope, target?.folder_path, `No ${kind} with that id.`);
    return { scope_kind: kind, scope_id: target!.id, label: target!.name, run_folders: callerFolders, visible_folders: target!.folder_path };
  }
}
