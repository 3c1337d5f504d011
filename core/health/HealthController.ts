import { Controller, Inject } from "@tsed/di";
import { Context } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { CollectionOf, Description, Enum, Get, Nullable, Property, Required, Returns, Summary } from "@tsed/schema";
import { Public, WithoutStore } from "../auth/decorators.js";
import { HealthService } from "./HealthService.js";

@Description("A plugin loaded by the kernel, as the health report lists it.")
export class HealthPlugin {
  @Description("Plugin id") @Required() id: string;
  @Description("Plugin version") @Required() version: string;
}

@Description("A passive listener a plugin declared, as the health report lists it.")
export class HealthListener {
  @Description("Id of the plugin that declared the listener") @Required() plugin: string;
  @Description("Listener name within its plugin") @Required() name: string;
  @Description("Transport protocol") @Required() @Enum("udp", "tcp", "tls") protocol: string;
  @Description("Whether the listener is bound now") @Required() bound: boolean;
  @Description("Bound port; null while unbound") @Required() @Nullable(Number) port: number | null;
}

@Description("The durable store of the deployment and its status, as the health report shows it.")
export class HealthStore {
  @Description("external: a PostgreSQL server; embedded: a PostgreSQL the service runs itself; none: skeleton mode, no durable store")
  @Required()
  @Enum("external", "embedded", "none")
  kind: string;
  @Description("ok: it answers; down: it does not; absent: no store (skeleton mode)") @Required() @Enum("ok", "down", "absent") status: string;
}

@Description("The kernel's health report: mode, store, plugins and listeners (GET /health).")
export class HealthReport {
  @Required()
  @Enum("ok", "degraded", "starting", "stopping")
  @Description("ok: ready and the store answers; degraded: the store is down; starting or stopping: the API answers 503 service_starting / service_stopping")
  status: string;
  @Required() @Description("Whether this replica takes API requests: every boot phase done, no stop begun, the store answering") ready: boolean;
  @Description("full: all operations; skeleton: no durable stores, writes answer 503") @Required() @Enum("full", "skeleton") mode: string;
  @Description("Whether anonymous visitors may use some reads") @Required() public_dashboard: boolean;
  @Description("Version of the service") @Required() version: string;
  @Required() @Property(HealthStore) store: HealthStore;
  @Required() @CollectionOf(HealthPlugin) plugins: HealthPlugin[];
  @Required() @CollectionOf(HealthListener) listeners: HealthListener[];
  @Description("Seconds since the kernel began to boot") @Required() uptime_secs: number;
}

@Description("Liveness answer: the process is up (GET /health/live).")
export class HealthLiveness {
  @Description("Always alive: the process answers") @Required() @Enum("alive") status: string;
  @Description("Where the kernel is in its life") @Required() @Enum("starting", "ready", "stopping") phase: string;
  @Description("Seconds since the kernel began to boot") @Required() uptime_secs: number;
}

@Description("Readiness answer: whether the kernel serves requests (GET /health/ready).")
export class HealthReadiness {
  @Description("Whether this replica takes API requests") @Required() ready: boolean;
  @Description("ok: ready and the store answers; degraded: the store is down; starting or stopping: not taking API requests")
  @Required()
  @Enum("ok", "degraded", "starting", "stopping")
  status: string;
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
