import { definePlugin, sqlMigrationsFrom } from "../../core/index.js";
import { pollingBundleTables } from "./bundle.js";
import { HostCounters } from "./services/HostCounters.js";
import { pollingConfigSchema } from "./context.js";
import { CollectionTemplateController } from "./controllers/CollectionTemplateController.js";
import { DeviceMetricsController } from "./controllers/DeviceMetricsController.js";
import { MetricsController } from "./controllers/MetricsController.js";
import { PollerController } from "./controllers/PollerController.js";
import { SweepController } from "./controllers/SweepController.js";
import { SystemController } from "./controllers/SystemController.js";
import { runtimeCommands, runtimeJobs, runtimeProviders, startRuntime, stopRuntime } from "./poller/runtime.js";
import { CollectionTemplateRepository } from "./repositories/CollectionTemplateRepository.js";
import { DeviceMetricsRepository } from "./repositories/DeviceMetricsRepository.js";
import { MetricsRepository } from "./repositories/MetricsRepository.js";
import { SweepRepository } from "./repositories/SweepRepository.js";
import { CollectionTemplateService } from "./services/CollectionTemplateService.js";
import { DeviceMetricsService } from "./services/DeviceMetricsService.js";
import { MetricsService } from "./services/MetricsService.js";
import { SWEEP_CHANNEL, SWEEP_JOB, SweepService } from "./services/SweepService.js";
import { SnmpPollerService } from "./snmp/SnmpPollerService.js";
import type { PassiveReceiver } from "./contract.js";

export * from "./contract.js";
export type { PollingConfig } from "./context.js";

/** Refuses a contribution to `polling.passive` that is not a PassiveReceiver. */
function validatePassiveReceiver(item: unknown): void {
  const r = item as Partial<PassiveReceiver> | null;
  if (!r || typeof r.name !== "string" || typeof r.start !== "function") throw new Error("a passive receiver is { name: string, start(env) }");
}

export const pollingPlugin = definePlugin({
  id: "polling",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Pollers in pools: SNMP, liveness, URL and DNS checks; samples, interface top-N, host telemetry, monitoring gaps, discovery sweeps",
  dependsOn: { inventory: "^0.1.0" },
  controllers: [MetricsController, DeviceMetricsController, SystemController, PollerController, SweepController, CollectionTemplateController],
  providers: [
    ...runtimeProviders,
    SnmpPollerService,
    CollectionTemplateService,
    CollectionTemplateRepository,
    MetricsService,
    MetricsRepository,
    SweepService,
    SweepRepository,
    DeviceMetricsService,
    DeviceMetricsRepository,
  ],
  // Other plugins register what their receivers lose on the core with the host telemetry.
  exports: [HostCounters],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  // polling.poller-watch (offline pollers, gaps), polling.retention (day partitions), polling.sweep (discovery sweeps)
  jobs: [...runtimeJobs, SWEEP_JOB],
  channels: [SWEEP_CHANNEL],
  // nms poller --pool NAME --core URL (a remote poller), nms poller deploy --pool NAME (a container)
  commands: { ...runtimeCommands },
  extensionPoints: [
    { name: "passive", validate: validatePassiveReceiver, description: "receivers remote pollers run for their pool (PassiveReceiver in the contract)" },
  ],
  bundle: { tables: pollingBundleTables },
  config: pollingConfigSchema,
  // The embedded poller of the `default` pool, and the sample sink.
  start: (ctx) => startRuntime(ctx),
  stop: (ctx) => stopRuntime(ctx),
});
