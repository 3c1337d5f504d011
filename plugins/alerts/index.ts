import { definePlugin, sqlMigrationsFrom } from "../../core/index.js";
import { alertsBundleTables } from "./bundle.js";
import { alertsConfigSchema } from "./context.js";
import { AlertController } from "./controllers/AlertController.js";
import { HistoryController } from "./controllers/HistoryController.js";
import { MaintenanceController } from "./controllers/MaintenanceController.js";
import { MuteController } from "./controllers/MuteController.js";
import { ThresholdController } from "./controllers/ThresholdController.js";
import { ActiveAlertRepository } from "./repositories/ActiveAlertRepository.js";
import { HistoryRepository } from "./repositories/HistoryRepository.js";
import { IncidentRepository } from "./repositories/IncidentRepository.js";
import { MaintenanceRepository } from "./repositories/MaintenanceRepository.js";
import { MuteRepository, pruneExpiredMutes } from "./repositories/MuteRepository.js";
import { ThresholdRepository } from "./repositories/ThresholdRepository.js";
import { RootCauseRepository } from "./repositories/RootCauseRepository.js";
import { AckService } from "./services/AckService.js";
import { ActiveAlertService } from "./services/ActiveAlertService.js";
import { AlertSymptoms, EventAlerts } from "./contract.js";
import { AlertEngine } from "./services/AlertEngine.js";
import { EventAlertService } from "./services/EventAlertService.js";
import { HistoryService } from "./services/HistoryService.js";
import { IncidentWriter } from "./services/IncidentWriter.js";
import { MaintenanceService } from "./services/MaintenanceService.js";
import { MuteService } from "./services/MuteService.js";
import { NodeStateService } from "./services/NodeStateService.js";
import { RootCause } from "./services/RootCause.js";
import { RuleResolver } from "./services/RuleResolver.js";
import { Suppression } from "./services/Suppression.js";
import { ThresholdService } from "./services/ThresholdService.js";

export * from "./contract.js";
export type { AlertsConfig } from "./context.js";
export { LIVENESS_CHECK_ID, POOL_CHECK_ID, LIVENESS_MUTE_METRIC } from "./lib/checks.js";
/** For tests (other plugins' too) that commit pending incidents now through alerts' own context: `get(EventAlertService).flush()`. Not a contract. */
export { EventAlertService };

export const alertsPlugin = definePlugin({
  id: "alerts",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Thresholds, the alert engine, history, acknowledgement, mutes and maintenance",
  dependsOn: { inventory: "^0.1.0", polling: "^0.1.0" },
  // Root-cause alerts link an unreachable node's incident to its upstream's (RootCause) when topology is loaded.
  optionalDependsOn: { topology: "^0.1.0" },
  controllers: [ThresholdController, AlertController, HistoryController, MuteController, MaintenanceController],
  providers: [
    ThresholdService,
    ThresholdRepository,
    RuleResolver,
    AlertEngine,
    IncidentWriter,
    IncidentRepository,
    NodeStateService,
    Suppression,
    RootCause,
    RootCauseRepository,
    ActiveAlertService,
    ActiveAlertRepository,
    AckService,
    HistoryService,
    HistoryRepository,
    MuteService,
    MuteRepository,
    MaintenanceService,
    MaintenanceRepository,
    EventAlertService,
  ],
  exports: [
    { provide: EventAlerts, use: EventAlertService },
    { provide: AlertSymptoms, use: RootCause },
  ],
  bundle: { tables: alertsBundleTables },
  jobs: [
    // Node states follow maintenance windows opening and closing.
    { name: "node-states", every: "1 minute", handler: async (_job, ctx) => void (await ctx.get(NodeStateService).refreshMaintenance()) },
    { name: "prune-mutes", every: "1 day", handler: async (_job, ctx) => void (await pruneExpiredMutes(ctx.store)) },
  ],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  channels: [
    { name: "active", permission: "read", scoped: true, description: "alert fired / resolved (active alert changes)" },
    { name: "acks", permission: "read", scoped: true, description: "ack recorded or cleared" },
  ],
  // The engine subscribes to polling's samples, reachability and poller events; stop writes what is pending.
  start: (ctx) => ctx.get(AlertEngine).start(),
  stop: (ctx) => ctx.get(AlertEngine).stop(),
  config: alertsConfigSchema,
});
