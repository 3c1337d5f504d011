import { definePlugin, sqlMigrationsFrom } from "../../core/index.js";
import { AlertController } from "./controllers/AlertController.js";
import { HistoryController } from "./controllers/HistoryController.js";
import { MaintenanceController } from "./controllers/MaintenanceController.js";
import { MuteController } from "./controllers/MuteController.js";
import { ThresholdController } from "./controllers/ThresholdController.js";

export * from "./contract.js";

export interface AlertsConfig {
  /** Most node ids one bulk mute may carry. */
  bulkMuteMax: number;
  /** Cap of history rows one page may carry is the spec's 1000; this is the engine's flush interval. */
  flushMs: number;
}

export const alertsPlugin = definePlugin<AlertsConfig>({
  id: "alerts",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Thresholds, the alert engine, history, acknowledgement, mutes and maintenance",
  dependsOn: ["inventory", "polling"],
  controllers: [ThresholdController, AlertController, HistoryController, MuteController, MaintenanceController],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  channels: [
    { name: "active", permission: "read", scoped: true, description: "alert fired / resolved (active alert changes)" },
    { name: "acks", permission: "read", scoped: true, description: "ack recorded or cleared" },
  ],
  config: {
    type: "object",
    additionalProperties: false,
    properties: {
      bulkMuteMax: { type: "integer", minimum: 1, maximum: 100000, default: 1000 },
      flushMs: { type: "integer", minimum: 1, maximum: 10000, default: 200 },
    },
  },
});
