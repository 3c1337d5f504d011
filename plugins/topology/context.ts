/** The topology plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const topologyConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** false: no scheduled discovery, only POST /topology/discover (the minute job does nothing). */
    schedule: { type: "boolean", default: true },
    /** Seconds between two walks of a node's LLDP and CDP tables by the scheduled discovery. */
    intervalSecs: { type: "integer", minimum: 60, maximum: 604800, default: 900 },
    /** Nodes one scheduled run walks at most (the rest wait for the next minute's run). */
    batchSize: { type: "integer", minimum: 1, maximum: 100000, default: 500 },
    /** Walks in flight at once. */
    concurrency: { type: "integer", minimum: 1, maximum: 256, default: 16 },
    /** A link (or unknown neighbour) is marked gone after this many successful polls of its node(s) that did not see it. */
    goneAfterPolls: { type: "integer", minimum: 1, maximum: 1000, default: 3 },
    /** Milliseconds to wait for one SNMP answer before re-sending. */
    timeoutMs: { type: "integer", minimum: 100, maximum: 60000, default: 2000 },
    /** Re-sends after the first attempt. */
    retries: { type: "integer", minimum: 0, maximum: 5, default: 1 },
    /** GetBulk max-repetitions of the table walks. */
    maxRepetitions: { type: "integer", minimum: 1, maximum: 100, default: 25 },
    /** Var-binds one node's walk may bring at most. */
    maxVarbinds: { type: "integer", minimum: 100, maximum: 1000000, default: 50000 },
    /**
     * The seed node of each poller pool, by node id or address ({"default": "10.0.0.1"}): where its poller sits, the root
     * of its nodes' upstream paths. A pool without one (or whose seed names no node) uses its node with most links.
     */
    seeds: { type: "object", additionalProperties: { type: "string", minLength: 1, maxLength: 64 }, default: {} },
    /**
     * Device profiles whose nodes are walked (by name, case-insensitively, or id; a profile beneath one listed counts):
     * empty = every node with an SNMP credential. Nodes of other profiles (phones, servers) keep their links from the
     * switches that see them.
     */
    profiles: { type: "array", items: { type: "string", minLength: 1, maxLength: 200 }, maxItems: 100, default: [] },
    /** Seconds a computed upstream graph is reused before it is computed again (a change made on this replica recomputes at once). */
    upstreamTtlSecs: { type: "integer", minimum: 1, maximum: 3600, default: 30 },
  },
} as const;

export type TopologyConfig = ConfigOf<typeof topologyConfigSchema>;
export type TopologyContext = PluginContext<TopologyConfig>;

export const TOPOLOGY_CONTEXT = pluginContextToken("topology");
