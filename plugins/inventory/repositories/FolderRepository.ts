import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** A folder as stored, with what the folder_paths view derives (effective pool and tags). */
export interface FolderRow {
  id: string;
  name: string;
  parent_id: string | null;
  group_type: string;
  pool: string | null;
  effective_pool: string;
  latitude: number | null;
  longitude: number | null;
  sort_order: number;
  tags: string[];
  tags_excluded: string[];
  effective_tags: string[];
  ip_ranges: string[];
  created_at: string;
  updated_at: string;
}

/** A folder row plus its sort key (lower(name) as PostgreSQL computes it), for the keyset cursor. */
export interface FolderListRow extends FolderRow {
  sort_name: string;
}

export interface FolderTreeRow {
  id: string;
  name: string;
  parent_id: string | null;
  group_type: string;
  pool: string | null;
  effective_pool: string;
  sort_order: number;
  node_count: number;
  pinned: boolean;
}

/** What a create or a full update writes. */
export interface FolderRecord {
  name: string;
  parent_id: string | null;
  group_type: string;
  pool: string | null;
  latitude: number | null;
  longitude: number | null;
  sort_order: number;
  tags: string[];
  tags_excluded: string[];
  /** Normalised CIDR text (host bits cleared). */
  ip_ranges: string[];
}

export interface FolderListFilter {
  /** null = scope All; else the caller's scope folders (a folder is listed when its path meets them). */
  scopeFolders: string[] | null;
  parentId: string | null;
  q: string | null;
  /** Keyset: list after this (lower(name), id). */
  after: [string, string] | null;
  limit: number;
}

const VIEW_COLUMNS = `g.id, g.name, g.parent_id, g.group_type, g.pool, coalesce(f.effective_pool, 'default') AS effective_pool,
  g.latitude, g.longitude, g.sort_order, g.tags, g.tags_excluded, coalesce(f.effective_tags, '{}'::text[]) AS effective_tags,
  g.ip_ranges::text[] AS ip_ranges, ${isoTimestamp("g.created_at")} AS created_at, ${isoTimestamp("g.updated_at")} AS updated_at`;

/** SQL for inventory.node_groups (folders). No logic here. */
@Injectable()
export class FolderRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  async list(filter: FolderListFilter, db: Queryable = this.ctx.store): Promise<FolderListRow[]> {
    const { rows } = await db.query<FolderListRow>(
      `SELECT ${VIEW_COLUMNS}, lower(g.name) AS sort_name
         FROM inventory.node_groups g LEFT JOIN inventory.folder_paths f ON f.id = g.id
        WHERE ($1::uuid[] IS NULL OR f.path && $1::uuid[])
          AND ($2::uuid IS NULL OR g.parent_id = $2::uuid)
          AND ($3::text IS NULL OR strpos(lower(g.name), lower($3::text)) > 0)
          AND ($4::text IS NULL OR (lower(g.name), g.id) > ($4::text, $5::uuid))
        ORDER BY lower(g.name), g.id
        LIMIT $6`,
      [filter.scopeFolders, filter.parentId, filter.q, filter.after?.[0] ?? null, filter.after?.[1] ?? null, filter.limit],
    );
    return rows;
  }

  async get(id: string, db: Queryable = this.ctx.store): Promise<FolderRow | undefined> {
    const { rows } = await db.query<FolderRow>(
      `SELECT ${VIEW_COLUMNS} FROM inventory.node_groups g LEFT JOIN inventory.folder_paths f ON f.id = g.id WHERE g.id = $1`,
      [id],
    );
    return rows[0];
  }

  /** Every folder the scope shows (all of them for null), ordered as siblings are shown; `pinned` for this account (null = none). */
  async tree(scopeFolders: string[] | null, accountId: string | null, db: Queryable = this.ctx.store): Promise<FolderTreeRow[]> {
    const { rows } = await db.query<FolderTreeRow>(
      `SELECT g.id, g.name, g.parent_id, g.group_type, g.pool, coalesce(f.effective_pool, 'default') AS effective_pool, g.sort_order,
              coalesce(c.n, 0)::int AS node_count,
              (p.group_id IS NOT NULL) AS pinned
         FROM inventory.node_groups g
         JOIN inventory.folder_paths f ON f.id = g.id
         LEFT JOIN (SELECT group_id, count(*) AS n FROM inventory.nodes WHERE group_id IS NOT NULL GROUP BY group_id) c ON c.group_id = g.id
         LEFT JOIN inventory.pins p ON p.group_id = g.id AND p.account_id = $2::uuid
        WHERE $1::uuid[] IS NULL OR f.path && $1::uuid[]
        ORDER BY g.sort_order, lower(g.name), g.id`,
      [scopeFolders, accountId],
    );
    return rows;
  }

  /** Folder ids from the root down to the folder (itself last); undefined when there is no such folder. */
  async pathOf(id: string, db: Queryable = this.ctx.store): Promise<string[] | undefined> {
    const { rows } = await db.query<{ path: string[] }>("SELECT path FROM inventory.folder_paths WHERE id = $1", [id]);
    return rows[0]?.path;
  }

  async parentOf(id: string, db: Queryable = this.ctx.store): Promise<string | null | undefined> {
    const { rows } = await db.query<{ parent_id: string | null }>("SELECT parent_id FROM inventory.node_groups WHERE id = $1", [id]);
    return rows.length ? rows[0].parent_id : undefined;
  }

  /** Serialises changes to the shape of the tree (create, move, delete), so two moves cannot build a cycle together. */
  async lockTree(db: Queryable): Promise<void> {
    await db.query("SELECT pg_advisory_xact_lock(hashtext('inventory.node_groups.tree'))");
  }

  async insert(rec: FolderRecord, db: Queryable = this.ctx.store): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO inventory.node_groups (name, parent_id, group_type, pool, latitude, longitude, sort_order, tags, tags_excluded, ip_ranges)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9::text[], $10::cidr[]) RETURNING id`,
      [rec.name, rec.parent_id, rec.group_type, rec.pool, rec.latitude, rec.longitude, rec.sort_order, rec.tags, rec.tags_excluded, rec.ip_ranges],
    );
    return rows[0].id;
  }

  async update(id: string, rec: FolderRecord, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE inventory.node_groups
          SET name = $2, parent_id = $3, group_type = $4, pool = $5, latitude = $6, longitude = $7, sort_order = $8,
              tags = $9::text[], tags_excluded = $10::text[], ip_ranges = $11::cidr[], updated_at = now()
        WHERE id = $1`,
      [id, rec.name, rec.parent_id, rec.group_type, rec.pool, rec.latitude, rec.longitude, rec.sort_order, rec.tags, rec.tags_excluded, rec.ip_ranges],
    );
    return (rowCount ?? 0) > 0;
  }

  async setPool(id: string, pool: string | null, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query("UPDATE inventory.node_groups SET pool = $2, updated_at = now() WHERE id = $1", [id, pool]);
    return (rowCount ?? 0) > 0;
  }

  /** Whether the folder holds sub-folders or nodes. */
  async hasContents(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query<{ busy: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM inventory.node_groups WHERE parent_id = $1)
           OR EXISTS (SELECT 1 FROM inventory.nodes WHERE group_id = $1) AS busy`,
      [id],
    );
    return rows[0].busy;
  }

  async delete(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query("DELETE FROM inventory.node_groups WHERE id = $1", [id]);
    return (rowCount ?? 0) > 0;
  }
}
