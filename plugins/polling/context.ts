/** The polling plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const pollingConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** Run the embedded poller for the `default` pool inside the core (on one replica at a time: the holder of its lease). */
    embeddedPoller: { type: "boolean", default: true },
    /** How often a replica without the embedded poller's lease tries to take it, and the holder checks it (ms): the failover time's bound. */
    leaseRetryMs: { type: "integer", minimum: 200, maximum: 60000, default: 2000 },
    /** Poll interval when a node's profile sets none. */
    defaultIntervalSecs: { type: "integer", minimum: 5, maximum: 86400, default: 60 },
    /** Nodes polled at once by one poller. */
    concurrency: { type: "integer", minimum: 1, maximum: 1024, default: 32 },
    snmpTimeoutMs: { type: "integer", minimum: 100, maximum: 60000, default: 2000 },
    snmpRetries: { type: "integer", minimum: 0, maximum: 5, default: 1 },
    /** A poller silent for longer than this is offline (a gap opens). */
    heartbeatAllowanceSecs: { type: "integer", minimum: 5, maximum: 3600, default: 45 },
    /** Days of sample history kept (whole day partitions are dropped). */
    retentionDays: { type: "integer", minimum: 1, maximum: 3650, default: 30 },
    /** Most series one answer of GET /metrics/devices carries (the Prometheus exposition of what the pollers measured). */
    deviceMetricsMaxSeries: { type: "integer", minimum: 100, maximum: 5000000, default: 250000 },
  },
} as const;

export type PollingConfig = ConfigOf<typeof pollingConfigSchema>;
export type PollingContext = PluginContext<PollingConfig>;

/** Inject with `@Inject(POLLING_CONTEXT) private ctx: PollingContext`. */
export const POLLING_CONTEXT = pluginContextToken("polling");
