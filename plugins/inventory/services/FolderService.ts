import { Inject, Injectable } from "@tsed/di";
import {
  ApiError,
  assertPoolName,
  badRequest,
  conflict,
  decodeCursor,
  isPgError,
  isUuid,
  notFound,
  page,
  parseCidr,
  PG_ERROR,
  requireCaller,
  type Queryable,
  type Scope,
  scopeFolders,
} from "../../../core/index.js";
import type { FolderEvent, Folders } from "../contract.js";
import { normaliseTags } from "../lib/validation.js";
import type { FolderListQuery, FolderTreeNode, FolderView, FolderWrite } from "../models/FolderModels.js";
import { FolderRepository, type FolderRecord, type FolderTreeRow } from "../repositories/FolderRepository.js";
import { InventoryScope } from "./InventoryScope.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/**
 * Validated, normalised, de-duplicated CIDR list (first occurrence kept), or 400 validation_failed naming the bad
 * entry's position. Host bits are cleared ("10.1.2.3/24" is 10.1.2.0/24; docs/adr/0007); a bare address is one host.
 */
export function normaliseRanges(ranges: readonly string[] | undefined): string[] {
  const out = new Set<string>();
  (ranges ?? []).forEach((raw, i) => {
    const cidr = parseCidr(raw);
    if (!cidr) {
      throw badRequest("validation_failed", `ip_ranges[${i}] is not a CIDR range (an IPv4 or IPv6 address, optionally with /prefix).`);
    }
    out.add(cidr.text);
  });
  return [...out];
}

/** Folders (node groups): the tree, its scope rules, validation and change events. */
@Injectable()
export class FolderService implements Folders {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  @Inject(FolderRepository)
  private repo: FolderRepository;

  @Inject(InventoryScope)
  private scope: InventoryScope;

  async list(query: FolderListQuery, scope: Scope): Promise<{ rows: FolderView[]; next: string | null }> {
    const after = query.cursor ? (decodeCursor(query.cursor, 2, ([, id]) => isUuid(id)) as [string, string]) : null;
    // Listing the children of a folder the caller cannot see answers 404, as that folder does not exist for it.
    if (query.parent_id) await this.scope.assertFolderVisible(query.parent_id, scope);
    const rows = await this.repo.list({
      scopeFolders: scopeFolders(scope),
      parentId: query.parent_id ?? null,
      q: query.q ? query.q : null,
      after,
      limit: query.limit + 1,
    });
    const paged = page(rows, query.limit, (r) => [r.sort_name, r.id]);
    return { rows: paged.rows.map(({ sort_name: _omit, ...view }) => view), next: paged.next };
  }

  async get(id: string, scope: Scope): Promise<FolderView> {
    await this.scope.assertFolderVisible(id, scope);
    const row = await this.repo.get(id);
    if (!row) throw notFound("No such folder.");
    return row;
  }

  /** The whole tree `scope` sees (for a folder scope, its folders are the roots), with the pins of the caller if a person. */
  async tree(scope: Scope): Promise<FolderTreeNode[]> {
    const caller = requireCaller();
    const rows = await this.repo.tree(scopeFolders(scope), caller.kind === "session" ? caller.accountId : null);
    return buildTree(rows);
  }

  async create(body: FolderWrite, scope: Scope): Promise<string> {
    const rec = this.record(body);
    const { id, event } = await this.ctx.store.tx(async (db) => {
      if (rec.parent_id === null) this.scope.assertMayUseRoot(scope);
      else await this.assertParent(rec.parent_id, db, scope);
      let created: string;
      try {
        created = await this.repo.insert(rec, db);
      } catch (err) {
        throw this.mapWriteError(err);
      }
      return { id: created, event: await this.event(created, rec, db) };
    });
    await this.ctx.bus.emit("inventory.folder.created", event);
    return id;
  }

  /**
   * Full-document update. Keeping the current parent needs no check (so a scoped caller may edit
   * its own scope folder, whose parent it cannot see); a new parent must be visible and must not be
   * the folder itself or beneath it (400 folder_cycle); the root is refused to scoped callers.
   */
  async update(id: string, body: FolderWrite, scope: Scope): Promise<FolderView> {
    const rec = this.record(body);
    const event = await this.ctx.store.tx(async (db) => {
      await this.repo.lockTree(db);
      await this.scope.assertFolderVisible(id, scope, db);
      const current = await this.repo.parentOf(id, db);
      if (current === undefined) throw notFound("No such folder.");
      if (rec.parent_id !== current) {
        if (rec.parent_id === null) this.scope.assertMayUseRoot(scope);
        else {
          if (rec.parent_id === id) throw badRequest("folder_cycle", "A folder cannot be its own parent.");
          await this.assertParent(rec.parent_id, db, scope);
          const parentPath = await this.repo.pathOf(rec.parent_id, db);
          if (parentPath?.includes(id)) throw badRequest("folder_cycle", "A folder cannot move beneath one of its own sub-folders.");
        }
      }
      try {
        if (!(await this.repo.update(id, rec, db))) throw notFound("No such folder.");
      } catch (err) {
        throw this.mapWriteError(err);
      }
      return this.event(id, rec, db);
    });
    await this.ctx.bus.emit("inventory.folder.updated", event);
    const row = await this.repo.get(id);
    if (!row) throw notFound("No such folder.");
    return row;
  }

  /** Sets or clears (null, empty, omitted) the folder's own pool; nodes beneath without a pool follow. */
  async setPool(id: string, pool: string | null | undefined, scope: Scope): Promise<void> {
    const value = pool === undefined || pool === "" ? null : pool;
    assertPoolName(value);
    const event = await this.ctx.store.tx(async (db) => {
      await this.scope.assertFolderVisible(id, scope, db);
      if (!(await this.repo.setPool(id, value, db))) throw notFound("No such folder.");
      const row = await this.repo.get(id, db);
      if (!row) throw notFound("No such folder.");
      return this.event(id, row, db);
    });
    await this.ctx.bus.emit("inventory.folder.updated", event);
  }

  /**
   * Sets a folder's own ip_ranges (normalised as a folder write does; 400 validation_failed for an entry that is not a
   * CIDR), within the caller's scope (404 otherwise), and emits inventory.folder.updated. For dependants: the ipam sync
   * makes a mapped folder's ranges follow its IPAM site (with scope "All"). Unchanged ranges write nothing.
   */
  async setIpRanges(id: string, ranges: readonly string[], scope: Scope): Promise<void> {
    const value = normaliseRanges(ranges);
    const event = await this.ctx.store.tx(async (db) => {
      await this.scope.assertFolderVisible(id, scope, db);
      const { rowCount } = await db.query(
        "UPDATE inventory.node_groups SET ip_ranges = $2::cidr[], updated_at = now() WHERE id = $1 AND ip_ranges IS DISTINCT FROM $2::cidr[]",
        [id, value],
      );
      if (!rowCount) return null;
      const row = await this.repo.get(id, db);
      return row ? this.event(id, row, db) : null;
    });
    if (event) await this.ctx.bus.emit("inventory.folder.updated", event);
  }

  /** Deletes an empty folder; one holding sub-folders or nodes is refused (409 folder_not_empty). Its pins go with it. */
  async remove(id: string, scope: Scope): Promise<void> {
    const event = await this.ctx.store.tx(async (db) => {
      await this.repo.lockTree(db);
      await this.scope.assertFolderVisible(id, scope, db);
      const row = await this.repo.get(id, db);
      if (!row) throw notFound("No such folder.");
      if (await this.repo.hasContents(id, db)) throw notEmpty();
      const event = await this.event(id, row, db);
      try {
        if (!(await this.repo.delete(id, db))) throw notFound("No such folder.");
      } catch (err) {
        // A node or sub-folder filed here meanwhile (foreign key): still not empty.
        if (isPgError(err, PG_ERROR.foreignKeyViolation)) throw notEmpty();
        throw err;
      }
      return event;
    });
    await this.ctx.bus.emit("inventory.folder.deleted", event);
  }

  private record(body: FolderWrite): FolderRecord {
    const name = body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must not be blank.");
    const pool = body.pool === "" || body.pool === undefined ? null : body.pool;
    assertPoolName(pool);
    const groupType = (body.group_type ?? "folder").trim();
    if (!groupType) throw badRequest("validation_failed", "group_type must not be blank.");
    return {
      name,
      parent_id: body.parent_id ?? null,
      group_type: groupType,
      pool,
      latitude: body.latitude ?? null,
      longitude: body.longitude ?? null,
      sort_order: body.sort_order ?? 0,
      tags: normaliseTags(body.tags, "tags"),
      tags_excluded: normaliseTags(body.tags_excluded, "tags_excluded"),
      ip_ranges: normaliseRanges(body.ip_ranges),
    };
  }

  private mapWriteError(err: unknown): unknown {
    // The parent was deleted between the check and the write.
    if (isPgError(err, PG_ERROR.foreignKeyViolation)) return badRequest("unknown_reference", "parent_id names no folder you can see.");
    // A value PostgreSQL refuses that the checks above let through (an address form cidr does not read).
    if (isPgError(err, PG_ERROR.invalidTextRepresentation, PG_ERROR.checkViolation)) {
      return badRequest("validation_failed", "A field holds a value this service cannot store.");
    }
    return err;
  }

  /** A parent named in a body is a reference: missing or hidden is 400 unknown_reference, as for nodes. */
  private async assertParent(id: string, db: Queryable, scope: Scope): Promise<void> {
    try {
      await this.scope.assertFolderVisible(id, scope, db);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw badRequest("unknown_reference", "parent_id names no folder you can see.");
      throw err;
    }
  }

  private async event(id: string, rec: { name: string; parent_id: string | null }, db: Queryable): Promise<FolderEvent> {
    return { id, name: rec.name, parent_id: rec.parent_id, folder_path: (await this.repo.pathOf(id, db)) ?? [] };
  }
}

const notEmpty = () => conflict("folder_not_empty", "The folder still holds sub-folders or nodes; move or delete them first.");

/** Nests the rows (already in sibling order); a row whose parent is not among them is a root. Sums node counts upwards. */
export function buildTree(rows: FolderTreeRow[]): FolderTreeNode[] {
  const byId = new Map<string, FolderTreeNode>();
  for (const r of rows) byId.set(r.id, { ...r, total_node_count: r.node_count, children: [] });
  const roots: FolderTreeNode[] = [];
  for (const r of rows) {
    const node = byId.get(r.id)!;
    const parent = r.parent_id ? byId.get(r.parent_id) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  const total = (n: FolderTreeNode): number => {
    n.total_node_count = n.node_count + n.children.reduce((sum, c) => sum + total(c), 0);
    return n.total_node_count;
  };
  roots.forEach(total);
  return roots;
}
