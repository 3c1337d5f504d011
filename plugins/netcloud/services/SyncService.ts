import { Inject, Injectable } from "@tsed/di";
import { isIpAddress } from "../../../core/index.js";
import { DiscoveryImport, InventoryLimits } from "../../inventory/contract.js";
import { NETCLOUD_CONTEXT, type NetcloudContext } from "../context.js";
import { checkBaseUrl, NetcloudError, type CloudDevice } from "../lib/client.js";
import { OrgRepository, type DeviceSeen, type OrgRow } from "../repositories/OrgRepository.js";
import { OrgAlerts } from "./OrgAlerts.js";
import { UpstreamService } from "./UpstreamService.js";

/** What one sync did (the job's log line, the tests and the benchmark). */
export interface SyncResult {
  status: "ok" | "skipped" | SyncFailure;
  networks: number;
  devices: number;
  status_changes: number;
  imported: number;
  linked_existing: number;
  requests: number;
  /** Time reading the platform, saving what it said (and passing status changes on), importing. */
  fetch_ms: number;
  save_ms: number;
  import_ms: number;
  ms: number;
}

/** Why a sync failed: the client's failure kind, or base_url_refused (the allow-list changed since the organization was added). */
export type SyncFailure = NetcloudError["kind"] | "base_url_refused";

const EMPTY = { networks: 0, devices: 0, status_changes: 0, imported: 0, linked_existing: 0, requests: 0, fetch_ms: 0, save_ms: 0, import_ms: 0 };

/**
 * The sync of one organization: networks (new ones watched), devices and their statuses, the status changes of
 * devices that are nodes here (to the alerts plugin), then, with import_devices on, the import rule through
 * inventory's discovery import. A refused key or an unreachable platform raises the organization's alert; a sync
 * that works clears it.
 */
@Injectable()
export class SyncService {
  @Inject(NETCLOUD_CONTEXT)
  private ctx: NetcloudContext;

  @Inject(OrgRepository)
  private repo: OrgRepository;

  @Inject(UpstreamService)
  private upstream: UpstreamService;

  @Inject(OrgAlerts)
  private alerts: OrgAlerts;

  @Inject(DiscoveryImport)
  private discovery: DiscoveryImport;

  @Inject(InventoryLimits)
  private limits: InventoryLimits;

  /** Queues a sync job for every organization that is due (run by the `dispatch` job on one replica at a time). */
  async dispatch(): Promise<number> {
    const due = await this.repo.claimDue(this.ctx.config.syncIntervalSecs);
    for (const id of due) await this.ctx.jobs.now("sync-org", { id });
    return due.length;
  }

  /** Syncs one organization now; "skipped" when it is gone or another sync of it is running. */
  async sync(id: string): Promise<SyncResult> {
    const started = Date.now();
    const org = await this.repo.row(id);
    // A sync stuck longer than a few intervals (a crashed replica) gives its claim up.
    if (!org || !(await this.repo.startSync(id, Math.max(600, this.ctx.config.syncIntervalSecs * 3)))) {
      return { status: "skipped", ...EMPTY, ms: Date.now() - started };
    }
    let result: SyncResult;
    try {
      result = await this.run(org, started);
    } catch (err) {
      await this.repo.endSync(id, "failed", this.ctx.config.syncIntervalSecs).catch(() => undefined);
      throw err;
    }
    await this.repo.endSync(id, result.status, this.ctx.config.syncIntervalSecs);
    this.ctx.log.info("netcloud: organization synced", { org: org.id, ...result });
    return result;
  }

  /** The bus said a node was deleted: a device that was it is never imported again. */
  async nodeDeleted(nodeId: string): Promise<void> {
    await this.repo.nodeDeleted(nodeId);
  }

  private async run(org: OrgRow, started: number): Promise<SyncResult> {
    const baseUrl = checkBaseUrl(org.base_url, this.ctx.config.allowedHosts);
    const apiKey = org.api_key !== null ? this.ctx.secrets.unseal(org.api_key) : await this.upstream.credentialKey(org.credential_id ?? "");
    const fail = async (kind: SyncFailure, detail: string | null, requests = 0): Promise<SyncResult> => {
      this.ctx.log.warn("netcloud: organization sync failed", { org: org.id, kind, detail });
      await this.alerts.raise(org.name, kind);
      return { status: kind, ...EMPTY, requests, ms: Date.now() - started };
    };
    // The allow-list may have changed since the organization was added; a deleted credential is a refused key.
    if (typeof baseUrl === "string") return fail("base_url_refused", baseUrl);
    if (apiKey === null) return fail("key_refused", "credential gone");

    const client = this.upstream.client(baseUrl, apiKey);
    let networks, devices: CloudDevice[], statuses;
    try {
      // Three lists side by side (three requests in flight at most: within the platform's per-organization rate).
      [networks, devices, statuses] = await Promise.all([client.networks(org.org_id), client.devices(org.org_id), client.statuses(org.org_id)]);
    } catch (err) {
      if (!(err instanceof NetcloudError)) throw err;
      return fail(err.kind, err.detail, client.requests);
    }

    const fetched = Date.now();
    await this.repo.saveNetworks(org.id, networks);
    const statusOf = new Map(statuses.map((s) => [s.serial, s]));
    const seen: DeviceSeen[] = devices.map((d) => {
      const s = statusOf.get(d.serial);
      const ip = d.lanIp ?? s?.lanIp ?? null;
      return {
        serial: d.serial,
        name: d.name,
        network_id: d.networkId,
        model: d.model,
        address: ip !== null && isIpAddress(ip) ? ip : null,
        status: s?.status ?? null,
      };
    });
    const changes = await this.repo.saveDevices(org.id, seen);
    await this.repo.forgetDeletedNodes(org.id);
    await this.alerts.deviceStatuses(changes);
    await this.alerts.clear(org.name);

    const saved = Date.now();
    let imported = 0;
    let linkedExisting = 0;
    if (org.import_devices) ({ imported, linkedExisting } = await this.importDevices(org));
    return {
      status: "ok",
      networks: networks.length,
      devices: devices.length,
      status_changes: changes.length,
      imported,
      linked_existing: linkedExisting,
      requests: client.requests,
      fetch_ms: fetched - started,
      save_ms: saved - fetched,
      import_ms: Date.now() - saved,
      ms: Date.now() - started,
    };
  }

  /** The import rule, capped by max_devices, through inventory's discovery import in sweep-sized batches. */
  private async importDevices(org: OrgRow): Promise<{ imported: number; linkedExisting: number }> {
    const room = org.max_devices === null ? null : Math.max(0, org.max_devices - (await this.repo.nodesNow(org.id)));
    if (room === 0) return { imported: 0, linkedExisting: 0 };
    const candidates = await this.repo.candidates(org.id, room);
    let imported = 0;
    let linkedExisting = 0;
    const batch = Math.max(1, this.limits.sweepSize);
    for (let i = 0; i < candidates.length; i += batch) {
      const rows = candidates.slice(i, i + batch);
      // A sync job sees the whole inventory: scope "All".
      const result = await this.discovery.import(
        {
          nodes: rows.map((d) => ({ name: (d.name ?? "").trim() || d.serial, address: d.address, model: d.model ?? null, vendor: null })),
          file_by_prefix: org.file_by_prefix,
        },
        "All",
      );
      imported += result.created;
      linkedExisting += result.skipped_existing;
      const linked = await this.repo.linkImported(
        org.id,
        rows.map((d) => d.serial),
      );
      // A new node of a device that is not online gets its incident now (online ones have none to clear).
      await this.alerts.deviceStatuses(linked.filter((l) => l.status === "offline" || l.status === "alerting"));
    }
    return { imported, linkedExisting };
  }
}
