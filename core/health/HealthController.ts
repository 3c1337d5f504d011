import { Controller, Inject } from "@tsed/di";
import { Context } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { CollectionOf, Description, Enum, Get, Nullable, Property, Required, Returns, Summary } from "@tsed/schema";
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
  @Required()
  @Enum("ok", "degraded", "starting", "stopping")
  @Description("ok: ready and the store answers; degraded: the store is down; starting or stopping: the API answers 503 service_starting / service_stopping")
  status: string;
  @Required() @Description("Whether this replica takes API requests: every boot phase done, no stop begun, the store answering") ready: boolean;
  @Required() @Enum("full", "skeleton") mode: string;
  @Required() public_dashboard: boolean;
  @Required() version: string;
  @Required() @Property(HealthStore) store: HealthStore;
  @Required() @CollectionOf(HealthPlugin) plugins: HealthPlugin[];
  @Required() @CollectionOf(HealthListener) listeners: HealthListener[];
  @Required() uptime_secs: number;
}

export class HealthLiveness {
  @Required() @Enum("alive") status: string;
  @Required() @Enum("starting", "ready", "stopping") phase: string;
  @Required() uptime_secs: number;
}

export class HealthReadiness {
  @Required() ready: boolean;
  @Required() @Enum("ok", "degraded", "starting", "stopping") status: string;
}

@Controller("/health")
export class HealthController {
  @Inject(HealthService)
  private health: HealthService;

  @Get("/")
  @Public()
  @WithoutStore()
  @Summary("Readiness, store status, plugins and listeners (no auth)")
  @Returns(200, HealthReport)
  @(Returns(503, HealthReport).Description("Not ready: starting, stopping, or the store is down"))
  async get(@Context() ctx: PlatformContext): Promise<HealthReport> {
    const report = await this.health.report();
    if (!report.ready) ctx.response.status(503);
    return report;
  }

  @Get("/live")
  @Public()
  @WithoutStore()
  @Summary("Liveness (no auth): 200 while the process serves HTTP, starting and stopping included; for a supervisor's restart probe")
  @Returns(200, HealthLiveness)
  async live(): Promise<HealthLiveness> {
    return { status: "alive", phase: this.health.phase(), uptime_secs: this.health.uptimeSecs() };
  }

  @Get("/ready")
  @Public()
  @WithoutStore()
  @Summary("Readiness (no auth): 200 when this replica takes API requests, else 503; for a balancer's health check")
  @Returns(200, HealthReadiness)
  @(Returns(503, HealthReadiness).Description("Starting, stopping, or the store is down"))
  async ready(@Context() ctx: PlatformContext): Promise<HealthReadiness> {
    const { ready, status } = await this.health.report();
    if (!ready) ctx.response.status(503);
    return { ready, status };
  }
}
