/** The alerts plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const alertsConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** Most node ids one bulk mute may carry. */
    bulkMuteMax: { type: "integer", minimum: 1, maximum: 100000, default: 1000 },
    /** The engine's flush window: transitions decided within it are written together and share recorded_at. */
    flushMs: { type: "integer", minimum: 1, maximum: 10000, default: 200 },
    /** Polls in a row in which a reachable node's SNMP agent does not answer before "SNMP agent not answering" fires. */
    agentDownPolls: { type: "integer", minimum: 1, maximum: 100, default: 3 },
    /** How far back (s) a replica taking a partition replays stored samples to rebuild dwell counts (0: not at all). */
    replaySecs: { type: "integer", minimum: 0, maximum: 3600, default: 300 },
  },
} as const;

export type AlertsConfig = ConfigOf<typeof alertsConfigSchema>;
export type AlertsContext = PluginContext<AlertsConfig>;

/** Inject with `@Inject(ALERTS_CONTEXT) private ctx: AlertsContext`. */
export const ALERTS_CONTEXT = pluginContextToken("alerts");
