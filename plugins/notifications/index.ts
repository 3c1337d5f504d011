import { definePlugin, sqlMigrationsFrom } from "../../core/index.js";
import { notificationsConfigSchema } from "./context.js";
import { ChannelController } from "./controllers/ChannelController.js";
import { DeliveryController } from "./controllers/DeliveryController.js";
import { RoutingRuleController } from "./controllers/RoutingRuleController.js";
import { ChannelRepository } from "./repositories/ChannelRepository.js";
import { DeliveryRepository } from "./repositories/DeliveryRepository.js";
import { RoutingRuleRepository } from "./repositories/RoutingRuleRepository.js";
import { ChannelService } from "./services/ChannelService.js";
import { DeliveryLogService } from "./services/DeliveryLogService.js";
import { DeliveryWorker } from "./services/DeliveryWorker.js";
import { KindRegistry, validateKind } from "./services/KindRegistry.js";
import { Renderer } from "./services/Renderer.js";
import { ReportDeliveryService } from "./services/ReportDeliveryService.js";
import { ReportDelivery } from "./contract.js";
import { RoutingRuleService } from "./services/RoutingRuleService.js";

export * from "./contract.js";
export type { NotificationsConfig } from "./context.js";

export const notificationsPlugin = definePlugin({
  id: "notifications",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Alert notifications: channels (webhook, email, pager, servicedesk and plugin-added kinds), routing rules, a durable delivery queue and log",
  dependsOn: { alerts: "^0.1.0", inventory: "^0.1.0" },
  controllers: [ChannelController, RoutingRuleController, DeliveryController],
  providers: [
    KindRegistry,
    ChannelService,
    ChannelRepository,
    RoutingRuleService,
    RoutingRuleRepository,
    DeliveryWorker,
    DeliveryRepository,
    DeliveryLogService,
    Renderer,
    ReportDeliveryService,
  ],
  exports: [{ provide: ReportDelivery, use: ReportDeliveryService }],
  extensionPoints: [{ name: "kinds", validate: validateKind, description: "channel kinds (ChannelKind in the contract)" }],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  channels: [{ name: "deliveries", permission: "ManageSystem", scoped: false, description: "delivery state changes (event notifications.delivery)" }],
  config: notificationsConfigSchema,
  // The worker follows alerts.fired / resolved / suppressed and sends what is due, on every replica (the queue's
  // unique key and leases keep each delivery to one row and one sender at a time).
  start: (ctx) => {
    if (ctx.mode === "full") ctx.get(DeliveryWorker).start();
  },
  stop: (ctx) => (ctx.mode === "full" ? ctx.get(DeliveryWorker).stop() : undefined),
});
