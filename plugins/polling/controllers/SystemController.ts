import { Controller, Inject } from "@tsed/di";
import { Description, Get, Returns, Summary } from "@tsed/schema";
import { Permission, WithoutStore } from "../../../core/index.js";
import { HostList, MonitoringGap } from "../models/SystemModels.js";
import { HostTelemetryService } from "../services/HostTelemetryService.js";
import { GAP_LIST_CAP, PollerRegistry } from "../services/PollerRegistry.js";

/** Host telemetry of the core and its pollers, and the monitoring gaps pollers left. */
@Controller("/")
export class SystemController {
  @Inject(HostTelemetryService)
  private telemetry: HostTelemetryService;

  @Inject(PollerRegistry)
  private registry: PollerRegistry;

  @Get("/system/hosts")
  @Permission("read")
  @WithoutStore()
  @Summary("Host telemetry of the core and of every poller reporting")
  @Description("The core first (measured now), then each remote poller that reported telemetry, with its online flag. Skeleton mode: the core alone.")
  @Returns(200, HostList)
  async hosts(): Promise<HostList> {
    return { hosts: await this.telemetry.hosts() };
  }

  @Get("/monitoring-gaps")
  @Permission("read")
  @Summary("Monitoring gaps, newest first")
  @Description(
    `Times a poller was silent past its heartbeat allowance, recorded when it came back; newest first, at most ${GAP_LIST_CAP}. ` +
      "A read error answers an empty list. 503 without a durable store (skeleton mode).",
  )
  @(Returns(200, Array).Of(MonitoringGap))
  gaps(): Promise<MonitoringGap[]> {
    return this.registry.recentGaps();
  }
}
