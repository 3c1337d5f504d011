import { definePlugin } from "../../core/index.js";
import { sqlMigrationsFrom } from "../../core/index.js";
import { inventoryBundleTables } from "./bundle.js";
import { CheckController } from "./controllers/CheckController.js";
import { ClassificationRuleController } from "./controllers/ClassificationRuleController.js";
import { CredentialController } from "./controllers/CredentialController.js";
import { DiscoveryController } from "./controllers/DiscoveryController.js";
import { FolderController } from "./controllers/FolderController.js";
import { NodeController } from "./controllers/NodeController.js";
import { PinController } from "./controllers/PinController.js";
import { ProfileController } from "./controllers/ProfileController.js";
import { ReclassifyController } from "./controllers/ReclassifyController.js";
import { InventoryScope } from "./services/InventoryScope.js";

export * from "./contract.js";

export interface InventoryConfig {
  /** Most nodes one discovery import may carry (one sweep's worth). */
  sweepSize: number;
  /** Most folders one account may pin. */
  pinLimit: number;
}

const CHANGE_EVENTS = ["node.created", "node.updated", "node.deleted", "folder.created", "folder.updated", "folder.deleted"] as const;

export const inventoryPlugin = definePlugin<InventoryConfig>({
  id: "inventory",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "What is monitored: nodes, folders, profiles, credentials, classification, checks, pins",
  controllers: [
    NodeController,
    FolderController,
    PinController,
    ProfileController,
    CredentialController,
    ClassificationRuleController,
    DiscoveryController,
    ReclassifyController,
    CheckController,
  ],
  providers: [InventoryScope],
  exports: [],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  channels: [{ name: "changes", permission: "read", scoped: true, description: "node and folder created/updated/deleted" }],
  bundle: { tables: inventoryBundleTables },
  config: {
    type: "object",
    additionalProperties: false,
    properties: {
      sweepSize: { type: "integer", minimum: 1, maximum: 100000, default: 4096 },
      pinLimit: { type: "integer", minimum: 1, maximum: 10000, default: 50 },
    },
  },
  start(ctx) {
    // Dashboards follow inventory changes live: every change event goes out on inventory.changes,
    // delivered only to sockets whose folder scope covers the subject.
    for (const name of CHANGE_EVENTS) {
      ctx.bus.on(`inventory.${name}`, (e) => ctx.realtime.publish("changes", name, e, { folders: e.folder_path }));
    }
  },
});
