import { definePlugin, sqlMigrationsFrom, type JobDeclaration, type PluginContext } from "../../core/index.js";
import { pollingBundleTables } from "./bundle.js";
import { HostCounters } from "./contract.js";
import { pollingConfigSchema, type PollingContext } from "./context.js";
import { CollectionTemplateController } from "./controllers/CollectionTemplateController.js";
import { ConsoleController } from "./controllers/ConsoleController.js";
import { DeviceMetricsController } from "./controllers/DeviceMetricsController.js";
import { MetricsController } from "./controllers/MetricsController.js";
import { PollerController } from "./controllers/PollerController.js";
import { SweepController } from "./controllers/SweepController.js";
import { SystemController } from "./controllers/SystemController.js";
import { pollerCommand } from "./poller/commands.js";
import { CollectionTemplateRepository } from "./repositories/CollectionTemplateRepository.js";
import { ConsoleRepository } from "./repositories/ConsoleRepository.js";
import { DeviceMetricsRepository } from "./repositories/DeviceMetricsRepository.js";
import { GapRepository } from "./repositories/GapRepository.js";
import { MetricsRepository } from "./repositories/MetricsRepository.js";
import { PollerRepository } from "./repositories/PollerRepository.js";
import { SampleRepository } from "./repositories/SampleRepository.js";
import { SweepRepository } from "./repositories/SweepRepository.js";
import { AssignmentService } from "./services/AssignmentService.js";
import { CollectionTemplateService } from "./services/CollectionTemplateService.js";
import { ConsoleService } from "./services/ConsoleService.js";
import { DeviceMetricsService } from "./services/DeviceMetricsService.js";
import { EmbeddedPoller } from "./services/EmbeddedPoller.js";
import { HostCounterRegistry } from "./services/HostCounterRegistry.js";
import { HostTelemetryService } from "./services/HostTelemetryService.js";
import { MetricsService } from "./services/MetricsService.js";
import { PollerRegistry } from "./services/PollerRegistry.js";
import { SampleSink } from "./services/SampleSink.js";
import { SWEEP_CHANNEL, SweepService } from "./services/SweepService.js";
import { SnmpPollerService } from "./snmp/SnmpPollerService.js";
import { POLLING_VERSION } from "./version.js";
import type { PassiveReceiver } from "./contract.js";

export * from "./contract.js";
export type { PollingConfig } from "./context.js";

const JOBS: JobDeclaration[] = [
  {
    // polling.poller-watch: pollers silent past heartbeatAllowanceSecs go offline (polling.poller.offline).
    name: "poller-watch",
    every: "5 seconds",
    handler: async (_job, ctx) => {
      await ctx.get(PollerRegistry).markSilentOffline();
    },
  },
  {
    // polling.retention: day partitions of polling.samples made ahead, and those older than retentionDays dropped.
    name: "retention",
    every: "1 hour",
    handler: async (_job, ctx) => {
      await ctx.get(SampleSink).maintainPartitions();
    },
  },
  {
    // polling.sweep: runs one sweep ({id}); two at once per replica; long lock (a sweep of 4096 silent addresses takes minutes).
    name: "sweep",
    concurrency: 2,
    lockLifetimeMs: 30 * 60_000,
    handler: async (job, ctx) => {
      const id = (job.data as { id?: unknown } | null)?.id;
      if (typeof id === "string") await ctx.get(SweepService).run(id);
    },
  },
];

const unsubscribers = new WeakMap<PluginContext, (() => void)[]>();

/** The plugin's start: partitions ahead, node deletions followed, the embedded poller when configured. */
async function start(ctx: PollingContext): Promise<void> {
  if (ctx.mode !== "full") return;
  await ctx.get(SampleSink).maintainPartitions();
  const samples = ctx.get(SampleRepository);
  unsubscribers.set(ctx, [
    ctx.bus.on("inventory.node.deleted", (e) =>
      samples.forgetNode(e.id).catch((err: Error) => ctx.log.warn("latest values of a deleted node not removed", { node_id: e.id, error: err.message })),
    ),
  ]);
  if (ctx.config.embeddedPoller) await ctx.get(EmbeddedPoller).start();
}

async function stop(ctx: PollingContext): Promise<void> {
  for (const off of unsubscribers.get(ctx) ?? []) off();
  unsubscribers.delete(ctx);
  if (ctx.mode !== "full") return;
  await ctx.get(EmbeddedPoller).stop();
  await ctx.get(SampleSink).flush();
}

/** Refuses a contribution to `polling.passive` that is not a PassiveReceiver. */
function validatePassiveReceiver(item: unknown): void {
  const r = item as Partial<PassiveReceiver> | null;
  if (!r || typeof r.name !== "string" || typeof r.start !== "function") throw new Error("a passive receiver is { name: string, start(env) }");
}

export const pollingPlugin = definePlugin({
  id: "polling",
  version: POLLING_VERSION,
  kernel: "^0.1.0",
  description: "Pollers in pools: SNMP, liveness, URL and DNS checks; samples, interface top-N, host telemetry, monitoring gaps, discovery sweeps",
  dependsOn: { inventory: "^0.1.0" },
  controllers: [
    MetricsController,
    DeviceMetricsController,
    SystemController,
    PollerController,
    SweepController,
    CollectionTemplateController,
    ConsoleController,
  ],
  providers: [
    AssignmentService,
    SampleSink,
    PollerRegistry,
    EmbeddedPoller,
    HostTelemetryService,
    HostCounterRegistry,
    PollerRepository,
    SampleRepository,
    GapRepository,
    SnmpPollerService,
    CollectionTemplateService,
    CollectionTemplateRepository,
    MetricsService,
    MetricsRepository,
    SweepService,
    SweepRepository,
    DeviceMetricsService,
    DeviceMetricsRepository,
    // operator console: SNMP probe, agent health, interface search
    ConsoleService,
    ConsoleRepository,
  ],
  // Other plugins register what their receivers lose on the core with the host telemetry.
  exports: [{ provide: HostCounters, use: HostCounterRegistry }],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  // polling.poller-watch (offline pollers, gaps), polling.retention (day partitions), polling.sweep (discovery sweeps)
  jobs: JOBS,
  channels: [SWEEP_CHANNEL],
  // nms poller --pool NAME --core URL (a remote poller), nms poller deploy --pool NAME (a container)
  commands: { poller: pollerCommand },
  extensionPoints: [
    { name: "passive", validate: validatePassiveReceiver, description: "receivers remote pollers run for their pool (PassiveReceiver in the contract)" },
  ],
  bundle: { tables: pollingBundleTables },
  config: pollingConfigSchema,
  // The embedded poller of the `default` pool, and the sample sink.
  start,
  stop,
});
