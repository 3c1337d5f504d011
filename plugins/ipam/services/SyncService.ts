import { Inject, Injectable } from "@tsed/di";
import { parseCidr, ApiError } from "../../../core/index.js";
import { Folders } from "../../inventory/contract.js";
import { IPAM_CONTEXT, type IpamContext } from "../context.js";
import { IpamClient, IpamSyncError } from "../lib/ipamClient.js";
import { OverlapRepository } from "../repositories/OverlapRepository.js";
import { ServerRepository } from "../repositories/ServerRepository.js";

export interface SyncResult {
  ok: boolean;
  error_class: string | null;
  sites: number;
  prefixes: number;
  /** Prefixes left out: not a CIDR. */
  skipped: number;
  folders_updated: number;
}

/**
 * The sync of one server: sites and prefixes pulled through `next` links, stored in place of the previous pull, then
 * each mapped folder's ip_ranges set to its site's prefixes (through inventory's Folders). A failure keeps the
 * previous data, records last_sync_at and last_error_class on the server, and is logged in detail (never the token).
 */
@Injectable()
export class SyncService {
  @Inject(IPAM_CONTEXT)
  private ctx: IpamContext;

  @Inject(ServerRepository)
  private repo: ServerRepository;

  @Inject(OverlapRepository)
  private overlaps: OverlapRepository;

  @Inject(Folders)
  private folders: Folders;

  /** The dispatcher job: claims the due servers and starts one `ipam.sync` job for each. */
  async dispatch(): Promise<number> {
    const ids = await this.repo.claimDue();
    for (const id of ids) await this.ctx.jobs.now("sync", { id });
    return ids.length;
  }

  async sync(id: string): Promise<SyncResult> {
    const row = await this.repo.get(id);
    const result: SyncResult = { ok: false, error_class: null, sites: 0, prefixes: 0, skipped: 0, folders_updated: 0 };
    if (!row) return result;
    let token: string;
    try {
      token = this.ctx.secrets.unseal(row.token);
    } catch (err) {
      this.ctx.log.error("ipam sync: the stored token cannot be unsealed (sealed with another key?)", { server: id, reason: (err as Error).name });
      await this.repo.recordFailure(id, "token_unreadable");
      return { ...result, error_class: "token_unreadable" };
    }
    const client = new IpamClient({
      baseUrl: row.base_url,
      token,
      caCertPem: row.ca_cert_pem,
      timeoutMs: this.ctx.config.requestTimeoutMs,
      pageSize: this.ctx.config.pageSize,
      maxObjects: this.ctx.config.maxObjects,
      maxResponseBytes: this.ctx.config.maxResponseBytes,
    });
    const started = Date.now();
    const timings: { fetch_ms?: number; store_ms?: number; recompute_ms?: number; changed?: number } = {};
    try {
      const sites = await client.sites();
      const raw = await client.prefixes(row.site_id_field);
      const prefixes: { id: string; prefix: string; site_id: string | null }[] = [];
      for (const p of raw) {
        const cidr = parseCidr(p.prefix);
        if (!cidr) {
          result.skipped++;
          continue;
        }
        prefixes.push({ id: p.id, prefix: cidr.text, site_id: p.site_id });
      }
      timings.fetch_ms = Date.now() - started;
      if (!(await this.repo.replaceData(id, sites, prefixes, (db) => this.overlaps.recomputePairs(db), timings))) return result; // deleted meanwhile
      result.ok = true;
      result.sites = sites.length;
      result.prefixes = prefixes.length;
    } catch (err) {
      const errorClass = err instanceof IpamSyncError ? err.errorClass : "internal";
      this.ctx.log.warn("ipam sync failed", {
        server: id,
        name: row.name,
        base_url: row.base_url,
        error_class: errorClass,
        upstream_status: err instanceof IpamSyncError ? err.status : null,
        detail:
          err instanceof IpamSyncError
            ? err.detail
            : String((err as Error)?.message ?? err)
                .split(token)
                .join("[redacted]"),
        ms: Date.now() - started,
      });
      await this.repo.recordFailure(id, errorClass);
      return { ...result, error_class: errorClass };
    } finally {
      await client.close();
    }
    result.folders_updated = await this.applyFolderRanges(id);
    this.ctx.log.info("ipam sync done", {
      server: id,
      sites: result.sites,
      prefixes: result.prefixes,
      skipped: result.skipped,
      ms: Date.now() - started,
      ...timings,
    });
    return result;
  }

  /**
   * Sets each mapped folder's ip_ranges to its site's prefixes (several sites mapped to one folder: their union).
   * A mapping whose folder is gone is dropped. Returns how many folders were written.
   */
  async applyFolderRanges(serverId: string): Promise<number> {
    const byFolder = new Map<string, Set<string>>();
    for (const m of await this.repo.mappedRanges(serverId)) {
      const set = byFolder.get(m.folder_id) ?? new Set<string>();
      for (const r of m.ranges) set.add(r);
      byFolder.set(m.folder_id, set);
    }
    let written = 0;
    for (const [folderId, ranges] of byFolder) {
      try {
        await this.folders.setIpRanges(folderId, [...ranges], "All");
        written++;
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          await this.repo.dropFolderMappings(folderId);
          this.ctx.log.info("ipam: a mapped folder no longer exists; its mapping is dropped", { server: serverId, folder: folderId });
        } else {
          this.ctx.log.warn("ipam: could not set a mapped folder's ip_ranges", { server: serverId, folder: folderId, error: err });
        }
      }
    }
    return written;
  }
}
