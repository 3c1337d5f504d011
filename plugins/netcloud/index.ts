import { definePlugin, sqlMigrationsFrom, type PluginContext } from "../../core/index.js";
import { netcloudConfigSchema, type NetcloudConfig } from "./context.js";
import { OrgController } from "./controllers/OrgController.js";
import { OrgRepository } from "./repositories/OrgRepository.js";
import { OrgAlerts } from "./services/OrgAlerts.js";
import { OrgService } from "./services/OrgService.js";
import { SyncService } from "./services/SyncService.js";
import { UpstreamService } from "./services/UpstreamService.js";

export type { NetcloudConfig } from "./context.js";

function start(ctx: PluginContext<NetcloudConfig>): void {
  if (ctx.mode !== "full") return;
  // A node an operator deletes stays deleted: the device that was it is remembered as imported (each sync also
  // checks its nodes still stand, for deletions made on another replica).
  ctx.bus.on("inventory.node.deleted", (e) =>
    ctx
      .get(SyncService)
      .nodeDeleted(e.id)
      .catch((err: Error) => ctx.log.warn("netcloud: node deletion not recorded", { node: e.id, error: err.message })),
  );
}

async function stop(ctx: PluginContext<NetcloudConfig>): Promise<void> {
  await ctx.get(UpstreamService).stop();
}

export const netcloudPlugin = definePlugin({
  id: "netcloud",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "A cloud-managed network platform: organization discovery, networks (watched), device statuses to alerts, device import as nodes",
  dependsOn: { inventory: "^0.1.0", alerts: "^0.1.0" },
  controllers: [OrgController],
  providers: [OrgRepository, UpstreamService, OrgAlerts, OrgService, SyncService],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  jobs: [
    {
      // Hands each organization that is due (every pluginConfig.netcloud.syncIntervalSecs) to its own sync-org job.
      name: "dispatch",
      every: "30 seconds",
      handler: async (_job, ctx) => {
        await ctx.get(SyncService).dispatch();
      },
    },
    {
      // One organization's sync ({id}); queued by dispatch and at once when an organization is added. Its own claim
      // (orgs.sync_started_at) keeps two syncs of one organization apart, whatever Agenda's lock lifetime.
      name: "sync-org",
      concurrency: 2,
      handler: async (job, ctx) => {
        const id = (job.data as { id?: unknown } | undefined)?.id;
        if (typeof id === "string") await ctx.get(SyncService).sync(id);
      },
    },
  ],
  // Organizations and their keys are not in the configuration bundle (ADR 0012): keys are secrets, and a bundle
  // imported elsewhere must not start syncing someone's organizations.
  config: netcloudConfigSchema,
  start,
  stop,
});
