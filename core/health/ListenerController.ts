import { Controller, Inject } from "@tsed/di";
import { CollectionOf, Enum, Get, Integer, Minimum, Property, Required, Returns, Summary, Description } from "@tsed/schema";
import { Permission, WithoutStore } from "../auth/decorators.js";
import { HealthService } from "./HealthService.js";

@Description("Counters of a passive listener since it bound.")
export class ListenerCountersView {
  @Description("Messages read off the wire, malformed ones included") @Required() @Integer() @Minimum(0) received: number;
  @Description("Messages refused or lost: over a limit, a full queue, an unknown community") @Required() @Integer() @Minimum(0) dropped: number;
  @Description("Messages that did not parse") @Required() @Integer() @Minimum(0) malformed: number;
}

@Description("A bound passive listener with its counters, as GET /listeners lists it.")
export class ListenerView {
  @Description("Id of the plugin that declared the listener") @Required() plugin: string;
  @Description("Listener name within its plugin") @Required() name: string;
  @Description("The stream the listener feeds, for example syslog, trap or flow") @Required() stream: string;
  @Description("Transport protocol") @Required() @Enum("udp", "tcp", "tls") protocol: string;
  @Description("The address it is bound to") @Required() address: string;
  @Description("Bound port") @Required() @Integer() port: number;
  @Required() @Property(ListenerCountersView) counters: ListenerCountersView;
}

@Description("The bound passive listeners of this process with their counters, and the declared ones that are not bound (GET /listeners).")
export class ListenerList {
  @Required() @CollectionOf(ListenerView) listeners: ListenerView[];
  /** Declared listeners that are not bound (off in the configuration, or the bind failed). */
  @Description("Declared listeners that are not bound (off in the configuration, or the bind failed), as plugin.name")
  @Required()
  @CollectionOf(String)
  unbound: string[];
}

/** The passive listeners every plugin has bound on this instance (syslog, traps, flows …), with live counters. */
@Controller("/listeners")
export class ListenerController {
  @Inject(HealthService)
  private health: HealthService;

  @Get("/")
  @Permission("read")
  @WithoutStore()
  @Summary("Bound listeners of every plugin on this instance: plugin, stream, protocol, address, port, counters (received, dropped, malformed)")
  @Returns(200, ListenerList)
  list(): ListenerList {
    const all = this.health.listeners();
    return {
      listeners: all
        .filter((l) => l.bound)
        .map((l) => ({
          plugin: l.plugin,
          name: l.name,
          stream: l.stream,
          protocol: l.protocol,
          address: l.address ?? "",
          port: l.port ?? 0,
          counters: l.counters,
        })),
      unbound: all.filter((l) => !l.bound).map((l) => `${l.plugin}.${l.name}`),
    };
  }
}
