import { Inject, Injectable } from "@tsed/di";
import type pg from "pg";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { PROFILE_DIRECTORY_VIEW, NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { TOPOLOGY_CONTEXT, type TopologyContext } from "../context.js";
import type { Observation } from "../lib/mibs.js";
import type { KnownIdentity, ResolvedBy } from "../lib/resolve.js";

/** A node as discovery needs it (inventory's published directory). */
export interface DirectoryRow {
  id: string;
  name: string;
  address: string;
  folder_path: string[];
  effective_pool: string;
  credential_id: string | null;
  snmp_port: number;
  /** It has a credential and a profile pluginConfig.topology.profiles allows (any, when that list is empty). */
  walkable: boolean;
}

/** A resolved observation: `observer` saw `remote` (a node here) on its port. */
export interface ResolvedObservation {
  observer: string;
  remote: string;
  by: ResolvedBy;
  obs: Observation;
}

export interface LinkRow {
  id: string;
  a_node: string;
  a_name: string;
  a_ifindex: number | null;
  a_port: string | null;
  a_folder_path: string[];
  b_node: string;
  b_name: string;
  b_ifindex: number | null;
  b_port: string | null;
  b_folder_path: string[];
  protocols: string[];
  resolved_by: ResolvedBy;
  state: "up" | "gone";
  first_seen: string;
  last_seen: string;
  gone_at: string | null;
}

export interface UnknownRow {
  id: string;
  node_id: string;
  node_name: string;
  folder_path: string[];
  group_id: string | null;
  credential_id: string | null;
  protocol: "lldp" | "cdp";
  local_port_key: string;
  local_ifindex: number | null;
  local_port: string | null;
  remote_key: string;
  chassis_id: string | null;
  sys_name: string | null;
  port_key: string | null;
  port: string | null;
  mgmt_addresses: string[];
  platform: string | null;
  state: "up" | "gone";
  first_seen: string;
  last_seen: string;
}

/** What one applied poll changed: links that came up (new or back) and links that went. */
export interface AppliedChanges {
  up: LinkChange[];
  gone: LinkChange[];
  links: number;
  unknown: number;
}

export interface LinkChange {
  id: string;
  a_node: string;
  a_port: string | null;
  b_node: string;
  b_port: string | null;
  protocols: string[];
}

const LINK_CHANGE = "id, a_node, a_port, b_node, b_port, protocols";

const LINK_SELECT = (t: (n: string) => string) => `
  SELECT l.id, l.a_node, da.name AS a_name, l.a_ifindex, l.a_port, da.folder_path AS a_folder_path,
         l.b_node, db.name AS b_name, l.b_ifindex, l.b_port, db.folder_path AS b_folder_path,
         l.protocols, l.resolved_by, l.state, ${isoTimestamp("l.first_seen")} AS first_seen, ${isoTimestamp("l.last_seen")} AS last_seen,
         ${isoTimestamp("l.gone_at")} AS gone_at
    FROM ${t("links")} l
    JOIN ${NODE_DIRECTORY_VIEW} da ON da.id = l.a_node
    JOIN ${NODE_DIRECTORY_VIEW} db ON db.id = l.b_node`;

/** SQL only: node identities, links, unknown neighbours and pinned parents. */
@Injectable()
export class TopologyRepository {
  @Inject(TOPOLOGY_CONTEXT)
  private ctx: TopologyContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  /**
   * Whether the node of the directory row `d` may be walked: a credential, and a profile (or a profile above it) that
   * $N names by id or lower-cased name, unless $N is empty.
   */
  private walkable(param: number): string {
    return `(d.credential_id IS NOT NULL AND (cardinality($${param}::text[]) = 0 OR EXISTS (
      SELECT 1 FROM ${PROFILE_DIRECTORY_VIEW} p JOIN ${PROFILE_DIRECTORY_VIEW} a ON a.id = ANY (p.ancestors)
       WHERE p.id = d.profile_id AND (a.id::text = ANY ($${param}::text[]) OR lower(a.name) = ANY ($${param}::text[])))))`;
  }

  private profileList(): string[] {
    return this.ctx.config.profiles.map((p) => p.toLowerCase());
  }

  /** Nodes of the directory (all, or those named), with what a walk needs. */
  async directory(ids: string[] | null = null): Promise<DirectoryRow[]> {
    const { rows } = await this.ctx.store.query<DirectoryRow>(
      `SELECT d.id, d.name, d.address, d.folder_path, d.effective_pool, d.credential_id, d.snmp_port, ${this.walkable(2)} AS walkable
         FROM ${NODE_DIRECTORY_VIEW} d WHERE $1::uuid[] IS NULL OR d.id = ANY($1::uuid[])`,
      [ids, this.profileList()],
    );
    return rows;
  }

  async identities(): Promise<KnownIdentity[]> {
    const { rows } = await this.ctx.store.query<KnownIdentity>(
      `SELECT node_id, chassis_key, sys_name FROM ${this.t("node_identity")} WHERE chassis_key IS NOT NULL OR sys_name IS NOT NULL`,
    );
    return rows;
  }

  /** Nodes with a credential whose last walk is older than `intervalSecs` (never walked first), at most `limit`. */
  async dueNodes(intervalSecs: number, limit: number): Promise<string[]> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `SELECT d.id FROM ${NODE_DIRECTORY_VIEW} d LEFT JOIN ${this.t("node_identity")} i ON i.node_id = d.id
        WHERE ${this.walkable(3)} AND (i.polled_at IS NULL OR i.polled_at < clock_timestamp() - make_interval(secs => $1))
        ORDER BY i.polled_at NULLS FIRST, d.id LIMIT $2`,
      [intervalSecs, limit, this.profileList()],
    );
    return rows.map((r) => r.id);
  }

  /** Records a walk that failed (the node's links keep their state: a silent agent proves nothing). */
  async recordFailure(nodeId: string, status: string): Promise<void> {
    await this.ctx.store.query(
      `INSERT INTO ${this.t("node_identity")} (node_id, polled_at, last_status, polls) VALUES ($1, clock_timestamp(), $2, 1)
       ON CONFLICT (node_id) DO UPDATE SET polled_at = clock_timestamp(), last_status = $2, polls = ${this.t("node_identity")}.polls + 1`,
      [nodeId, status],
    );
  }

  /**
   * Applies one successful walk of `nodeId`, in one transaction: its identity; the links it saw (inserted, or seen
   * again: its end's miss count back to 0); the unknown neighbours it saw; its other links and unknown neighbours one
   * poll more missed, and gone at `goneAfter`.
   */
  async applyPoll(
    nodeId: string,
    identity: { chassisKey: string | null; sysName: string | null },
    resolved: ResolvedObservation[],
    unknown: Observation[],
    goneAfter: number,
  ): Promise<AppliedChanges> {
    return this.ctx.store.tx(async (c) => {
      await c.query(
        `INSERT INTO ${this.t("node_identity")} (node_id, chassis_key, sys_name, polled_at, last_ok_at, last_status, polls)
         VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp(), 'ok', 1)
         ON CONFLICT (node_id) DO UPDATE SET chassis_key = $2, sys_name = $3, polled_at = clock_timestamp(), last_ok_at = clock_timestamp(),
           last_status = 'ok', polls = ${this.t("node_identity")}.polls + 1`,
        [nodeId, identity.chassisKey, identity.sysName],
      );
      const { up, seen } = await this.upsertLinks(c, resolved);
      const gone = await this.missLinks(c, nodeId, seen, goneAfter);
      await this.deleteUnknownResolved(c, resolved);
      const unknownIds = await this.upsertUnknown(c, nodeId, unknown);
      await c.query(
        `UPDATE ${this.t("unknown_neighbors")} SET missed = missed + 1, state = CASE WHEN missed + 1 >= $3 THEN 'gone' ELSE 'up' END
          WHERE node_id = $1 AND state = 'up' AND NOT (id = ANY($2::uuid[]))`,
        [nodeId, unknownIds, goneAfter],
      );
      return { up, gone, links: seen.length, unknown: unknownIds.length };
    });
  }

  /**
   * Unknown neighbours that now resolve (a node was imported or announced itself): each becomes a link seen by the
   * node that reported it, and its unknown row goes.
   */
  async promoteUnknown(resolved: (ResolvedObservation & { unknownId: string })[]): Promise<LinkChange[]> {
    if (resolved.length === 0) return [];
    return this.ctx.store.tx(async (c) => {
      const { up } = await this.upsertLinks(c, resolved);
      await c.query(`DELETE FROM ${this.t("unknown_neighbors")} WHERE id = ANY($1::uuid[])`, [resolved.map((r) => r.unknownId)]);
      return up;
    });
  }

  private async upsertLinks(c: pg.PoolClient, resolved: ResolvedObservation[]): Promise<{ up: LinkChange[]; seen: string[] }> {
    // One row per link key: a link both LLDP and CDP report with the same port names is one link with two protocols.
    const byKey = new Map<
      string,
      {
        a: string;
        ak: string;
        ai: number | null;
        ap: string | null;
        b: string;
        bk: string;
        bi: number | null;
        bp: string | null;
        protocols: Set<string>;
        by: string;
        aSaw: boolean;
        bSaw: boolean;
      }
    >();
    for (const r of resolved) {
      if (r.observer === r.remote) continue;
      const o = r.obs;
      const local = { node: r.observer, key: o.localPortKey, ifindex: o.localIfindex, port: o.localPort };
      const remote = { node: r.remote, key: o.portKey ?? `${o.protocol} ${o.remoteKey}`, ifindex: null, port: o.port };
      const [a, b] = local.node < remote.node ? [local, remote] : [remote, local];
      const k = `${a.node}\n${a.key}\n${b.node}\n${b.key}`;
      const row = byKey.get(k);
      if (row) {
        row.protocols.add(o.protocol);
        continue;
      }
      byKey.set(k, {
        a: a.node,
        ak: a.key,
        ai: a.ifindex,
        ap: a.port,
        b: b.node,
        bk: b.key,
        bi: b.ifindex,
        bp: b.port,
        protocols: new Set([o.protocol]),
        by: r.by,
        aSaw: a === local,
        bSaw: b === local,
      });
    }
    const rows = [...byKey.values()];
    if (rows.length === 0) return { up: [], seen: [] };
    const l = this.t("links");
    // back: the row was gone before this statement (a CTE reads the snapshot before the upsert).
    const { rows: out } = await c.query<LinkChange & { inserted: boolean; back: boolean }>(
      `WITH before AS (SELECT id FROM ${l} WHERE a_node = ANY($1::uuid[]) AND state = 'gone'), up AS (
       INSERT INTO ${l} AS l (a_node, a_port_key, a_ifindex, a_port, b_node, b_port_key, b_ifindex, b_port, protocols, resolved_by, a_missed, b_missed)
       SELECT a, ak, ai, ap, b, bk, bi, bp, string_to_array(p, ','), by, CASE WHEN asaw THEN 0 END, CASE WHEN bsaw THEN 0 END
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::uuid[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::bool[], $12::bool[])
              AS x(a, ak, ai, ap, b, bk, bi, bp, p, by, asaw, bsaw)
       ON CONFLICT (a_node, a_port_key, b_node, b_port_key) DO UPDATE SET
         a_ifindex = CASE WHEN EXCLUDED.a_missed IS NOT NULL THEN EXCLUDED.a_ifindex ELSE COALESCE(l.a_ifindex, EXCLUDED.a_ifindex) END,
         a_port = CASE WHEN EXCLUDED.a_missed IS NOT NULL THEN EXCLUDED.a_port ELSE COALESCE(l.a_port, EXCLUDED.a_port) END,
         b_ifindex = CASE WHEN EXCLUDED.b_missed IS NOT NULL THEN EXCLUDED.b_ifindex ELSE COALESCE(l.b_ifindex, EXCLUDED.b_ifindex) END,
         b_port = CASE WHEN EXCLUDED.b_missed IS NOT NULL THEN EXCLUDED.b_port ELSE COALESCE(l.b_port, EXCLUDED.b_port) END,
         protocols = ARRAY(SELECT DISTINCT p FROM unnest(l.protocols || EXCLUDED.protocols) p ORDER BY p),
         resolved_by = EXCLUDED.resolved_by,
         a_missed = CASE WHEN EXCLUDED.a_missed IS NOT NULL THEN 0 ELSE l.a_missed END,
         b_missed = CASE WHEN EXCLUDED.b_missed IS NOT NULL THEN 0 ELSE l.b_missed END,
         state = 'up', gone_at = NULL, last_seen = clock_timestamp()
       RETURNING ${LINK_CHANGE}, (xmax = 0) AS inserted)
       SELECT up.*, up.id IN (SELECT id FROM before) AS back FROM up`,
      [
        rows.map((r) => r.a),
        rows.map((r) => r.ak),
        rows.map((r) => r.ai),
        rows.map((r) => r.ap),
        rows.map((r) => r.b),
        rows.map((r) => r.bk),
        rows.map((r) => r.bi),
        rows.map((r) => r.bp),
        rows.map((r) => [...r.protocols].sort().join(",")),
        rows.map((r) => r.by),
        rows.map((r) => r.aSaw),
        rows.map((r) => r.bSaw),
      ],
    );
    return {
      up: out.filter((r) => r.inserted || r.back).map(({ inserted: _inserted, back: _back, ...change }) => change),
      seen: out.map((r) => r.id),
    };
  }

  /** One more missed poll for the node's end of each live link it did not see now; gone where every reporting end reached `goneAfter`. */
  private async missLinks(c: pg.PoolClient, nodeId: string, seen: string[], goneAfter: number): Promise<LinkChange[]> {
    const { rows } = await c.query<LinkChange & { gone: boolean }>(
      `WITH missed AS (
         SELECT id, CASE WHEN a_node = $1 AND a_missed IS NOT NULL THEN a_missed + 1 ELSE a_missed END AS am,
                    CASE WHEN b_node = $1 AND b_missed IS NOT NULL THEN b_missed + 1 ELSE b_missed END AS bm
           FROM ${this.t("links")}
          WHERE (a_node = $1 OR b_node = $1) AND state = 'up' AND NOT (id = ANY($2::uuid[])))
       UPDATE ${this.t("links")} l SET a_missed = m.am, b_missed = m.bm,
              state = CASE WHEN COALESCE(m.am, $3) >= $3 AND COALESCE(m.bm, $3) >= $3 AND (m.am IS NOT NULL OR m.bm IS NOT NULL) THEN 'gone' ELSE 'up' END,
              gone_at = CASE WHEN COALESCE(m.am, $3) >= $3 AND COALESCE(m.bm, $3) >= $3 AND (m.am IS NOT NULL OR m.bm IS NOT NULL) THEN clock_timestamp() END
         FROM missed m WHERE l.id = m.id
       RETURNING l.id, l.a_node, l.a_port, l.b_node, l.b_port, l.protocols, l.state = 'gone' AS gone`,
      [nodeId, seen, goneAfter],
    );
    return rows.filter((r) => r.gone).map(({ gone: _gone, ...change }) => change);
  }

  private async deleteUnknownResolved(c: pg.PoolClient, resolved: ResolvedObservation[]): Promise<void> {
    if (resolved.length === 0) return;
    await c.query(
      `DELETE FROM ${this.t("unknown_neighbors")} u USING unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS x(n, p, lk, rk)
        WHERE u.node_id = x.n AND u.protocol = x.p AND u.local_port_key = x.lk AND u.remote_key = x.rk`,
      [resolved.map((r) => r.observer), resolved.map((r) => r.obs.protocol), resolved.map((r) => r.obs.localPortKey), resolved.map((r) => r.obs.remoteKey)],
    );
  }

  private async upsertUnknown(c: pg.PoolClient, nodeId: string, unknown: Observation[]): Promise<string[]> {
    const seen = new Map<string, Observation>();
    for (const o of unknown) seen.set(`${o.protocol}\n${o.localPortKey}\n${o.remoteKey}`, o);
    const list = [...seen.values()];
    if (list.length === 0) return [];
    const { rows } = await c.query<{ id: string }>(
      `INSERT INTO ${this.t("unknown_neighbors")} AS u (node_id, protocol, local_port_key, local_ifindex, local_port, remote_key, chassis_id, sys_name,
              port_key, port, mgmt_addresses, platform)
       SELECT $1, p, lk, li, lp, rk, ch, sn, pk, pt, string_to_array(ma, ' '), pf
         FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
              AS x(p, lk, li, lp, rk, ch, sn, pk, pt, ma, pf)
       ON CONFLICT (node_id, protocol, local_port_key, remote_key) DO UPDATE SET
         local_ifindex = EXCLUDED.local_ifindex, local_port = EXCLUDED.local_port, chassis_id = EXCLUDED.chassis_id, sys_name = EXCLUDED.sys_name,
         port_key = EXCLUDED.port_key, port = EXCLUDED.port, mgmt_addresses = EXCLUDED.mgmt_addresses, platform = EXCLUDED.platform,
         state = 'up', missed = 0, last_seen = clock_timestamp()
       RETURNING id`,
      [
        nodeId,
        list.map((o) => o.protocol),
        list.map((o) => o.localPortKey),
        list.map((o) => o.localIfindex),
        list.map((o) => o.localPort),
        list.map((o) => o.remoteKey),
        list.map((o) => o.chassisId),
        list.map((o) => o.sysName),
        list.map((o) => o.portKey),
        list.map((o) => o.port),
        list.map((o) => o.mgmtAddresses.join(" ")),
        list.map((o) => o.platform),
      ],
    );
    return rows.map((r) => r.id);
  }

  // ---- reads ------------------------------------------------------------------------------------

  /** Links (keyset by first_seen, id) whose two ends `folders` covers (null = all); optionally only one state. */
  async links(folders: string[] | null, state: string | null, limit: number, after: [string, string] | null): Promise<LinkRow[]> {
    const { rows } = await this.ctx.store.query<LinkRow>(
      `${LINK_SELECT((n) => this.t(n))}
        WHERE ($1::uuid[] IS NULL OR (da.folder_path && $1::uuid[] AND db.folder_path && $1::uuid[]))
          AND ($2::text IS NULL OR l.state = $2)
          AND ($3::timestamptz IS NULL OR (l.first_seen, l.id) > ($3::timestamptz, $4::uuid))
        ORDER BY l.first_seen, l.id LIMIT $5`,
      [folders, state, after?.[0] ?? null, after?.[1] ?? null, limit],
    );
    return rows;
  }

  /** The links of one node whose other end `folders` covers, keyset by first_seen, id. */
  async linksOf(nodeId: string, folders: string[] | null, state: string | null, limit: number, after: [string, string] | null): Promise<LinkRow[]> {
    const { rows } = await this.ctx.store.query<LinkRow>(
      `${LINK_SELECT((n) => this.t(n))}
        WHERE (l.a_node = $1 OR l.b_node = $1)
          AND ($2::uuid[] IS NULL OR (da.folder_path && $2::uuid[] AND db.folder_path && $2::uuid[]))
          AND ($3::text IS NULL OR l.state = $3)
          AND ($4::timestamptz IS NULL OR (l.first_seen, l.id) > ($4::timestamptz, $5::uuid))
        ORDER BY l.first_seen, l.id LIMIT $6`,
      [nodeId, folders, state, after?.[0] ?? null, after?.[1] ?? null, limit],
    );
    return rows;
  }

  /** Every live link's two ends (for the upstream computation). */
  async liveEdges(): Promise<[string, string][]> {
    const { rows } = await this.ctx.store.query<{ a: string; b: string }>(
      `SELECT DISTINCT a_node AS a, b_node AS b FROM ${this.t("links")} WHERE state = 'up'`,
    );
    return rows.map((r) => [r.a, r.b]);
  }

  private unknownSelect(): string {
    return `SELECT u.id, u.node_id, d.name AS node_name, d.folder_path, d.group_id, d.credential_id, u.protocol, u.local_port_key, u.local_ifindex,
                   u.local_port, u.remote_key, u.chassis_id, u.sys_name, u.port_key, u.port, u.mgmt_addresses, u.platform, u.state,
                   ${isoTimestamp("u.first_seen")} AS first_seen, ${isoTimestamp("u.last_seen")} AS last_seen
              FROM ${this.t("unknown_neighbors")} u JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = u.node_id`;
  }

  async unknown(folders: string[] | null, state: string | null, limit: number, after: [string, string] | null): Promise<UnknownRow[]> {
    const { rows } = await this.ctx.store.query<UnknownRow>(
      `${this.unknownSelect()}
        WHERE ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[]) AND ($2::text IS NULL OR u.state = $2)
          AND ($3::timestamptz IS NULL OR (u.first_seen, u.id) > ($3::timestamptz, $4::uuid))
        ORDER BY u.first_seen, u.id LIMIT $5`,
      [folders, state, after?.[0] ?? null, after?.[1] ?? null, limit],
    );
    return rows;
  }

  async unknownById(id: string): Promise<UnknownRow | null> {
    const { rows } = await this.ctx.store.query<UnknownRow>(`${this.unknownSelect()} WHERE u.id = $1`, [id]);
    return rows[0] ?? null;
  }

  async liveUnknown(): Promise<UnknownRow[]> {
    const { rows } = await this.ctx.store.query<UnknownRow>(`${this.unknownSelect()} WHERE u.state = 'up'`);
    return rows;
  }

  // ---- pins -------------------------------------------------------------------------------------

  async pins(): Promise<Map<string, string>> {
    const { rows } = await this.ctx.store.query<{ node_id: string; parent_id: string }>(`SELECT node_id, parent_id FROM ${this.t("pins")}`);
    return new Map(rows.map((r) => [r.node_id, r.parent_id]));
  }

  async pin(nodeId: string, parentId: string, by: string, q: Queryable = this.ctx.store): Promise<void> {
    await q.query(
      `INSERT INTO ${this.t("pins")} (node_id, parent_id, pinned_by) VALUES ($1, $2, $3)
       ON CONFLICT (node_id) DO UPDATE SET parent_id = $2, pinned_by = $3, pinned_at = clock_timestamp()`,
      [nodeId, parentId, by],
    );
  }

  async unpin(nodeId: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t("pins")} WHERE node_id = $1`, [nodeId]);
    return (rowCount ?? 0) > 0;
  }

  /** A node left inventory: what was said of it and about it goes (its links included, not marked gone: there is no node to draw). */
  async forgetNode(nodeId: string): Promise<void> {
    // One statement (atomic as the transaction it replaces, one round trip on a pool connection instead of six).
    await this.ctx.store.query(
      `WITH identity AS (DELETE FROM ${this.t("node_identity")} WHERE node_id = $1),
            links AS (DELETE FROM ${this.t("links")} WHERE a_node = $1 OR b_node = $1),
            neighbors AS (DELETE FROM ${this.t("unknown_neighbors")} WHERE node_id = $1)
       DELETE FROM ${this.t("pins")} WHERE node_id = $1 OR parent_id = $1`,
      [nodeId],
    );
  }
}
