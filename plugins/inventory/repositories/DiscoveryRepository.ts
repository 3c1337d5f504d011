import { Injectable } from "@tsed/di";
import type { Queryable } from "../../../core/index.js";

/** How filing by range went for one address. */
export interface RangeClaim {
  /** Index of the address in the list given. */
  index: number;
  /** Folders whose ranges hold the address. */
  folders: number;
  /** Folders holding it with the longest prefix. */
  top: number;
  /** One of the folders with the longest prefix (the winner when top = 1). */
  group_id: string;
}

/** What the address check found for one row. */
export interface AddressCheck {
  index: number;
  /** A device node already stands at the address. */
  existing: boolean;
  /** An earlier row of the same request has the same address (as an inet value). */
  repeated: boolean;
}

export interface NodeInsertRow {
  name: string;
  address: string;
  credential_id: string | null;
  profile_id: string | null;
  group_id: string | null;
  model: string | null;
  vendor: string | null;
  snmp_port: number;
}

export interface InsertedNode {
  id: string;
  name: string;
  address: string;
  group_id: string | null;
}

/** Rows per INSERT statement: large enough to amortise round trips, small enough to keep the parameter arrays modest. */
const INSERT_BATCH = 1000;

/** SQL of the discovery import; every call runs on the import's transaction client. */
@Injectable()
export class DiscoveryRepository {
  /** Serialises imports, so two concurrent requests cannot both create a node at one address. */
  async lockImports(db: Queryable): Promise<void> {
    await db.query("SELECT pg_advisory_xact_lock(hashtext('inventory.discovery_import'))");
  }

  /** The ids among `ids` that are folders (within `visible` when given). */
  async existingFolders(db: Queryable, ids: string[], visible: string[] | null): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const { rows } = await db.query<{ id: string }>(
      "SELECT id FROM inventory.node_groups WHERE id = ANY($1::uuid[]) AND ($2::uuid[] IS NULL OR id = ANY($2::uuid[]))",
      [ids, visible],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** The ids among `ids` that are profiles; FOR KEY SHARE keeps them until the import commits. */
  async existingProfiles(db: Queryable, ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const { rows } = await db.query<{ id: string }>("SELECT id FROM inventory.profiles WHERE id = ANY($1::uuid[]) FOR KEY SHARE", [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /** The ids among `ids` that are credentials; FOR KEY SHARE keeps them until the import commits. */
  async existingCredentials(db: Queryable, ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const { rows } = await db.query<{ id: string }>("SELECT id FROM inventory.credentials WHERE id = ANY($1::uuid[]) FOR KEY SHARE", [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /**
   * For each address (compared as inet values): whether a device node stands there already,
   * and whether an earlier address of the list is the same. Only rows with either flag are returned.
   */
  async checkAddresses(db: Queryable, addresses: string[]): Promise<AddressCheck[]> {
    const { rows } = await db.query<{ ord: string; existing: boolean; repeated: boolean }>(
      `WITH r AS (SELECT ord, a::inet AS addr FROM unnest($1::text[]) WITH ORDINALITY AS t(a, ord)),
            flagged AS (
              SELECT ord,
                     EXISTS (SELECT 1 FROM inventory.nodes n WHERE n.address = r.addr AND n.node_kind = 'device') AS existing,
                     row_number() OVER (PARTITION BY addr ORDER BY ord) > 1 AS repeated
                FROM r)
       SELECT ord, existing, repeated FROM flagged WHERE existing OR repeated`,
      [addresses],
    );
    return rows.map((r) => ({ index: Number(r.ord) - 1, existing: r.existing, repeated: r.repeated }));
  }

  /**
   * Filing by range: for each address, the folders (within `visible` when given) whose
   * ip_ranges hold it, ranked by the longest prefix among each folder's ranges. Addresses
   * no range holds are not returned.
   *
   * Rather than testing every address against every range (addresses x ranges), each address
   * is cut to every prefix length some range of its family uses, and those networks are
   * looked up by equality (a hash join): a range holds an address exactly when it equals the
   * address's network at the range's own length.
   */
  async claims(db: Queryable, addresses: string[], visible: string[] | null): Promise<RangeClaim[]> {
    if (!addresses.length) return [];
    const { rows } = await db.query<{ ord: string; folders: string; top: string; group_id: string }>(
      `WITH r AS (SELECT ord, a::inet AS addr FROM unnest($1::text[]) WITH ORDINALITY AS t(a, ord)),
            ranges AS (
              SELECT g.id, rg AS range
                FROM inventory.node_groups g CROSS JOIN LATERAL unnest(g.ip_ranges) AS rg
               WHERE cardinality(g.ip_ranges) > 0 AND ($2::uuid[] IS NULL OR g.id = ANY($2::uuid[]))),
            lens AS (SELECT DISTINCT family(range) AS fam, masklen(range) AS len FROM ranges),
            probes AS (
              SELECT r.ord, lens.len, network(set_masklen(r.addr, lens.len)) AS net
                FROM r JOIN lens ON lens.fam = family(r.addr)),
            per_folder AS (
              SELECT p.ord, ranges.id, max(p.len) AS len
                FROM probes p JOIN ranges ON ranges.range = p.net
               GROUP BY p.ord, ranges.id),
            ranked AS (
              SELECT ord, id, count(*) OVER (PARTITION BY ord) AS folders, rank() OVER (PARTITION BY ord ORDER BY len DESC) AS rk
                FROM per_folder)
       SELECT ord, max(folders) AS folders, count(*) AS top, min(id::text) AS group_id
         FROM ranked WHERE rk = 1 GROUP BY ord`,
      [addresses, visible],
    );
    return rows.map((r) => ({ index: Number(r.ord) - 1, folders: Number(r.folders), top: Number(r.top), group_id: r.group_id }));
  }

  /** Inserts the nodes with one multi-row statement per batch (never a round trip per row); returns what was created. */
  async insertNodes(db: Queryable, nodes: NodeInsertRow[]): Promise<InsertedNode[]> {
    const out: InsertedNode[] = [];
    for (let i = 0; i < nodes.length; i += INSERT_BATCH) {
      const batch = nodes.slice(i, i + INSERT_BATCH);
      const { rows } = await db.query<InsertedNode>(
        `INSERT INTO inventory.nodes (name, address, credential_id, profile_id, group_id, model, vendor, snmp_port)
         SELECT name, address::inet, credential_id, profile_id, group_id, model, vendor, snmp_port
           FROM unnest($1::text[], $2::text[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::int[]) WITH ORDINALITY
                AS t(name, address, credential_id, profile_id, group_id, model, vendor, snmp_port, ord)
          ORDER BY ord
         RETURNING id, name, host(address) AS address, group_id`,
        [
          batch.map((n) => n.name),
          batch.map((n) => n.address),
          batch.map((n) => n.credential_id),
          batch.map((n) => n.profile_id),
          batch.map((n) => n.group_id),
          batch.map((n) => n.model),
          batch.map((n) => n.vendor),
          batch.map((n) => n.snmp_port),
        ],
      );
      out.push(...rows);
    }
    return out;
  }

  /** Folder paths (ids from the root) of the given folders. */
  async folderPaths(db: Queryable, ids: string[]): Promise<Map<string, string[]>> {
    if (!ids.length) return new Map();
    const { rows } = await db.query<{ id: string; path: string[] }>("SELECT id, path FROM inventory.folder_paths WHERE id = ANY($1::uuid[])", [ids]);
    return new Map(rows.map((r) => [r.id, r.path]));
  }
}
