import { Controller, Inject } from "@tsed/di";
import { Description, Post, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, ScopeUnsupported } from "../../../core/index.js";
import { FORWARDING_CONTEXT, type ForwardingContext } from "../context.js";
import { PollerSyncBody, PollerSyncResult } from "../models/DestinationModels.js";
import { DestinationService } from "../services/DestinationService.js";
import { PoolStatus } from "../services/PoolStatus.js";

/**
 * Forwarding on remote pollers: a poller running the forwarding plugin asks here, every reload period, for its pool's
 * destinations, and reports its counters for them. Secrets travel sealed: a poller opens them only with the core's
 * secret key (NMS_SECRET_KEY set alike on both).
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
  async sync(@Body() body: PollerSyncBody): Promise<PollerSyncResult> {
    if (body.counters) this.pool.record(body.poller_id, body.counters);
    return { destinations: await this.destinations.poolDestinations(body.pool), reload_ms: this.ctx.config.reloadMs };
  }
}
