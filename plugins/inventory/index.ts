import { definePlugin } from "../../core/index.js";
import { inventoryConfigSchema } from "./context.js";
import { sqlMigrationsFrom } from "../../core/index.js";
import { inventoryBundleTables } from "./bundle.js";
import { Classifier, Credentials, DiscoveryImport, Folders, InventoryLimits, NodeAddresses, NodeFacts } from "./contract.js";
import { CheckController } from "./controllers/CheckController.js";
import { ClassificationRuleController } from "./controllers/ClassificationRuleController.js";
import { CredentialController } from "./controllers/CredentialController.js";
import { DiscoveryController } from "./controllers/DiscoveryController.js";
import { FolderController } from "./controllers/FolderController.js";
import { NodeController } from "./controllers/NodeController.js";
import { PinController } from "./controllers/PinController.js";
import { ProfileController } from "./controllers/ProfileController.js";
import { ReclassifyController } from "./controllers/ReclassifyController.js";
import { CheckRepository } from "./repositories/CheckRepository.js";
import { DiscoveryRepository } from "./repositories/DiscoveryRepository.js";
import { ReclassifyRepository } from "./repositories/ReclassifyRepository.js";
import { RuleReadRepository } from "./repositories/RuleReadRepository.js";
import { ClassifierService } from "./services/ClassifierService.js";
import { DiscoveryService } from "./services/DiscoveryService.js";
import { ReclassifyService } from "./services/ReclassifyService.js";
import { ClassificationRuleRepository } from "./repositories/ClassificationRuleRepository.js";
import { CredentialRepository } from "./repositories/CredentialRepository.js";
import { FolderRepository } from "./repositories/FolderRepository.js";
import { NodeRepository } from "./repositories/NodeRepository.js";
import { PinRepository } from "./repositories/PinRepository.js";
import { ProfileRepository } from "./repositories/ProfileRepository.js";
import { NodeAddressBook } from "./services/NodeAddressBook.js";
import { CheckService } from "./services/CheckService.js";
import { ClassificationRuleService } from "./services/ClassificationRuleService.js";
import { CredentialService } from "./services/CredentialService.js";
import { FolderService } from "./services/FolderService.js";
import { InventoryLimitsService } from "./services/InventoryLimitsService.js";
import { InventoryScope } from "./services/InventoryScope.js";
import { NodeService } from "./services/NodeService.js";
import { PinService } from "./services/PinService.js";
import { ProfileService } from "./services/ProfileService.js";

export * from "./contract.js";
export type { InventoryConfig } from "./context.js";

const CHANGE_EVENTS = ["node.created", "node.updated", "node.deleted", "folder.created", "folder.updated", "folder.deleted"] as const;

export const inventoryPlugin = definePlugin({
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
  providers: [
    InventoryLimitsService,
    InventoryScope,
    NodeService,
    NodeRepository,
    FolderService,
    FolderRepository,
    PinService,
    PinRepository,
    ProfileService,
    ProfileRepository,
    CredentialService,
    CredentialRepository,
    ClassificationRuleService,
    ClassificationRuleRepository,
    CheckService,
    CheckRepository,
    ClassifierService,
    RuleReadRepository,
    DiscoveryService,
    DiscoveryRepository,
    ReclassifyService,
    ReclassifyRepository,
    NodeAddressBook,
  ],
  // The contract for dependants: each token of contract.ts, bound to the service implementing it.
  exports: [
    { provide: NodeFacts, use: NodeService },
    { provide: Classifier, use: ClassifierService },
    { provide: Credentials, use: CredentialService },
    { provide: InventoryLimits, use: InventoryLimitsService },
    { provide: NodeAddresses, use: NodeAddressBook },
    { provide: Folders, use: FolderService },
    { provide: DiscoveryImport, use: DiscoveryService },
  ],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  channels: [{ name: "changes", permission: "read", scoped: true, description: "node and folder created/updated/deleted" }],
  bundle: { tables: inventoryBundleTables },
  config: inventoryConfigSchema,
  async start(ctx) {
    if (ctx.mode === "full") await ctx.get(NodeAddressBook).start();
    // Dashboards follow inventory changes live: every change event goes out on inventory.changes,
    // delivered only to sockets whose folder scope covers the subject.
    for (const name of CHANGE_EVENTS) {
      ctx.bus.on(`inventory.${name}`, (e) => ctx.realtime.publish("changes", name, e, { folders: e.folder_path }));
    }
  },
  stop(ctx) {
    if (ctx.mode === "full") ctx.get(NodeAddressBook).stop();
  },
});
