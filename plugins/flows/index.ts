import { definePlugin, sqlMigrationsFrom, type PluginContext } from "../../core/index.js";
import { flowsConfigSchema, type FlowsConfig } from "./context.js";
import { FlowController } from "./controllers/FlowController.js";
import { flowsPassiveReceiver } from "./poller/passive.js";
import { FlowRepository } from "./repositories/FlowRepository.js";
import { FlowCollector } from "./services/FlowCollector.js";
import { FlowQueryService } from "./services/FlowQueryService.js";
import { importAsnCommand } from "./services/importAsnCommand.js";

export * from "./contract.js";
export type { FlowsConfig } from "./context.js";

const active = (ctx: PluginContext<FlowsConfig>) => ctx.mode === "full" && ctx.config.enabled;

export const flowsPlugin = definePlugin({
  id: "flows",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "NetFlow v5/v9 and IPFIX collector: shared templates, sampling, minute and hour rollups, conversations, top AS, exporters",
  dependsOn: { inventory: "^0.1.0", polling: "^0.1.0" },
  controllers: [FlowController],
  providers: [FlowCollector, FlowQueryService, FlowRepository],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  listeners: [{ name: "flows.udp", stream: "flow", protocol: "udp", portKey: "udp", description: "NetFlow v5, v9 and IPFIX on one port" }],
  // Remote pollers run the same listener for their pool and forward the datagrams to POST /flow/forwarded.
  contributes: { "polling.passive": [flowsPassiveReceiver] },
  jobs: [
    {
      name: "rollups",
      every: "5 minutes",
      // The hour rollups of the last two hours, and of the hours missed since the newest one rolled up (downtime), are
      // recomputed from the minute rollups (idempotent, replicas take turns).
      handler: async (_job, ctx) => void (active(ctx) ? await ctx.get(FlowCollector).catchUpHours() : undefined),
    },
    {
      name: "partitions",
      every: "1 hour",
      handler: async (_job, ctx) => void (active(ctx) ? await ctx.get(FlowCollector).maintainPartitions() : undefined),
    },
  ],
  commands: { flows: importAsnCommand },
  config: flowsConfigSchema,
  start: async (ctx) => {
    if (active(ctx)) await ctx.get(FlowCollector).start();
  },
  stop: async (ctx) => {
    if (active(ctx)) await ctx.get(FlowCollector).stop();
  },
});
