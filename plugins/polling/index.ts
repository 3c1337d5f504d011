import { definePlugin, sqlMigrationsFrom } from "../../core/index.js";
import { CollectionTemplateController } from "./controllers/CollectionTemplateController.js";
import { MetricsController } from "./controllers/MetricsController.js";
import { PollerController } from "./controllers/PollerController.js";
import { SweepController } from "./controllers/SweepController.js";
import { SystemController } from "./controllers/SystemController.js";
import { runtimeCommands, runtimeJobs, runtimeProviders, startRuntime, stopRuntime } from "./poller/runtime.js";
import { CollectionTemplateRepository, collectionTemplateBundleTables } from "./repositories/CollectionTemplateRepository.js";
import { MetricsRepository } from "./repositories/MetricsRepository.js";
import { SweepRepository } from "./repositories/SweepRepository.js";
import { CollectionTemplateService } from "./services/CollectionTemplateService.js";
import { MetricsService } from "./services/MetricsService.js";
import { SWEEP_CHANNEL, SWEEP_JOB, SweepService } from "./services/SweepService.js";
import { SnmpPollerService } from "./snmp/SnmpPollerService.js";

export * from "./contract.js";

export interface PollingConfig {
  /** Run the embedded poller for the `default` pool inside the core. */
  embeddedPoller: boolean;
  /** Poll interval when a node's profile sets none. */
  defaultIntervalSecs: number;
  /** Nodes polled at once by one poller. */
  concurrency: number;
  snmpTimeoutMs: number;
  snmpRetries: number;
  /** A poller silent for longer than this is offline (a gap opens). */
  heartbeatAllowanceSecs: number;
  /** Days of sample history kept (whole day partitions are dropped). */
  retentionDays: number;
}

export const pollingPlugin = definePlugin<PollingConfig>({
  id: "polling",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Pollers in pools: SNMP, liveness, URL and DNS checks; samples, interface top-N, host telemetry, monitoring gaps, discovery sweeps",
  dependsOn: ["inventory"],
  controllers: [MetricsController, SystemController, PollerController, SweepController, CollectionTemplateController],
  providers: [
    ...runtimeProviders,
    SnmpPollerService,
    CollectionTemplateService,
    CollectionTemplateRepository,
    MetricsService,
    MetricsRepository,
    SweepService,
    SweepRepository,
  ],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  // polling.poller-watch (offline pollers, gaps), polling.retention (day partitions), polling.sweep (discovery sweeps)
  jobs: [...runtimeJobs, SWEEP_JOB],
  channels: [SWEEP_CHANNEL],
  // nms poller --pool NAME --core URL (a remote poller), nms poller deploy --pool NAME (a container)
  commands: { ...runtimeCommands },
  bundle: { tables: [...collectionTemplateBundleTables] },
  config: {
    type: "object",
    additionalProperties: false,
    properties: {
      embeddedPoller: { type: "boolean", default: true },
      defaultIntervalSecs: { type: "integer", minimum: 5, maximum: 86400, default: 60 },
      concurrency: { type: "integer", minimum: 1, maximum: 1024, default: 32 },
      snmpTimeoutMs: { type: "integer", minimum: 100, maximum: 60000, default: 2000 },
      snmpRetries: { type: "integer", minimum: 0, maximum: 5, default: 1 },
      heartbeatAllowanceSecs: { type: "integer", minimum: 5, maximum: 3600, default: 45 },
      retentionDays: { type: "integer", minimum: 1, maximum: 3650, default: 30 },
    },
  },
  // The embedded poller of the `default` pool, and the sample sink.
  start: (ctx) => startRuntime(ctx),
  stop: (ctx) => stopRuntime(ctx),
});
