import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, page, type Queryable } from "../../../core/index.js";
import type { NodeEvent, SystemFacts } from "../contract.js";
import type { NodeListFilter, NodeView } from "../models/NodeModels.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";
import { nodeFolderPathOf } from "./folderWalk.js";

/** The writable columns of a node, already validated and defaulted. */
export interface NodeRecord {
  name: string;
  address: string;
  credential_id: string | null;
  group_id: string | null;
  parent_id: string | null;
  pool: string | null;
  profile_id: string | null;
  vendor: string | null;
  model: string | null;
  snmp_port: number;
  notes: string | null;
  tags: string[];
  tags_excluded: string[];
  profile_locked: boolean;
  sort_order: number;
}

const WRITABLE = [
  "name",
  "address",
  "credential_id",
  "group_id",
  "parent_id",
  "pool",
  "profile_id",
  "vendor",
  "model",
  "snmp_port",
  "notes",
  "tags",
  "tags_excluded",
  "profile_locked",
  "sort_order",
] as const satisfies readonly (keyof NodeRecord)[];

// Effective pool and tags come from inventory.node_rows, the view the published node_directory is made of, so the API
// and other plugins agree.
const VIEW_COLUMNS = `n.id, n.name, host(n.address) AS address, n.node_kind, n.credential_id, n.group_id, n.parent_id, n.pool, n.effective_pool,
  n.profile_id, n.vendor, n.model, n.snmp_port, n.notes, n.tags, n.tags_excluded, n.effective_tags, n.profile_locked, n.sort_order,
  n.sys_object_id, n.sys_descr, n.sys_name, ${isoTimestamp("n.created_at")} AS created_at, ${isoTimestamp("n.updated_at")} AS updated_at`;

const FROM = "inventory.node_rows n";

/** A node's bus payload, from inventory.nodes as `n` (its folder path as the directory view gives it). */
const EVENT_COLUMNS = `n.id, n.name, host(n.address) AS address, n.group_id, ${nodeFolderPathOf("n.group_id")} AS folder_path`;

/** SQL of inventory.nodes; no logic. */
@Injectable()
export class NodeRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  /** Inserts the node; its bus payload (as event() reads it) in the same statement. */
  async insert(record: NodeRecord, db: Queryable = this.ctx.store): Promise<NodeEvent> {
    const { rows } = await db.query<NodeEvent>(
      `INSERT INTO inventory.nodes AS n (${WRITABLE.join(", ")}) VALUES (${WRITABLE.map((c, i) => `$${i + 1}${c === "address" ? "::inet" : ""}`).join(", ")})
       RETURNING ${EVENT_COLUMNS}`,
      WRITABLE.map((c) => record[c]),
    );
    return rows[0];
  }

  /** false when the node is gone. */
  async update(id: string, record: NodeRecord, db: Queryable = this.ctx.store): Promise<boolean> {
    const sets = WRITABLE.map((c, i) => `${c} = $${i + 2}${c === "address" ? "::inet" : ""}`).join(", ");
    const { rowCount } = await db.query(`UPDATE inventory.nodes SET ${sets}, updated_at = now() WHERE id = $1`, [id, ...WRITABLE.map((c) => record[c])]);
    return (rowCount ?? 0) > 0;
  }

  /**
   * Deletes the node if `folders` (a scoped caller's; null for scope All) cover its folder path, the tree root only
   * for scope All (assertNodeInScope's rule); its bus payload as it was, or null when it is gone or out of scope.
   */
  async delete(id: string, folders: string[] | null, db: Queryable = this.ctx.store): Promise<NodeEvent | null> {
    const { rows } = await db.query<NodeEvent>(
      `DELETE FROM inventory.nodes n WHERE n.id = $1 AND ($2::uuid[] IS NULL OR ${nodeFolderPathOf("n.group_id")} && $2::uuid[])
       RETURNING ${EVENT_COLUMNS}`,
      [id, folders],
    );
    return rows[0] ?? null;
  }

  async find(id: string, db: Queryable = this.ctx.store): Promise<NodeView | null> {
    const { rows } = await db.query<NodeView>(`SELECT ${VIEW_COLUMNS} FROM ${FROM} WHERE n.id = $1`, [id]);
    return rows[0] ?? null;
  }

  /**
   * One keyset page ordered by (lower(name), id) (index nodes_list_idx); `scopeFolders`
   * null = every node, else only nodes filed beneath one of those folders.
   */
  async list(
    filter: NodeListFilter,
    scopeFolders: string[] | null,
    after: { nameKey: string; id: string } | null,
    limit: number,
    db: Queryable = this.ctx.store,
  ): Promise<{ rows: NodeView[]; next: string | null }> {
    const { rows } = await db.query<NodeView & { name_key: string }>(
      `SELECT ${VIEW_COLUMNS}, lower(n.name) AS name_key FROM ${FROM}
        WHERE ($1::uuid[] IS NULL OR n.folder_path && $1::uuid[])
          AND ($2::uuid IS NULL OR $2::uuid = ANY (n.folder_path))
          AND ($3::text IS NULL OR n.effective_pool = $3::text)
          AND ($4::uuid IS NULL OR n.profile_id = $4::uuid)
          AND ($5::text IS NULL OR position(lower($5::text) IN lower(n.name)) > 0)
          AND ($6::inet IS NULL OR n.address = $6::inet)
          AND ($7::text IS NULL OR (lower(n.name), n.id) > ($7::text, $8::uuid))
        ORDER BY lower(n.name), n.id
        LIMIT $9`,
      [scopeFolders, filter.groupId, filter.effectivePool, filter.profileId, filter.q, filter.address, after?.nameKey ?? null, after?.id ?? null, limit + 1],
    );
    const paged = page(rows, limit, (r) => [r.name_key, r.id]);
    return { rows: paged.rows.map(({ name_key: _key, ...row }) => row), next: paged.next };
  }

  /**
   * The bus payload of a node (its folder path as the published view gives it, walked up from its own folder), or
   * null when it is gone.
   */
  async event(id: string, db: Queryable = this.ctx.store): Promise<NodeEvent | null> {
    const { rows } = await db.query<NodeEvent>(`SELECT ${EVENT_COLUMNS} FROM inventory.nodes n WHERE n.id = $1`, [id]);
    return rows[0] ?? null;
  }

  async credentialExists(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query("SELECT 1 FROM inventory.credentials WHERE id = $1", [id]);
    return rows.length > 0;
  }

  async profileExists(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query("SELECT 1 FROM inventory.profiles WHERE id = $1", [id]);
    return rows.length > 0;
  }

  /** Whether `node` is `candidate` or one of its ancestors (following parent_id upwards from candidate). */
  async isAncestorOrSelf(node: string, candidate: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query<{ hit: boolean }>(
      `WITH RECURSIVE up AS (
         SELECT id, parent_id FROM inventory.nodes WHERE id = $1
         UNION
         SELECT p.id, p.parent_id FROM inventory.nodes p JOIN up ON p.id = up.parent_id
       )
       SELECT EXISTS (SELECT 1 FROM up WHERE id = $2) AS hit`,
      [candidate, node],
    );
    return rows[0].hit;
  }

  /** Writes the poller's facts; true when they changed (false when equal or the node is gone). */
  async setFacts(id: string, facts: SystemFacts, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE inventory.nodes SET sys_object_id = $2, sys_descr = $3, sys_name = $4, updated_at = now()
        WHERE id = $1 AND (sys_object_id, sys_descr, sys_name) IS DISTINCT FROM ($2::text, $3::text, $4::text)`,
      [id, facts.sys_object_id, facts.sys_descr, facts.sys_name],
    );
    return (rowCount ?? 0) > 0;
  }

  async exists(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query("SELECT 1 FROM inventory.nodes WHERE id = $1", [id]);
    return rows.length > 0;
  }
}
