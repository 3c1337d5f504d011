import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isUuid, notFound, page } from "../../../core/index.js";
import { NETCLOUD_CONTEXT, type NetcloudContext } from "../context.js";
import type { DiscoveredOrg, DiscoverBody, ImportSettingsBody, NetworkView, OrgAddBody, OrgAdded, OrgView } from "../models/OrgModels.js";
import { OrgRepository } from "../repositories/OrgRepository.js";
import { OrgAlerts } from "./OrgAlerts.js";
import { UpstreamService } from "./UpstreamService.js";

const noOrg = () => notFound("No such netcloud organization.");
const noNetwork = () => notFound("No such network in this organization.");

export const MAX_DEVICES_LIMIT = 50000;

/** Organizations: discovery (persists nothing), add (a second add is skipped), list, get, delete, import settings, networks. */
@Injectable()
export class OrgService {
  @Inject(NETCLOUD_CONTEXT)
  private ctx: NetcloudContext;

  @Inject(OrgRepository)
  private repo: OrgRepository;

  @Inject(UpstreamService)
  private upstream: UpstreamService;

  @Inject(OrgAlerts)
  private alerts: OrgAlerts;

  /** The organizations a key reaches, each with already_added (monitored here under any key). Writes nothing. */
  async discover(body: DiscoverBody): Promise<DiscoveredOrg[]> {
    const { orgs } = await this.reach(body);
    const known = await this.repo.known(orgs.map((o) => o.id));
    return orgs.map((o) => ({ id: o.id, name: o.name, already_added: known.has(o.id) }));
  }

  /**
   * Adds an organization the key reaches (400 unknown_organization otherwise). An organization monitored here already
   * is skipped: its row is answered and nothing changes (its key included). The first sync is queued at once.
   */
  async add(body: OrgAddBody): Promise<OrgAdded> {
    const { orgs, key, baseUrl } = await this.reach(body);
    const org = orgs.find((o) => o.id === body.org_id);
    if (!org)
      throw badRequest("unknown_organization", "The key does not reach an organization with this org_id (POST /netcloud/orgs/discover lists those it does).");
    const added = await this.repo.insert(
      {
        org_id: org.id,
        name: org.name,
        base_url: baseUrl.href.replace(/\/+$/, ""),
        api_key: key.credentialId === null ? this.ctx.secrets.seal(key.apiKey) : null,
        credential_id: key.credentialId,
      },
      this.ctx.config.maxOrganizations,
      this.ctx.config.syncIntervalSecs,
    );
    if (!added) {
      throw badRequest(
        "too_many_organizations",
        `This deployment monitors at most ${this.ctx.config.maxOrganizations} organizations (pluginConfig.netcloud.maxOrganizations).`,
      );
    }
    if (!added.skipped) {
      await this.ctx.jobs
        .now("sync-org", { id: added.id })
        .catch((err: Error) => this.ctx.log.warn("netcloud: first sync not queued", { org: added.id, error: err.message }));
    }
    return added;
  }

  async list(limit: number, cursor?: string): Promise<{ rows: OrgView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, ([, id]) => isUuid(id)) as [string, string]) : null;
    const { rows, next } = page(await this.repo.list(limit, after), limit, (r) => [r.sort_name, r.id]);
    return { rows: rows.map(({ sort_name: _, ...v }) => v), next };
  }

  async get(id: string): Promise<OrgView> {
    const v = isUuid(id) ? await this.repo.view(id) : null;
    if (!v) throw noOrg();
    return v;
  }

  /** Deletes the organization, its networks and its devices' memory; the nodes it imported stay. Its open alert is cleared. */
  async remove(id: string): Promise<void> {
    const gone = isUuid(id) ? await this.repo.remove(id) : null;
    if (!gone) throw noOrg();
    await this.alerts.clear(gone.name);
  }

  /** Queues a sync of the organization now (the interval's schedule goes on as before). */
  async syncNow(id: string): Promise<void> {
    await this.get(id);
    await this.ctx.jobs.now("sync-org", { id });
  }

  async importSettings(id: string, body: ImportSettingsBody): Promise<OrgView> {
    const max = body.max_devices;
    if (max !== undefined && max !== null && (!Number.isInteger(max) || max < 1 || max > MAX_DEVICES_LIMIT)) {
      throw badRequest("invalid_max_devices", `max_devices must be an integer from 1 to ${MAX_DEVICES_LIMIT}, or null for no cap.`);
    }
    if (!isUuid(id) || !(await this.repo.updateSettings(id, { import_devices: body.import_devices, file_by_prefix: body.file_by_prefix, max_devices: max }))) {
      throw noOrg();
    }
    return this.get(id);
  }

  async networks(id: string, limit: number, cursor?: string): Promise<{ rows: NetworkView[]; next: string | null }> {
    await this.get(id);
    const after = cursor ? (decodeCursor(cursor, 2) as [string, string]) : null;
    const { rows, next } = page(await this.repo.networks(id, limit, after), limit, (r) => [r.sort_name, r.network_id]);
    return { rows: rows.map(({ sort_name: _, ...v }) => v), next };
  }

  async setWatched(id: string, networkId: string, watched: boolean): Promise<NetworkView> {
    await this.get(id);
    const v = await this.repo.setWatched(id, networkId, watched);
    if (!v) throw noNetwork();
    return v;
  }

  /** The organizations a body's key reaches at its base URL (400s for the body, 502-class for the platform). */
  private async reach(body: DiscoverBody) {
    const key = await this.upstream.namedKey(body);
    const baseUrl = this.upstream.baseUrl(body.base_url);
    try {
      const orgs = await this.upstream.client(baseUrl, key.apiKey).organizations();
      return { orgs, key, baseUrl };
    } catch (err) {
      throw this.upstream.failure(err, "organizations", baseUrl);
    }
  }
}
