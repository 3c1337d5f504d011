import { Inject, Injectable } from "@tsed/di";
import { type Queryable } from "../../../core/index.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** A node as reclassification reads it. */
export interface ClassifiableNode {
  id: string;
  name: string;
  address: string;
  group_id: string | null;
  profile_id: string | null;
  profile_locked: boolean;
  sys_object_id: string | null;
  sys_descr: string | null;
}

/** A node the preview may list, with its keyset position. */
export interface PreviewCandidate {
  id: string;
  name: string;
  sort_name: string;
  profile_id: string | null;
  sys_object_id: string | null;
  sys_descr: string | null;
}

/** SQL of reclassification (apply and preview). */
@Injectable()
export class ReclassifyRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** The named nodes that exist, locked for update until the transaction ends (in id order, so concurrent applies cannot deadlock). */
  async lockNodes(db: Queryable, ids: string[]): Promise<ClassifiableNode[]> {
    if (!ids.length) return [];
    const { rows } = await db.query<ClassifiableNode>(
      `SELECT id, name, host(address) AS address, group_id, profile_id, profile_locked, sys_object_id, sys_descr
         FROM inventory.nodes WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
      [ids],
    );
    return rows;
  }

  /** The ids among `ids` that are profiles; FOR KEY SHARE keeps them until the transaction ends. */
  async lockProfiles(db: Queryable, ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const { rows } = await db.query<{ id: string }>("SELECT id FROM inventory.profiles WHERE id = ANY($1::uuid[]) ORDER BY id FOR KEY SHARE", [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /** Folder paths (ids from the root) of the given folders. */
  async folderPaths(db: Queryable, ids: string[]): Promise<Map<string, string[]>> {
    if (!ids.length) return new Map();
    const { rows } = await db.query<{ id: string; path: string[] }>("SELECT id, path FROM inventory.folder_paths WHERE id = ANY($1::uuid[])", [ids]);
    return new Map(rows.map((r) => [r.id, r.path]));
  }

  /** Sets each node's profile, one statement for all of them. */
  async setProfiles(db: Queryable, changes: { node_id: string; profile_id: string }[]): Promise<void> {
    if (!changes.length) return;
    await db.query(
      `UPDATE inventory.nodes n SET profile_id = c.profile_id, updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[]) AS c(node_id, profile_id)
        WHERE n.id = c.node_id`,
      [changes.map((c) => c.node_id), changes.map((c) => c.profile_id)],
    );
  }

  /**
   * Nodes the preview examines, in (lower(name), id) order after `after` (served by nodes_list_idx):
   * not profile_locked, with something to classify, filed in `visible` folders when given (the tree root only when not).
   */
  async candidates(visible: string[] | null, after: [string, string] | null, limit: number): Promise<PreviewCandidate[]> {
    const { rows } = await this.ctx.store.query<PreviewCandidate>(
      `SELECT id, name, lower(name) AS sort_name, profile_id, sys_object_id, sys_descr
         FROM inventory.nodes
        WHERE NOT profile_locked
          AND (sys_object_id IS NOT NULL OR sys_descr IS NOT NULL)
          AND ($1::uuid[] IS NULL OR group_id = ANY($1::uuid[]))
          AND ($2::text IS NULL OR (lower(name), id) > ($2::text, $3::uuid))
        ORDER BY lower(name), id
        LIMIT $4`,
      [visible, after?.[0] ?? null, after?.[1] ?? null, limit],
    );
    return rows;
  }
}
