import { definePlugin, sqlMigrationsFrom, type PluginContext } from "../../core/index.js";
import { forwardingBundleTables } from "./bundle.js";
import { forwardingConfigSchema, type ForwardingConfig } from "./context.js";
import { DestinationController } from "./controllers/DestinationController.js";
import { DestinationRepository } from "./repositories/DestinationRepository.js";
import { DestinationService } from "./services/DestinationService.js";
import { ForwardingTee } from "./services/ForwardingTee.js";

export type { ForwardingConfig } from "./context.js";
export type { DestKind, SourceKind, FilterField, FilterOp } from "./lib/types.js";

async function start(ctx: PluginContext<ForwardingConfig>): Promise<void> {
  if (ctx.mode !== "full") return;
  await ctx.get(ForwardingTee).start(ctx.get(DestinationService));
}

async function stop(ctx: PluginContext<ForwardingConfig>): Promise<void> {
  if (ctx.mode !== "full") return;
  await ctx.get(ForwardingTee).stop();
}

export const forwardingPlugin = definePlugin({
  id: "forwarding",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Tees received syslog (and, to come, traps and flows) to other collectors: destinations with filters, rate limits, UDP, TCP and TLS",
  // It consumes the events plugin's events.received (and, to come, the flows plugin's received stream).
  dependsOn: { events: "^0.1.0", flows: "^0.1.0" },
  controllers: [DestinationController],
  providers: [DestinationRepository, DestinationService, ForwardingTee],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  bundle: { tables: forwardingBundleTables },
  config: forwardingConfigSchema,
  start,
  stop,
});
