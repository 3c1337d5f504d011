import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { NETCLOUD_CONTEXT, type NetcloudContext } from "../context.js";
import type { NetworkView, OrgView } from "../models/OrgModels.js";

/** An organization row; `api_key` is sealed. */
export interface OrgRow {
  id: string;
  org_id: string;
  name: string;
  base_url: string;
  api_key: string | null;
  credential_id: string | null;
  import_devices: boolean;
  file_by_prefix: boolean;
  max_devices: number | null;
  last_sync_status: string | null;
}

export interface OrgInsert {
  org_id: string;
  name: string;
  base_url: string;
  api_key: string | null;
  credential_id: string | null;
}

/** A device as one sync saw it. */
export interface DeviceSeen {
  serial: string;
  name: string | null;
  network_id: string | null;
  model: string | null;
  address: string | null;
  status: string | null;
}

/** A device whose status changed in this sync (or that has just become a node), with the node it is. */
export interface StatusChange {
  serial: string;
  name: string | null;
  status: string | null;
  node_id: string;
}

export interface ImportCandidate {
  serial: string;
  name: string | null;
  model: string | null;
  address: string;
}

const ROW = `id, org_id, name, base_url, api_key, credential_id, import_devices, file_by_prefix, max_devices, last_sync_status`;

/** SQL only: organizations, networks, devices. */
@Injectable()
export class OrgRepository {
  @Inject(NETCLOUD_CONTEXT)
  private ctx: NetcloudContext;

  private t(name: "orgs" | "networks" | "devices") {
    return this.ctx.store.table(name);
  }

  private get viewColumns() {
    return `o.id, o.org_id, o.name, o.base_url, CASE WHEN o.api_key IS NULL THEN 'credential' ELSE 'api_key' END AS key_source, o.credential_id,
            o.import_devices, o.file_by_prefix, o.max_devices, ${isoTimestamp("o.last_sync_at")} AS last_sync_at, o.last_sync_status,
            (SELECT count(*)::int FROM ${this.t("networks")} n WHERE n.org = o.id) AS networks,
            (SELECT count(*)::int FROM ${this.t("devices")} d WHERE d.org = o.id) AS devices,
            (SELECT count(*)::int FROM ${this.t("devices")} d WHERE d.org = o.id AND d.node_id IS NOT NULL) AS devices_as_nodes,
            ${isoTimestamp("o.created_at")} AS created_at`;
  }

  /** Inserts unless the organization is there already (then the existing id, skipped) or `max` are (then null). */
  async insert(row: OrgInsert, max: number, intervalSecs: number): Promise<{ id: string; skipped: boolean } | null> {
    return this.ctx.store.tx(async (c) => {
      await c.query(`SELECT pg_advisory_xact_lock(hashtext('netcloud.orgs.add'))`);
      const { rows: existing } = await c.query<{ id: string }>(`SELECT id FROM ${this.t("orgs")} WHERE org_id = $1`, [row.org_id]);
      if (existing.length) return { id: existing[0].id, skipped: true };
      const { rows: n } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.t("orgs")}`);
      if (n[0].n >= max) return null;
      const { rows } = await c.query<{ id: string }>(
        // Its first sync is queued by the add itself; the dispatcher takes it from the interval after.
        `INSERT INTO ${this.t("orgs")} (org_id, name, base_url, api_key, credential_id, next_sync_at)
         VALUES ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6)) RETURNING id`,
        [row.org_id, row.name, row.base_url, row.api_key, row.credential_id, intervalSecs],
      );
      return { id: rows[0].id, skipped: false };
    });
  }

  /** Which of these platform ids are monitored here. */
  async known(orgIds: string[]): Promise<Set<string>> {
    const { rows } = await this.ctx.store.query<{ org_id: string }>(`SELECT org_id FROM ${this.t("orgs")} WHERE org_id = ANY($1::text[])`, [orgIds]);
    return new Set(rows.map((r) => r.org_id));
  }

  async row(id: string): Promise<OrgRow | null> {
    const { rows } = await this.ctx.store.query<OrgRow>(`SELECT ${ROW} FROM ${this.t("orgs")} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async view(id: string): Promise<OrgView | null> {
    const { rows } = await this.ctx.store.query<OrgView>(`SELECT ${this.viewColumns} FROM ${this.t("orgs")} o WHERE o.id = $1`, [id]);
    return rows[0] ?? null;
  }

  async list(limit: number, after: readonly [string, string] | null): Promise<(OrgView & { sort_name: string })[]> {
    const { rows } = await this.ctx.store.query<OrgView & { sort_name: string }>(
      `SELECT ${this.viewColumns}, lower(o.name) AS sort_name FROM ${this.t("orgs")} o
        WHERE $1::text IS NULL OR (lower(o.name), o.id) > ($1::text, $2::uuid)
        ORDER BY lower(o.name), o.id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async remove(id: string): Promise<{ name: string } | null> {
    const { rows } = await this.ctx.store.query<{ name: string }>(`DELETE FROM ${this.t("orgs")} WHERE id = $1 RETURNING name`, [id]);
    return rows[0] ?? null;
  }

  async updateSettings(id: string, s: { import_devices: boolean; file_by_prefix: boolean; max_devices: number | null | undefined }): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t("orgs")} SET import_devices = $2, file_by_prefix = $3,
              max_devices = CASE WHEN $4::boolean THEN max_devices ELSE $5::int END, updated_at = clock_timestamp()
        WHERE id = $1`,
      [id, s.import_devices, s.file_by_prefix, s.max_devices === undefined, s.max_devices ?? null],
    );
    return rowCount === 1;
  }

  async networks(org: string, limit: number, after: readonly [string, string] | null): Promise<(NetworkView & { sort_name: string })[]> {
    const { rows } = await this.ctx.store.query<NetworkView & { sort_name: string }>(
      `SELECT n.network_id, n.name, n.watched, lower(n.name) AS sort_name,
              (SELECT count(*)::int FROM ${this.t("devices")} d WHERE d.org = n.org AND d.network_id = n.network_id) AS devices
         FROM ${this.t("networks")} n
        WHERE n.org = $1 AND ($2::text IS NULL OR (lower(n.name), n.network_id) > ($2::text, $3::text))
        ORDER BY lower(n.name), n.network_id LIMIT $4`,
      [org, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async setWatched(org: string, networkId: string, watched: boolean): Promise<NetworkView | null> {
    const { rows } = await this.ctx.store.query<NetworkView>(
      `UPDATE ${this.t("networks")} n SET watched = $3 WHERE org = $1 AND network_id = $2
        RETURNING n.network_id, n.name, n.watched,
                  (SELECT count(*)::int FROM ${this.t("devices")} d WHERE d.org = n.org AND d.network_id = n.network_id) AS devices`,
      [org, networkId, watched],
    );
    return rows[0] ?? null;
  }

  // ---- sync ---------------------------------------------------------------------------------------

  /**
   * Claims the organizations due for a sync (next_sync_at passed, no live claim elsewhere): sets their next time, so
   * each is handed out once however many replicas dispatch.
   */
  async claimDue(intervalSecs: number): Promise<string[]> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `UPDATE ${this.t("orgs")} SET next_sync_at = clock_timestamp() + make_interval(secs => $1)
        WHERE id IN (SELECT id FROM ${this.t("orgs")} WHERE next_sync_at <= clock_timestamp() ORDER BY next_sync_at LIMIT 1000 FOR UPDATE SKIP LOCKED)
        RETURNING id`,
      [intervalSecs],
    );
    return rows.map((r) => r.id);
  }

  /** Takes the organization's sync lock (false when another sync of it runs, unless that one is older than `staleSecs`). */
  async startSync(id: string, staleSecs: number): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t("orgs")} SET sync_started_at = clock_timestamp()
        WHERE id = $1 AND (sync_started_at IS NULL OR sync_started_at < clock_timestamp() - make_interval(secs => $2))`,
      [id, staleSecs],
    );
    return rowCount === 1;
  }

  async endSync(id: string, status: string, intervalSecs: number): Promise<void> {
    await this.ctx.store.query(
      `UPDATE ${this.t("orgs")} SET sync_started_at = NULL, last_sync_at = clock_timestamp(), last_sync_status = $2,
              next_sync_at = greatest(next_sync_at, clock_timestamp() + make_interval(secs => $3))
        WHERE id = $1`,
      [id, status, intervalSecs],
    );
  }

  /** Upserts the networks the platform lists (new ones watched, known ones keep their flag) and drops those it no longer lists. */
  async saveNetworks(org: string, networks: { id: string; name: string }[]): Promise<void> {
    await this.ctx.store.tx(async (c) => {
      await c.query(
        `INSERT INTO ${this.t("networks")} (org, network_id, name)
         SELECT $1, id, name FROM unnest($2::text[], $3::text[]) AS t(id, name)
         ON CONFLICT (org, network_id) DO UPDATE SET name = excluded.name`,
        [org, networks.map((n) => n.id), networks.map((n) => n.name)],
      );
      await c.query(`DELETE FROM ${this.t("networks")} WHERE org = $1 AND NOT (network_id = ANY($2::text[]))`, [org, networks.map((n) => n.id)]);
    });
  }

  /**
   * Upserts the devices seen, in one statement per batch; answers the devices that are nodes here whose status
   * changed. A device the platform no longer lists is dropped unless it was imported (the memory of imports stays).
   */
  async saveDevices(org: string, devices: DeviceSeen[]): Promise<StatusChange[]> {
    const changes: StatusChange[] = [];
    const BATCH = 10000;
    await this.ctx.store.tx(async (c) => {
      for (let i = 0; i < devices.length; i += BATCH) {
        const b = devices.slice(i, i + BATCH);
        const { rows } = await c.query<StatusChange>(
          `WITH seen AS (
             SELECT DISTINCT ON (serial) serial, name, network_id, model, address, status
               FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::inet[], $7::text[]) AS t(serial, name, network_id, model, address, status)
              ORDER BY serial),
           prev AS (SELECT d.serial, d.status FROM ${this.t("devices")} d JOIN seen USING (serial) WHERE d.org = $1),
           up AS (
             INSERT INTO ${this.t("devices")} AS d (org, serial, name, network_id, model, address, status, ever_online, status_changed_at)
             SELECT $1, serial, name, network_id, model, address, status, coalesce(status IN ('online', 'alerting'), false), clock_timestamp() FROM seen
             ON CONFLICT (org, serial) DO UPDATE SET
               name = excluded.name, network_id = excluded.network_id, model = excluded.model,
               address = coalesce(excluded.address, d.address), status = excluded.status,
               ever_online = d.ever_online OR excluded.ever_online,
               status_changed_at = CASE WHEN d.status IS DISTINCT FROM excluded.status THEN clock_timestamp() ELSE d.status_changed_at END
             -- A device as it was is not rewritten: a steady sync writes (and returns) only what changed.
             WHERE (d.name, d.network_id, d.model, d.address, d.status, d.ever_online)
                   IS DISTINCT FROM (excluded.name, excluded.network_id, excluded.model, coalesce(excluded.address, d.address), excluded.status,
                                     d.ever_online OR excluded.ever_online)
             RETURNING d.serial, d.name, d.status, d.node_id)
           SELECT up.serial, up.name, up.status, up.node_id FROM up LEFT JOIN prev USING (serial)
            WHERE up.node_id IS NOT NULL AND prev.status IS DISTINCT FROM up.status`,
          [
            org,
            b.map((d) => d.serial),
            b.map((d) => d.name),
            b.map((d) => d.network_id),
            b.map((d) => d.model),
            b.map((d) => d.address),
            b.map((d) => d.status),
          ],
        );
        changes.push(...rows);
      }
      await c.query(`DELETE FROM ${this.t("devices")} WHERE org = $1 AND imported_at IS NULL AND NOT (serial = ANY($2::text[]))`, [
        org,
        devices.map((d) => d.serial),
      ]);
    });
    return changes;
  }

  /** Forgets nodes that are gone (deleted on any replica, even while no bus event reached this one): they stay imported. */
  async forgetDeletedNodes(org: string | null): Promise<number> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t("devices")} d SET node_id = NULL, node_deleted_at = clock_timestamp()
        WHERE d.node_id IS NOT NULL AND ($1::uuid IS NULL OR d.org = $1)
          AND NOT EXISTS (SELECT 1 FROM ${NODE_DIRECTORY_VIEW} n WHERE n.id = d.node_id)`,
      [org],
    );
    return rowCount ?? 0;
  }

  /** The bus said this node was deleted. */
  async nodeDeleted(nodeId: string): Promise<number> {
    const { rowCount } = await this.ctx.store.query(`UPDATE ${this.t("devices")} SET node_id = NULL, node_deleted_at = clock_timestamp() WHERE node_id = $1`, [
      nodeId,
    ]);
    return rowCount ?? 0;
  }

  /** Devices this organization brought in that are nodes now (what max_devices caps). */
  async nodesNow(org: string): Promise<number> {
    const { rows } = await this.ctx.store.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.t("devices")} WHERE org = $1 AND node_id IS NOT NULL`, [
      org,
    ]);
    return rows[0].n;
  }

  /** The import rule: in a watched network, online at least once, never imported, with an address; oldest seen first. */
  async candidates(org: string, limit: number | null): Promise<ImportCandidate[]> {
    const { rows } = await this.ctx.store.query<ImportCandidate>(
      `SELECT d.serial, d.name, d.model, host(d.address) AS address
         FROM ${this.t("devices")} d
         JOIN ${this.t("networks")} n ON n.org = d.org AND n.network_id = d.network_id AND n.watched
        WHERE d.org = $1 AND d.imported_at IS NULL AND d.ever_online AND d.address IS NOT NULL
        ORDER BY d.serial LIMIT $2`,
      [org, limit],
    );
    return rows;
  }

  /**
   * Links each candidate to the node at its address (the one just imported, or one that stood there already) and
   * marks it imported for good. Answers the devices linked, with their status (for the alerts of new nodes).
   */
  async linkImported(org: string, serials: string[]): Promise<StatusChange[]> {
    const { rows } = await this.ctx.store.query<StatusChange>(
      `WITH c AS (
         SELECT d.serial, d.address FROM ${this.t("devices")} d WHERE d.org = $1 AND d.serial = ANY($2::text[]) AND d.imported_at IS NULL),
       m AS (
         SELECT DISTINCT ON (c.serial) c.serial, n.id FROM c JOIN ${NODE_DIRECTORY_VIEW} n ON n.address = c.address ORDER BY c.serial, n.id)
       UPDATE ${this.t("devices")} d SET node_id = m.id, imported_at = clock_timestamp()
         FROM m WHERE d.org = $1 AND d.serial = m.serial
        RETURNING d.serial, d.name, d.status, d.node_id`,
      [org, serials],
    );
    return rows;
  }
}
