import { X509Certificate } from "node:crypto";
import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isUuid, notFound, page } from "../../../core/index.js";
import { IPAM_CONTEXT, type IpamContext } from "../context.js";
import { baseUrlProblem, originKey } from "../lib/origin.js";
import type { IpamServerBody, IpamServerCreateBody, IpamServerView, IpamSiteView, SiteMappingsBody, SiteMappingView } from "../models/IpamModels.js";
import { OverlapRepository } from "../repositories/OverlapRepository.js";
import { ServerRepository, type ServerRow, type ServerWrite } from "../repositories/ServerRepository.js";

const noServer = () => notFound("No such IPAM server.");

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM text normalised, or 400 invalid_ca_cert when it holds no certificate or one that does not parse. */
export function checkCaCert(pem: string): string {
  const blocks = pem.match(PEM_BLOCK) ?? [];
  if (!blocks.length) throw badRequest("invalid_ca_cert", "ca_cert_pem holds no PEM certificate (-----BEGIN CERTIFICATE-----).");
  blocks.forEach((b, i) => {
    try {
      new X509Certificate(b);
    } catch {
      throw badRequest("invalid_ca_cert", `ca_cert_pem: certificate ${i + 1} does not parse.`);
    }
  });
  return `${blocks.join("\n")}\n`;
}

/**
 * IPAM servers: the spec's full-document PUT (site_id_field two-state, token kept unless replaced and never sent to
 * a new address, ca_cert_pem three-state), create, list, get, delete, their synced sites and the site -> folder mapping.
 */
@Injectable()
export class ServerService {
  @Inject(IPAM_CONTEXT)
  private ctx: IpamContext;

  @Inject(ServerRepository)
  private repo: ServerRepository;

  @Inject(OverlapRepository)
  private overlaps: OverlapRepository;

  view(row: ServerRow): IpamServerView {
    return {
      id: row.id,
      name: row.name,
      base_url: row.base_url,
      enabled: row.enabled,
      sync_interval_secs: row.sync_interval_secs,
      site_id_field: row.site_id_field,
      has_token: row.token !== "",
      ca_cert_pem: row.ca_cert_pem,
      status: {
        last_sync_at: row.last_sync_at,
        last_success_at: row.last_success_at,
        last_error_class: row.last_error_class,
        site_count: row.site_count,
        prefix_count: row.prefix_count,
        next_sync_at: row.next_sync_at,
      },
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  async create(body: IpamServerCreateBody): Promise<string> {
    const common = this.common(body);
    const token = body.token.trim();
    if (!token) throw badRequest("validation_failed", "token must not be blank.");
    return this.repo.insert({
      ...common,
      enabled: body.enabled ?? true,
      site_id_field: body.site_id_field ?? null,
      token: this.ctx.secrets.seal(token),
      ca_cert_pem: body.ca_cert_pem ? checkCaCert(body.ca_cert_pem) : null,
    });
  }

  async list(limit: number, cursor?: string): Promise<{ rows: IpamServerView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, ([, id]) => isUuid(id)) as [string, string]) : null;
    const { rows, next } = page(await this.repo.list(limit, after), limit, (r) => [r.sort_name, r.id]);
    return { rows: rows.map((r) => this.view(r)), next };
  }

  async get(id: string): Promise<IpamServerView> {
    return this.view(await this.row(id));
  }

  async row(id: string): Promise<ServerRow> {
    const row = isUuid(id) ? await this.repo.get(id) : null;
    if (!row) throw noServer();
    return row;
  }

  /**
   * The spec's full-document PUT. site_id_field: omitted clears it. token: omitted or null keeps the stored one, but a
   * base_url on another scheme, host or port needs a new one (400 token_required_for_new_address). ca_cert_pem:
   * absent keeps, null clears, a string replaces.
   */
  async replace(id: string, body: IpamServerBody): Promise<IpamServerView> {
    const common = this.common(body);
    const row = await this.row(id);
    const given = typeof body.token === "string" ? body.token.trim() : null;
    if (typeof body.token === "string" && !given) throw badRequest("validation_failed", "token must not be blank.");
    const moved = originKey(common.base_url) !== originKey(row.base_url);
    if (moved && given === null) {
      throw badRequest(
        "token_required_for_new_address",
        "base_url names a different scheme, host or port: send the token for the new address (the stored token is never sent to a new address).",
      );
    }
    const caCert = body.ca_cert_pem === undefined ? row.ca_cert_pem : body.ca_cert_pem === null ? null : checkCaCert(body.ca_cert_pem);
    const write: ServerWrite = {
      ...common,
      enabled: body.enabled,
      site_id_field: body.site_id_field ?? null,
      token: given === null ? row.token : this.ctx.secrets.seal(given),
      ca_cert_pem: caCert,
    };
    const resync = moved || given !== null || common.base_url !== row.base_url || write.site_id_field !== row.site_id_field || caCert !== row.ca_cert_pem;
    if (!(await this.repo.update(id, write, resync && body.enabled))) throw noServer();
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    // Its prefixes leave the overlaps with it.
    if (!isUuid(id) || !(await this.repo.remove(id, (db) => this.overlaps.recomputePairs(db)))) throw noServer();
  }

  async sites(id: string, limit: number, cursor?: string): Promise<{ rows: IpamSiteView[]; next: string | null }> {
    await this.row(id);
    const after = cursor ? (decodeCursor(cursor, 2) as [string, string]) : null;
    const { rows, next } = page(await this.repo.sites(id, limit, after), limit, (r) => [r.sort_name, r.site_id]);
    return { rows: rows.map(({ sort_name: _omit, ...r }) => r), next };
  }

  async mappings(id: string): Promise<SiteMappingView[]> {
    await this.row(id);
    return this.repo.mappings(id);
  }

  /**
   * Replaces the server's whole site -> folder mapping. Each site at most once and known to the last sync; each folder
   * must exist (400 unknown_reference). Several sites may share a folder (it follows all of them).
   */
  async setMappings(id: string, body: SiteMappingsBody): Promise<SiteMappingView[]> {
    await this.row(id);
    const mappings = body.mappings.map((m) => ({ site_id: m.site_id.trim(), folder_id: m.folder_id.toLowerCase() }));
    const seen = new Set<string>();
    mappings.forEach((m, i) => {
      if (!m.site_id) throw badRequest("validation_failed", `mappings[${i}].site_id must not be blank.`);
      if (seen.has(m.site_id)) throw badRequest("validation_failed", `mappings[${i}].site_id names a site already mapped in this body.`);
      seen.add(m.site_id);
    });
    const known = await this.repo.knownSites(
      id,
      mappings.map((m) => m.site_id),
    );
    mappings.forEach((m, i) => {
      if (!known.has(m.site_id)) throw badRequest("unknown_reference", `mappings[${i}].site_id names no site of this server's last sync.`);
    });
    await this.ctx.store.tx(async (db) => {
      const folders = await this.repo.existingFolders(
        mappings.map((m) => m.folder_id),
        db,
      );
      mappings.forEach((m, i) => {
        if (!folders.has(m.folder_id)) throw badRequest("unknown_reference", `mappings[${i}].folder_id names no folder.`);
      });
      await this.repo.replaceMappings(id, mappings, db);
    });
    return this.repo.mappings(id);
  }

  /** Checks shared by create and update; returns the normalised name, base_url and interval. */
  private common(body: { name: string; base_url: string; sync_interval_secs?: number }): Pick<ServerWrite, "name" | "base_url" | "sync_interval_secs"> {
    const name = body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must not be blank.");
    const baseUrl = body.base_url.trim();
    const problem = baseUrlProblem(baseUrl);
    if (problem) throw badRequest("invalid_base_url", problem);
    return { name, base_url: baseUrl, sync_interval_secs: body.sync_interval_secs ?? 3600 };
  }
}
