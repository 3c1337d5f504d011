import { Controller, Inject } from "@tsed/di";
import { Description, Get, Returns, Summary } from "@tsed/schema";
import { Permission, ScopeUnsupported } from "../../../core/index.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import { PollerTrapUsers } from "../models/EventModels.js";
import { ListenerService } from "../services/ListenerService.js";

/**
 * The v3 trap users of remote pollers: a poller's trap listener takes the users of the core's traps.v3Credentials,
 * asked here at start and every traps.v3RefreshMs. The keys travel sealed, as the forwarding plugin's destination
 * secrets do: a poller opens them only with the core's secret key (NMS_SECRET_KEY set alike on both).
 */
@Controller("/events/pollers")
export class PollerTrapUserController {
  @Inject(ListenerService)
  private listeners: ListenerService;

  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  @Get("/trap-users")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("The SNMPv3 users a remote poller's trap listener accepts (the poller's token), keys sealed")
  @Description("Called by `nms poller` when the events plugin is loaded there; not meant for people.")
  @Returns(200, PollerTrapUsers)
  async trapUsers(): Promise<PollerTrapUsers> {
    return { users: await this.listeners.pollerTrapUsers(), refresh_ms: this.ctx.config.traps.v3RefreshMs };
  }
}
