import { Inject, Injectable } from "@tsed/di";
import { decodeCursor, isUuid, page, type Scope } from "../../../core/index.js";
import type { NodeEvent } from "../contract.js";
import type { ReclassifyPreviewRow, ReclassifyRequest, ReclassifyResult } from "../models/ReclassifyModels.js";
import { ReclassifyRepository } from "../repositories/ReclassifyRepository.js";
import { ClassifierService, pickRule } from "./ClassifierService.js";
import { InventoryScope } from "./InventoryScope.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** Nodes the preview classifies per read while it looks for a page of changes. */
const SCAN_CHUNK = 1000;

/**
 * Reclassification: the nodes whose classification rules now choose another profile
 * (preview), and applying the changes a person confirmed (apply), each checked again
 * against the node and the rules as they stand at that moment.
 */
@Injectable()
export class ReclassifyService {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  @Inject(ReclassifyRepository)
  private repo: ReclassifyRepository;

  @Inject(ClassifierService)
  private classifier: ClassifierService;

  @Inject(InventoryScope)
  private scopes: InventoryScope;

  async apply(body: ReclassifyRequest, scope: Scope): Promise<ReclassifyResult> {
    // A node named twice counts once, with its last entry. Ids compare lower-case, as PostgreSQL prints them.
    const wanted = new Map<string, { from: string | null; to: string }>();
    for (const item of body.items) {
      wanted.set(item.node_id.toLowerCase(), { from: item.from_profile_id?.toLowerCase() ?? null, to: item.to_profile_id.toLowerCase() });
    }
    const result: ReclassifyResult = { applied: 0, skipped_changed: 0, skipped_hidden: 0, skipped_locked: 0 };

    const events = await this.ctx.store.tx(async (db) => {
      const visible = await this.scopes.visibleFolders(scope, db);
      const visibleSet = visible && new Set(visible);
      const nodes = new Map((await this.repo.lockNodes(db, [...wanted.keys()])).map((n) => [n.id, n]));
      // Proposed profiles are held until the commit, so a rule's profile cannot vanish between the decision and the write.
      const profiles = await this.repo.lockProfiles(db, [...new Set([...wanted.values()].map((w) => w.to))]);
      const rules = await this.classifier.rules(db);

      const changes: { node_id: string; profile_id: string }[] = [];
      for (const [id, w] of wanted) {
        const node = nodes.get(id);
        if (!node || (visibleSet && (node.group_id === null || !visibleSet.has(node.group_id)))) {
          result.skipped_hidden++;
        } else if (node.profile_locked) {
          result.skipped_locked++;
        } else if (node.profile_id !== w.from || pickRule(rules, node.sys_object_id, node.sys_descr)?.profile_id !== w.to || !profiles.has(w.to)) {
          result.skipped_changed++;
        } else {
          changes.push({ node_id: id, profile_id: w.to });
        }
      }
      await this.repo.setProfiles(db, changes);
      result.applied = changes.length;

      const applied = changes.map((c) => nodes.get(c.node_id)!);
      const paths = await this.repo.folderPaths(db, [...new Set(applied.flatMap((n) => (n.group_id ? [n.group_id] : [])))]);
      return applied.map((n): NodeEvent => ({
        id: n.id,
        name: n.name,
        address: n.address,
        group_id: n.group_id,
        folder_path: n.group_id ? (paths.get(n.group_id) ?? []) : [],
      }));
    });

    // After the commit only: listeners must never see a change that a rollback took back.
    for (const e of events) await this.ctx.bus.emit("inventory.node.updated", e);
    return result;
  }

  /**
   * The visible, unlocked nodes whose rules now choose another profile than they have,
   * by (lower(name), id). Classification runs here (the same pickRule as everywhere), so
   * the scan reads nodes in chunks until it has a page.
   */
  async preview(query: { cursor?: string; limit: number }, scope: Scope): Promise<{ rows: ReclassifyPreviewRow[]; next: string | null }> {
    let after: [string, string] | null = null;
    if (query.cursor !== undefined) {
      const [nameKey, id] = decodeCursor(query.cursor, 2, ([, last]) => isUuid(last));
      after = [nameKey, id];
    }
    const visible = await this.scopes.visibleFolders(scope);
    const rules = await this.classifier.rules();
    const found: { row: ReclassifyPreviewRow; key: [string, string] }[] = [];
    for (;;) {
      const chunk = await this.repo.candidates(visible, after, SCAN_CHUNK);
      for (const n of chunk) {
        const c = pickRule(rules, n.sys_object_id, n.sys_descr);
        if (!c || c.profile_id === n.profile_id) continue;
        found.push({
          row: { node_id: n.id, node_name: n.name, from_profile_id: n.profile_id, to_profile_id: c.profile_id, rule_id: c.rule_id, matched_by: c.matched_by },
          key: [n.sort_name, n.id],
        });
        if (found.length > query.limit) break;
      }
      if (found.length > query.limit || chunk.length < SCAN_CHUNK) break;
      const last = chunk[chunk.length - 1];
      after = [last.sort_name, last.id];
    }
    const { rows, next } = page(found, query.limit, (f) => f.key);
    return { rows: rows.map((f) => f.row), next };
  }
}
