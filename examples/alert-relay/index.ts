import { definePlugin, sqlMigrationsFrom } from "nms-core";
import { alertRelayConfigSchema } from "./context.js";
import { DeliveryController } from "./controllers/DeliveryController.js";
import { ChatRelay } from "./contract.js";
import { chatKind } from "./kinds/chatKind.js";
import { DeliveryRepository } from "./repositories/DeliveryRepository.js";
import { RelayService } from "./services/RelayService.js";

export * from "./contract.js";
export type { AlertRelayConfig } from "./context.js";

export const alertRelayPlugin = definePlugin({
  id: "alert-relay",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Relays alert transitions to a chat webhook and keeps a delivery log",
  dependsOn: { alerts: "^0.1.0", notifications: "^0.1.0" },
  controllers: [DeliveryController],
  providers: [RelayService, DeliveryRepository],
  // Its contract for dependants: the ChatRelay token, bound to the service that implements it.
  exports: [{ provide: ChatRelay, use: RelayService }],
  // A channel kind for the notifications plugin: operators then route alerts to chats like to any channel.
  contributes: { "notifications.kinds": [chatKind] },
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  config: alertRelayConfigSchema,
  start: (ctx) => ctx.get(RelayService).start(),
  stop: (ctx) => ctx.get(RelayService).stop(),
});
