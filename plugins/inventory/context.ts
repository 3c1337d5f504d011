/** The inventory plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const inventoryConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** How often NodeAddressBook (address → node, for attribution) is re-read besides this replica's own node and folder changes. */
    addressBookRefreshMs: { type: "integer", minimum: 1000, maximum: 3600000, default: 60000 },
    /** Most nodes one discovery import may carry (one sweep's worth). */
    sweepSize: { type: "integer", minimum: 1, maximum: 100000, default: 4096 },
    /** Most folders one account may pin. */
    pinLimit: { type: "integer", minimum: 1, maximum: 10000, default: 50 },
  },
} as const;

export type InventoryConfig = ConfigOf<typeof inventoryConfigSchema>;
export type InventoryContext = PluginContext<InventoryConfig>;

/** Inject with `@Inject(INVENTORY_CONTEXT) private ctx: InventoryContext`. */
export const INVENTORY_CONTEXT = pluginContextToken("inventory");
