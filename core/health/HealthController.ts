import { Controller, Inject } from "@tsed/di";
import { Context } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { CollectionOf, Enum, Get, Nullable, Property, Required, Returns, Summary } from "@tsed/schema";
import { Public, WithoutStore } from "../auth/decorators.js";
import { HealthService } from "./HealthService.js";

export class HealthPlugin {
  @Required() id: string;
  @Required() version: string;
}

export class HealthListener {
  @Required() plugin: string;
  @Required() name: string;
  @Required() @Enum("udp", "tcp", "tls") protocol: string;
  @Required() bound: boolean;
  @Required() @Nullable(Number) port: number | null;
}

export class HealthStore {
  @Required() @Enum("external", "embedded", "none") kind: string;
  @Required() @Enum("ok", "down", "absent") status: string;
}

export class HealthReport {
  @Required() @Enum("ok", "degraded") status: string;
  @Required() @Enum("full", "skeleton") mode: string;
  @Required() public_dashboard: boolean;
  @Required() version: string;
  @Required() @Property(HealthStore) store: HealthStore;
  @Required() @CollectionOf(HealthPlugin) plugins: HealthPlugin[];
  @Required() @CollectionOf(HealthListener) listeners: HealthListener[];
  @Required() uptime_secs: number;
}

@Controller("/health")
export class HealthController {
  @Inject(HealthService)
  private health: HealthService;

  @Get("/")
  @Public()
  @WithoutStore()
  @Summary("Liveness and store status (no auth)")
  @Returns(200, HealthReport)
  @(Returns(503, HealthReport).Description("The store is down"))
  async get(@Context() ctx: PlatformContext): Promise<HealthReport> {
    const report = await this.health.report();
    if (report.status !== "ok") ctx.response.status(503);
    return report;
  }
}
