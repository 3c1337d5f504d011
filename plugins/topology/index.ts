import { definePlugin, sqlMigrationsFrom, type Scope } from "../../core/index.js";
import { topologyConfigSchema } from "./context.js";
import { Upstream } from "./contract.js";
import { NodeTopologyController } from "./controllers/NodeTopologyController.js";
import { TopologyController } from "./controllers/TopologyController.js";
import { TopologyRepository } from "./repositories/TopologyRepository.js";
import { DiscoveryService } from "./services/DiscoveryService.js";
import { TopologyService } from "./services/TopologyService.js";
import { UpstreamService } from "./services/UpstreamService.js";

export type { TopologyConfig } from "./context.js";

function scopeOf(data: unknown): Scope | null {
  const s = (data as { scope?: unknown } | undefined)?.scope;
  if (s === "All") return "All";
  const folders = (s as { folders?: unknown } | undefined)?.folders;
  return Array.isArray(folders) && folders.every((f) => typeof f === "string") ? { folders } : null;
}

export const topologyPlugin = definePlugin({
  id: "topology",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Links between nodes from LLDP and CDP, unknown neighbours, and each node's upstream path (inferred from its pool's seed, or pinned)",
  // Nodes, their addresses and credentials, and the import of unknown neighbours: inventory's contract.
  dependsOn: { inventory: "^0.1.0" },
  controllers: [TopologyController, NodeTopologyController],
  providers: [TopologyRepository, UpstreamService, DiscoveryService, TopologyService],
  exports: [{ provide: Upstream, use: UpstreamService }],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  jobs: [
    {
      // Every minute: the nodes whose last walk is older than intervalSecs (at most batchSize). Agenda runs it on one replica.
      // The default lock (10 min) outlasts a batch. A 30-minute one kept a process that had run it alive for 15 minutes
      // after its kernel stopped (Agenda's liveness check of a run sleeps lockLifetime / 2 on a timer nothing clears).
      name: "discover",
      every: "1 minute",
      handler: async (_job, ctx) => {
        if (!ctx.config.schedule) return;
        const s = await ctx.get(DiscoveryService).runDue();
        if (s.nodes > 0) ctx.log.info("topology: discovery run", { ...s });
      },
    },
    {
      // POST /topology/discover without a node: every node the caller's scope covered.
      name: "discover-all",
      lockLifetimeMs: 60 * 60 * 1000,
      handler: async (job, ctx) => {
        const scope = scopeOf(job.data);
        if (!scope) return;
        const s = await ctx.get(DiscoveryService).discover(null, scope);
        ctx.log.info("topology: discovery of all nodes", { ...s });
      },
    },
  ],
  channels: [
    {
      name: "changes",
      permission: "read",
      scoped: true,
      description: "A link appears (link.up) or is marked gone (link.gone); payload {id, a_node, a_port, b_node, b_port, protocols}",
    },
  ],
  config: topologyConfigSchema,
  start(ctx) {
    if (ctx.mode !== "full") return;
    ctx.bus.on("inventory.node.deleted", async (e) => {
      await ctx.get(TopologyRepository).forgetNode(e.id);
      ctx.get(UpstreamService).invalidate();
    });
  },
});
