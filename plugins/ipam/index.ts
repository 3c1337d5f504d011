import { definePlugin, sqlMigrationsFrom } from "../../core/index.js";
import { ipamConfigSchema } from "./context.js";
import { OverlapController } from "./controllers/OverlapController.js";
import { ServerController } from "./controllers/ServerController.js";
import { OverlapRepository } from "./repositories/OverlapRepository.js";
import { ServerRepository } from "./repositories/ServerRepository.js";
import { OverlapService } from "./services/OverlapService.js";
import { ServerService } from "./services/ServerService.js";
import { SyncService } from "./services/SyncService.js";

export type { IpamConfig } from "./context.js";

export const ipamPlugin = definePlugin({
  id: "ipam",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "IPAM servers (a NetBox-like REST API): sites and prefixes synced, IPAM sites mapped to folders, subnet overlaps between sites",
  // Folders: their ip_ranges are read through inventory's folder_ranges view and set through its FolderService.
  dependsOn: { inventory: "^0.1.0" },
  controllers: [ServerController, OverlapController],
  providers: [ServerRepository, OverlapRepository, ServerService, SyncService, OverlapService],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  jobs: [
    // Every 30 s: the enabled servers whose next sync is due get an ipam.sync job each (their next sync moves on by
    // sync_interval_secs in the same statement, so replicas never start the same one twice).
    { name: "dispatch", every: "30 seconds", handler: async (_job, ctx) => void (await ctx.get(SyncService).dispatch()) },
    {
      name: "sync",
      concurrency: 2,
      lockLifetimeMs: 30 * 60 * 1000,
      handler: async (job, ctx) => {
        const id = (job.data as { id?: unknown } | undefined)?.id;
        if (typeof id === "string") await ctx.get(SyncService).sync(id);
      },
    },
  ],
  config: ipamConfigSchema,
  start(ctx) {
    // A deleted folder is no longer a mapping target.
    ctx.bus.on("inventory.folder.deleted", async (e) => {
      if (ctx.mode === "full") await ctx.get(ServerRepository).dropFolderMappings(e.id);
    });
  },
});
