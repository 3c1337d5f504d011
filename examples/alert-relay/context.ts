/** The plugin's configuration schema (its config type is derived from it) and its context token, written once. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "nms-core";

export const alertRelayConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** The chat's incoming-webhook URL; null = relay nothing. It often carries a secret: never logged or answered. */
    webhookUrl: { type: ["string", "null"], pattern: "^https?://", maxLength: 2048, default: null },
    /** The least severity relayed. */
    minSeverity: { enum: ["info", "warning", "critical"], default: "warning" },
    /** How long one post may take. */
    timeoutMs: { type: "integer", minimum: 100, maximum: 60000, default: 5000 },
  },
} as const;

export type AlertRelayConfig = ConfigOf<typeof alertRelayConfigSchema>;
export type AlertRelayContext = PluginContext<AlertRelayConfig>;

export const ALERT_RELAY_CONTEXT = pluginContextToken("alert-relay");
