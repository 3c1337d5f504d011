import { Controller, Inject } from "@tsed/di";
import { CollectionOf, Enum, Get, Integer, Minimum, Property, Required, Returns, Summary } from "@tsed/schema";
import { Permission, WithoutStore } from "../auth/decorators.js";
import { HealthService } from "./HealthService.js";

export class ListenerCountersView {
  @Required() @Integer() @Minimum(0) received: number;
  @Required() @Integer() @Minimum(0) dropped: number;
  @Required() @Integer() @Minimum(0) malformed: number;
}

export class ListenerView {
  @Required() plugin: string;
  @Required() name: string;
  @Required() stream: string;
  @Required() @Enum("udp", "tcp", "tls") protocol: string;
  @Required() address: string;
  @Required() @Integer() port: number;
  @Required() @Property(ListenerCountersView) counters: ListenerCountersView;
}

export class ListenerList {
  @Required() @CollectionOf(ListenerView) listeners: ListenerView[];
  /** Declared listeners that are not bound (off in the configuration, or the bind failed). */
  @Required() @CollectionOf(String) unbound: string[];
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
