import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { FOLDER_RANGES_VIEW } from "../../inventory/contract.js";
import { IPAM_CONTEXT, type IpamContext } from "../context.js";

/** The overlap key of a pair (lo, hi): the first 32 hex digits of SHA-256 of "<lo> <hi>" (canonical cidr text). */
const KEY_SQL = "substr(encode(sha256(convert_to(lo::text || ' ' || hi::text, 'UTF8')), 'hex'), 1, 32)";

export interface OverlapRow {
  key: string;
  lo: string;
  hi: string;
  /** Site keys, sorted: 'ipam:<server>:<site>' or 'folder:<folder>'. */
  sites: string[];
  acked: boolean;
  ack_sites: string[] | null;
  note: string | null;
  acked_at: string | null;
  acked_by: string | null;
}

/**
 * SQL only: subnet overlaps, computed in PostgreSQL. The prefixes taking part are the synced IPAM prefixes that
 * belong to a site, and the own ip_ranges of every folder that no IPAM site is mapped to (a mapped folder's ranges
 * are its site's prefixes already), each folder being a site of its own. An overlap is an unordered pair of
 * prefixes {lo, hi} that share addresses (&&) and are held by two different sites; its sites are every site holding
 * lo or hi. Pairs come from a GiST (inet_ops) self-join, never from comparing pairs in JavaScript.
 */
@Injectable()
export class OverlapRepository {
  @Inject(IPAM_CONTEXT)
  private ctx: IpamContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  /**
   * Current overlaps ordered by key, after `afterKey`, at most `limit`; or the one whose key is `onlyKey`.
   */
  async list(opts: { limit: number; afterKey?: string | null; onlyKey?: string | null }): Promise<OverlapRow[]> {
    const p = this.t("prefixes");
    const { rows } = await this.ctx.store.query<OverlapRow>(
      `WITH f AS MATERIALIZED (
         SELECT DISTINCT r AS prefix, 'folder:' || fr.id::text AS site_key
           FROM ${FOLDER_RANGES_VIEW} fr CROSS JOIN LATERAL unnest(fr.ip_ranges) AS r
          WHERE cardinality(fr.ip_ranges) > 0
            AND NOT EXISTS (SELECT 1 FROM ${this.t("site_mappings")} m WHERE m.folder_id = fr.id)),
       pairs AS (
         SELECT key, lo, hi FROM ${this.t("overlap_pairs")}
         UNION
         SELECT ${KEY_SQL}, lo, hi FROM (
           SELECT least(f.prefix, b.prefix) AS lo, greatest(f.prefix, b.prefix) AS hi
             FROM f JOIN ${p} b ON f.prefix && b.prefix AND b.site_id IS NOT NULL
           UNION
           SELECT least(a.prefix, b.prefix), greatest(a.prefix, b.prefix)
             FROM f a JOIN f b ON a.prefix && b.prefix AND a.site_key < b.site_key) live),
       chosen AS (
         SELECT * FROM pairs
          WHERE ($1::text IS NULL OR key > $1::text) AND ($2::text IS NULL OR key = $2::text)
          ORDER BY key LIMIT $3)
       SELECT c.key, c.lo::text AS lo, c.hi::text AS hi, s.sites,
              (a.key IS NOT NULL AND s.sites <@ a.sites) AS acked, a.sites AS ack_sites, a.note,
              ${isoTimestamp("a.acked_at")} AS acked_at, a.acked_by
         FROM chosen c
         CROSS JOIN LATERAL (
           SELECT array_agg(DISTINCT x.site_key ORDER BY x.site_key) AS sites FROM (
             SELECT q.site_key FROM ${p} q WHERE q.site_id IS NOT NULL AND q.prefix = ANY (ARRAY[c.lo, c.hi])
             UNION ALL
             SELECT f.site_key FROM f WHERE f.prefix = ANY (ARRAY[c.lo, c.hi])) x) s
         LEFT JOIN ${this.t("overlap_acks")} a ON a.key = c.key
        ORDER BY c.key`,
      [opts.afterKey ?? null, opts.onlyKey ?? null, opts.limit],
    );
    return rows;
  }

  /**
   * Recomputes the overlapping pairs between IPAM sites (a GiST self-join on &&, pairs of one site left out), inside
   * the caller's transaction; serialised so that two syncs never interleave their recomputes.
   */
  async recomputePairs(db: Queryable): Promise<number> {
    const p = this.t("prefixes");
    await db.query(`SELECT pg_advisory_xact_lock(hashtext('ipam.overlap_pairs'))`);
    await db.query(`DELETE FROM ${this.t("overlap_pairs")}`);
    const { rowCount } = await db.query(
      `INSERT INTO ${this.t("overlap_pairs")} (key, lo, hi)
       SELECT ${KEY_SQL}, lo, hi FROM (
         SELECT DISTINCT a.prefix AS lo, b.prefix AS hi
           FROM ${p} a JOIN ${p} b ON a.prefix && b.prefix AND a.site_key <> b.site_key AND a.prefix <= b.prefix
          WHERE a.site_id IS NOT NULL AND b.site_id IS NOT NULL) x`,
    );
    return rowCount ?? 0;
  }

  async upsertAck(key: string, sites: string[], note: string | null, by: string): Promise<void> {
    await this.ctx.store.query(
      `INSERT INTO ${this.t("overlap_acks")} (key, sites, note, acked_by) VALUES ($1, $2::text[], $3, $4)
       ON CONFLICT (key) DO UPDATE SET sites = EXCLUDED.sites, note = EXCLUDED.note, acked_by = EXCLUDED.acked_by, acked_at = clock_timestamp()`,
      [key, sites, note, by],
    );
  }

  /** Names of the sites and folders named by these keys. */
  async names(ipam: { server_id: string; site_id: string }[], folders: string[]): Promise<{ ipam: Map<string, string>; folders: Map<string, string> }> {
    const { rows: s } = await this.ctx.store.query<{ server_id: string; site_id: string; name: string }>(
      `SELECT s.server_id, s.site_id, s.name FROM ${this.t("sites")} s
         JOIN unnest($1::uuid[], $2::text[]) AS u(server_id, site_id) ON u.server_id = s.server_id AND u.site_id = s.site_id`,
      [ipam.map((i) => i.server_id), ipam.map((i) => i.site_id)],
    );
    const { rows: f } = await this.ctx.store.query<{ id: string; name: string }>(`SELECT id, name FROM ${FOLDER_RANGES_VIEW} WHERE id = ANY($1::uuid[])`, [
      folders,
    ]);
    return {
      ipam: new Map(s.map((r) => [`${r.server_id}:${r.site_id}`, r.name])),
      folders: new Map(f.map((r) => [r.id, r.name])),
    };
  }
}
