/** The notifications plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const notificationsConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** Sends of one delivery before it is given up (failed). */
    maxAttempts: { type: "integer", minimum: 1, maximum: 50, default: 8 },
    /** First retry delay; each later one doubles, with full jitter, up to retryMaxMs. A Retry-After wins when longer. */
    retryBaseMs: { type: "integer", minimum: 100, maximum: 600000, default: 2000 },
    retryMaxMs: { type: "integer", minimum: 100, maximum: 86400000, default: 300000 },
    /** A delivery older than this is not sent any more (expired). */
    maxAgeSecs: { type: "integer", minimum: 60, maximum: 604800, default: 86400 },
    /** How often each replica looks for due deliveries (new ones in this process are sent at once). */
    pollMs: { type: "integer", minimum: 50, maximum: 60000, default: 1000 },
    /** How long a replica holds a delivery it is sending; a replica killed mid-send lets another take it after this. */
    leaseMs: { type: "integer", minimum: 1000, maximum: 3600000, default: 60000 },
    /** Deliveries sent at once by one replica. */
    concurrency: { type: "integer", minimum: 1, maximum: 256, default: 8 },
    /** Consecutive failures of one channel that open its circuit breaker, and how long it stays open. */
    breakerFailures: { type: "integer", minimum: 1, maximum: 1000, default: 5 },
    breakerOpenMs: { type: "integer", minimum: 1000, maximum: 3600000, default: 30000 },
    /**
     * How long an unreachable fire waits before root_cause_only rules decide on it (its symptom_of is read again from
     * the store then): the node's upstream may be found unreachable a poll later. Default: about two ping timeouts.
     */
    rootCauseSettleMs: { type: "integer", minimum: 0, maximum: 600000, default: 5000 },
    /** Time one send may take. */
    sendTimeoutMs: { type: "integer", minimum: 1000, maximum: 120000, default: 15000 },
  },
} as const;

export type NotificationsConfig = ConfigOf<typeof notificationsConfigSchema>;
export type NotificationsContext = PluginContext<NotificationsConfig>;

export const NOTIFICATIONS_CONTEXT = pluginContextToken("notifications");
