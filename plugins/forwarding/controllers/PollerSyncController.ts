import { Controller, Inject } from "@tsed/di";
import { Description, Post, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, forbidden, Permission, requireCaller, ScopeUnsupported } from "../../../core/index.js";
import { FORWARDING_CONTEXT, type ForwardingContext } from "../context.js";
import { PollerSyncBody, PollerSyncResult } from "../models/DestinationModels.js";
import { DestinationService } from "../services/DestinationService.js";
import { PoolStatus } from "../services/PoolStatus.js";

/**
 * Forwarding on remote pollers: a poller running the forwarding plugin asks here, every reload period, for the
 * destinations it tees (its pool's and those of every pool), and reports its counters for them. Secrets travel
 * sealed: a poller opens them only with the core's secret key (NMS_SECRET_KEY set alike on both).
 *
 * Who may ask: what a remote poller authenticates with, an API token of an unrestricted admin (ManageSystem, scope
 * All; the polling plugin's /pollers routes take the same). A session is refused: a person has no use for sealed
 * secrets in bulk. The core's auth names no poller (a token is not bound to a poller id or a pool), so the pool is
 * still the one the body names.
 */
@Controller("/forwarding/pollers")
export class PollerSyncController {
  @Inject(DestinationService)
  private destinations: DestinationService;

  @Inject(PoolStatus)
  private pool: PoolStatus;

  @Inject(FORWARDING_CONTEXT)
  private ctx: ForwardingContext;

  @Post("/sync")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("A remote poller's sync (its token): its counters in, its pool's destinations out (secrets sealed)")
  @Description("Called by `nms poller` when the forwarding plugin is loaded there; not meant for people.")
  @Returns(200, PollerSyncResult)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(403, ErrorEnvelope).Description("permission_denied, scope_unsupported, or poller_token_required: a session (a person), not an API token"))
  async sync(@Body() body: PollerSyncBody): Promise<PollerSyncResult> {
    if (requireCaller().kind !== "token") {
      throw forbidden("poller_token_required", "Only a remote poller, with its API token, syncs forwarding destinations; a session cannot.");
    }
    if (body.counters) this.pool.record(body.poller_id, body.counters);
    return { destinations: await this.destinations.poolDestinations(body.pool), reload_ms: this.ctx.config.reloadMs };
  }
}
