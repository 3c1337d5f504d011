import { Inject, Injectable } from "@tsed/di";
import { EventAlerts } from "../../alerts/contract.js";
import { NETCLOUD_CONTEXT, type NetcloudContext } from "../context.js";
import type { NetcloudFailure } from "../lib/client.js";
import type { StatusChange } from "../repositories/OrgRepository.js";

/** Check of the organization incident (subject netcloud_org): its key refused or the platform unreachable. */
export const ORG_CHECK_ID = "3b8d2f6e-1c4a-4e7b-9f05-6a2d8c1e7b43";
/** Check of a device's incident on its node: the platform reports it offline (critical) or alerting (warning). */
export const DEVICE_CHECK_ID = "7e1c5a93-8d2b-4f6e-a1c7-2b9e4d6f8a15";

const ORG_TITLES: Partial<Record<NetcloudFailure | "base_url_refused", string>> = {
  base_url_refused: "organization base URL no longer on the allow-list",
  key_refused: "API key refused by the netcloud platform",
  not_found: "organization no longer reachable with its API key",
  timeout: "netcloud platform did not answer in time",
  rate_limited: "netcloud platform kept rate-limiting the sync",
  tls: "netcloud platform TLS certificate not trusted",
  redirect_refused: "netcloud platform redirected to another host",
};

/** What reaches the alerts plugin: the organization's incident, and device status changes on the nodes they are. */
@Injectable()
export class OrgAlerts {
  @Inject(NETCLOUD_CONTEXT)
  private ctx: NetcloudContext;

  @Inject(EventAlerts)
  private alerts: EventAlerts;

  /** Raises (or keeps) the organization's incident: critical, state unreachable. */
  async raise(orgName: string, kind: NetcloudFailure | "base_url_refused"): Promise<void> {
    await this.alerts.fireSubject({
      subject_kind: "netcloud_org",
      subject_name: orgName,
      check_id: ORG_CHECK_ID,
      severity: "critical",
      state: "unreachable",
      title: ORG_TITLES[kind] ?? "netcloud platform unreachable",
      at_ms: Date.now(),
    });
  }

  /** Clears the organization's incident (a sync that worked, or the organization deleted). */
  async clear(orgName: string): Promise<void> {
    await this.alerts.clearSubject("netcloud_org", orgName, ORG_CHECK_ID);
  }

  /** Offline → critical, alerting → warning, anything else (online, dormant) clears. */
  async deviceStatuses(changes: readonly StatusChange[]): Promise<void> {
    const now = Date.now();
    for (const c of changes) {
      const label = c.name || c.serial;
      try {
        if (c.status === "offline") {
          await this.alerts.fire({
            node_id: c.node_id,
            check_id: DEVICE_CHECK_ID,
            severity: "critical",
            title: `${label} offline on the netcloud platform`,
            at_ms: now,
          });
        } else if (c.status === "alerting") {
          await this.alerts.fire({
            node_id: c.node_id,
            check_id: DEVICE_CHECK_ID,
            severity: "warning",
            title: `${label} alerting on the netcloud platform`,
            at_ms: now,
          });
        } else {
          await this.alerts.clear(c.node_id, DEVICE_CHECK_ID);
        }
      } catch (err) {
        this.ctx.log.warn("netcloud: device status not passed to alerts", { serial: c.serial, error: (err as Error).message });
      }
    }
  }
}
