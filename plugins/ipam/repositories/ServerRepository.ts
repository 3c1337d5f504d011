import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { FOLDER_RANGES_VIEW } from "../../inventory/contract.js";
import { IPAM_CONTEXT, type IpamContext } from "../context.js";

/** A server row; `token` is sealed. */
export interface ServerRow {
  id: string;
  name: string;
  base_url: string;
  enabled: boolean;
  sync_interval_secs: number;
  site_id_field: string | null;
  token: string;
  ca_cert_pem: string | null;
  next_sync_at: string;
  last_sync_at: string | null;
  last_success_at: string | null;
  last_error_class: string | null;
  site_count: number | null;
  prefix_count: number | null;
  created_at: string;
  updated_at: string;
}

export type ServerWrite = Pick<ServerRow, "name" | "base_url" | "enabled" | "sync_interval_secs" | "site_id_field" | "token" | "ca_cert_pem">;

const WRITE_COLUMNS = ["name", "base_url", "enabled", "sync_interval_secs", "site_id_field", "token", "ca_cert_pem"] as const;

const COLUMNS = `id, name, base_url, enabled, sync_interval_secs, site_id_field, token, ca_cert_pem,
  ${isoTimestamp("next_sync_at")} AS next_sync_at, ${isoTimestamp("last_sync_at")} AS last_sync_at,
  ${isoTimestamp("last_success_at")} AS last_success_at, last_error_class, site_count, prefix_count,
  ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;

export interface SiteRow {
  site_id: string;
  name: string;
  slug: string | null;
  prefix_count: number;
  folder_id: string | null;
}

export interface MappingRow {
  site_id: string;
  site_name: string | null;
  folder_id: string;
}

/** SQL only: servers, their synced sites and prefixes, and the site -> folder mapping. */
@Injectable()
export class ServerRepository {
  @Inject(IPAM_CONTEXT)
  private ctx: IpamContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  async insert(row: ServerWrite): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t("servers")} (${WRITE_COLUMNS.join(", ")}) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      WRITE_COLUMNS.map((c) => row[c]),
    );
    return rows[0].id;
  }

  async get(id: string): Promise<ServerRow | null> {
    const { rows } = await this.ctx.store.query<ServerRow>(`SELECT ${COLUMNS} FROM ${this.t("servers")} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async list(limit: number, after: readonly [string, string] | null): Promise<(ServerRow & { sort_name: string })[]> {
    const { rows } = await this.ctx.store.query<ServerRow & { sort_name: string }>(
      `SELECT ${COLUMNS}, lower(name) AS sort_name FROM ${this.t("servers")}
        WHERE $1::text IS NULL OR (lower(name), id) > ($1::text, $2::uuid)
        ORDER BY lower(name), id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  /** Full update; `resync` moves the next sync to now (a new address or token). */
  async update(id: string, row: ServerWrite, resync: boolean): Promise<boolean> {
    const set = WRITE_COLUMNS.map((c, i) => `${c} = $${i + 2}`).join(", ");
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t("servers")} SET ${set}, updated_at = clock_timestamp(),
              next_sync_at = CASE WHEN $9 THEN clock_timestamp() ELSE next_sync_at END WHERE id = $1`,
      [id, ...WRITE_COLUMNS.map((c) => row[c]), resync],
    );
    return rowCount === 1;
  }

  /** Deletes the server (its sites, prefixes and mappings go with it), then runs `after` in the same transaction. */
  async remove(id: string, after: (db: Queryable) => Promise<unknown>): Promise<boolean> {
    return this.ctx.store.tx(async (db) => {
      const { rowCount } = await db.query(`DELETE FROM ${this.t("servers")} WHERE id = $1`, [id]);
      if (rowCount !== 1) return false;
      await after(db);
      return true;
    });
  }

  /**
   * Claims the enabled servers whose next sync is due and moves their next sync on by their interval, in one
   * statement (replicas never claim the same server twice).
   */
  async claimDue(): Promise<string[]> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `UPDATE ${this.t("servers")} SET next_sync_at = clock_timestamp() + make_interval(secs => sync_interval_secs)
        WHERE enabled AND next_sync_at <= clock_timestamp() RETURNING id`,
    );
    return rows.map((r) => r.id);
  }

  async recordFailure(id: string, errorClass: string): Promise<void> {
    await this.ctx.store.query(`UPDATE ${this.t("servers")} SET last_sync_at = clock_timestamp(), last_error_class = $2 WHERE id = $1`, [id, errorClass]);
  }

  /**
   * Replaces what the server's last sync pulled, in one transaction: sites rewritten, prefixes written where they
   * changed (an id whose prefix or site changed is replaced), then `after` (the overlap pairs' recompute) when any
   * prefix changed; records the success.
   */
  async replaceData(
    id: string,
    sites: { id: string; name: string; slug: string | null }[],
    prefixes: { id: string; prefix: string; site_id: string | null }[],
    after: (db: Queryable) => Promise<unknown>,
    timings: { store_ms?: number; recompute_ms?: number; changed?: number } = {},
  ): Promise<boolean> {
    const t0 = Date.now();
    return this.ctx.store.tx(async (db) => {
      const { rows } = await db.query(`SELECT 1 FROM ${this.t("servers")} WHERE id = $1 FOR UPDATE`, [id]);
      if (!rows.length) return false;
      await db.query(`DELETE FROM ${this.t("sites")} WHERE server_id = $1`, [id]);
      const CHUNK = 20000;
      for (let i = 0; i < sites.length; i += CHUNK) {
        const part = sites.slice(i, i + CHUNK);
        await db.query(
          `INSERT INTO ${this.t("sites")} (server_id, site_id, name, slug)
           SELECT $1, s, n, g FROM unnest($2::text[], $3::text[], $4::text[]) AS u(s, n, g) ON CONFLICT DO NOTHING`,
          [id, part.map((s) => s.id), part.map((s) => s.name), part.map((s) => s.slug)],
        );
      }
      // Prefixes: only what changed is written (a GiST insert is not cheap, and an unchanged IPAM is the usual case).
      await db.query(`CREATE TEMP TABLE ipam_incoming (ipam_id text PRIMARY KEY, prefix cidr NOT NULL, site_id text) ON COMMIT DROP`);
      for (let i = 0; i < prefixes.length; i += CHUNK) {
        const part = prefixes.slice(i, i + CHUNK);
        await db.query(
          `INSERT INTO ipam_incoming (ipam_id, prefix, site_id)
           SELECT p, c::cidr, s FROM unnest($1::text[], $2::text[], $3::text[]) AS u(p, c, s) ON CONFLICT DO NOTHING`,
          [part.map((p) => p.id), part.map((p) => p.prefix), part.map((p) => p.site_id)],
        );
      }
      await db.query(`ANALYZE ipam_incoming`);
      const removed = await db.query(
        `DELETE FROM ${this.t("prefixes")} p WHERE p.server_id = $1 AND NOT EXISTS (
           SELECT 1 FROM ipam_incoming i WHERE i.ipam_id = p.ipam_id AND i.prefix = p.prefix AND i.site_id IS NOT DISTINCT FROM p.site_id)`,
        [id],
      );
      const added = await db.query(
        `INSERT INTO ${this.t("prefixes")} (server_id, ipam_id, prefix, site_id)
         SELECT $1, i.ipam_id, i.prefix, i.site_id FROM ipam_incoming i
          WHERE NOT EXISTS (SELECT 1 FROM ${this.t("prefixes")} p WHERE p.server_id = $1 AND p.ipam_id = i.ipam_id)`,
        [id],
      );
      const changed = (removed.rowCount ?? 0) + (added.rowCount ?? 0);
      await db.query(`DROP TABLE ipam_incoming`);
      await db.query(
        `UPDATE ${this.t("servers")} SET last_sync_at = clock_timestamp(), last_success_at = clock_timestamp(), last_error_class = NULL,
                site_count = $2, prefix_count = $3 WHERE id = $1`,
        [id, sites.length, prefixes.length],
      );
      const t1 = Date.now();
      timings.store_ms = t1 - t0;
      timings.changed = changed;
      // The overlap pairs follow the prefixes; unchanged prefixes leave them as they are.
      if (changed > 0) await after(db);
      timings.recompute_ms = Date.now() - t1;
      return true;
    });
  }

  async sites(serverId: string, limit: number, after: readonly [string, string] | null): Promise<(SiteRow & { sort_name: string })[]> {
    const { rows } = await this.ctx.store.query<SiteRow & { sort_name: string }>(
      `SELECT s.site_id, s.name, s.slug, lower(s.name) AS sort_name,
              (SELECT count(*)::int FROM ${this.t("prefixes")} p WHERE p.server_id = s.server_id AND p.site_id = s.site_id) AS prefix_count,
              m.folder_id
         FROM ${this.t("sites")} s LEFT JOIN ${this.t("site_mappings")} m ON m.server_id = s.server_id AND m.site_id = s.site_id
        WHERE s.server_id = $1 AND ($2::text IS NULL OR (lower(s.name), s.site_id) > ($2::text, $3::text))
        ORDER BY lower(s.name), s.site_id LIMIT $4`,
      [serverId, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async knownSites(serverId: string, siteIds: string[]): Promise<Set<string>> {
    const { rows } = await this.ctx.store.query<{ site_id: string }>(
      `SELECT site_id FROM ${this.t("sites")} WHERE server_id = $1 AND site_id = ANY($2::text[])
       UNION SELECT DISTINCT site_id FROM ${this.t("prefixes")} WHERE server_id = $1 AND site_id = ANY($2::text[])`,
      [serverId, siteIds],
    );
    return new Set(rows.map((r) => r.site_id));
  }

  async mappings(serverId: string): Promise<MappingRow[]> {
    const { rows } = await this.ctx.store.query<MappingRow>(
      `SELECT m.site_id, s.name AS site_name, m.folder_id FROM ${this.t("site_mappings")} m
         LEFT JOIN ${this.t("sites")} s ON s.server_id = m.server_id AND s.site_id = m.site_id
        WHERE m.server_id = $1 ORDER BY m.site_id`,
      [serverId],
    );
    return rows;
  }

  async replaceMappings(serverId: string, mappings: { site_id: string; folder_id: string }[], db: Queryable): Promise<void> {
    await db.query(`DELETE FROM ${this.t("site_mappings")} WHERE server_id = $1`, [serverId]);
    if (!mappings.length) return;
    await db.query(`INSERT INTO ${this.t("site_mappings")} (server_id, site_id, folder_id) SELECT $1, s, f FROM unnest($2::text[], $3::uuid[]) AS u(s, f)`, [
      serverId,
      mappings.map((m) => m.site_id),
      mappings.map((m) => m.folder_id),
    ]);
  }

  async dropFolderMappings(folderId: string): Promise<number> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t("site_mappings")} WHERE folder_id = $1`, [folderId]);
    return rowCount ?? 0;
  }

  /** For each mapped site of the server: its folder and the site's prefixes (distinct, in address order). */
  async mappedRanges(serverId: string): Promise<{ site_id: string; folder_id: string; ranges: string[] }[]> {
    const { rows } = await this.ctx.store.query<{ site_id: string; folder_id: string; ranges: string[] }>(
      `SELECT m.site_id, m.folder_id,
              coalesce((SELECT array_agg(DISTINCT p.prefix ORDER BY p.prefix)::text[] FROM ${this.t("prefixes")} p
                         WHERE p.server_id = m.server_id AND p.site_id = m.site_id), '{}') AS ranges
         FROM ${this.t("site_mappings")} m WHERE m.server_id = $1 ORDER BY m.site_id`,
      [serverId],
    );
    return rows;
  }

  /** The folders (of those given) that exist, from inventory's published folder_ranges view. */
  async existingFolders(ids: string[], db: Queryable = this.ctx.store): Promise<Set<string>> {
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${FOLDER_RANGES_VIEW} WHERE id = ANY($1::uuid[])`, [ids]);
    return new Set(rows.map((r) => r.id));
  }
}
