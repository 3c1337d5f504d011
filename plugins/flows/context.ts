/** The flows plugin's configuration schema (the one source of its config type) and its context token. */
import { journalConfigSchema, pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const flowsConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** The flow store: off = no collector, no rollups, and GET /flow/* answer 503 flows_disabled. */
    enabled: { type: "boolean", default: true },
    /** One UDP port for NetFlow v5, v9 and IPFIX: 0 = any free port, null = off. */
    udp: { type: ["integer", "null"], minimum: 0, maximum: 65535, default: 2055 },
    bindAddress: { type: "string", default: "0.0.0.0" },
    /** Data that arrives before its template is held this long, then dropped (counted). */
    pendingMaxMs: { type: "integer", minimum: 100, maximum: 600000, default: 10000 },
    /** Per-exporter sampling rate overrides: `{ "192.0.2.1": 1000 }` (wins over what the exporter reports). */
    sampling: { type: "object", additionalProperties: { type: "integer", minimum: 1, maximum: 16777216 }, default: {} },
    /** How often the in-memory minute aggregates are added to the store. */
    flushMs: { type: "integer", minimum: 100, maximum: 60000, default: 5000 },
    /** Most distinct aggregation keys held in memory between flushes; past it records are dropped (counted). */
    maxKeys: { type: "integer", minimum: 1000, maximum: 10000000, default: 500000 },
    /**
     * The listener's ingest: reader threads (one SO_REUSEPORT socket each) and decoder threads that journal every
     * datagram, decode and aggregate (docs/operations.md, "The ingest journal"). Each decoder's journal holds its part of maxMB.
     */
    ingest: {
      type: "object",
      additionalProperties: false,
      default: {},
      properties: {
        /** Decoder threads (and as many readers); null = one per core. */
        workers: { type: ["integer", "null"], minimum: 1, maximum: 64, default: null },
        journal: journalConfigSchema,
      },
    },
    /** Days of minute rollups and of hour rollups kept (whole daily partitions are dropped). */
    minuteRetentionDays: { type: "integer", minimum: 1, maximum: 365, default: 7 },
    hourRetentionDays: { type: "integer", minimum: 1, maximum: 3650, default: 90 },
    /** The largest MMDB file POST /flow/asn/mmdb takes, in MiB (the file is held in memory while it is read). */
    asnUploadMaxMiB: { type: "integer", minimum: 1, maximum: 1024, default: 128 },
  },
} as const;

export type FlowsConfig = ConfigOf<typeof flowsConfigSchema>;
export type FlowsContext = PluginContext<FlowsConfig>;

export const FLOWS_CONTEXT = pluginContextToken("flows");
