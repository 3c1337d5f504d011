/** The ipam plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const ipamConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** Time limit of one upstream request (headers, then body); past it the sync stops with last_error_class "timeout". */
    requestTimeoutMs: { type: "integer", minimum: 100, maximum: 300000, default: 15000 },
    /** `limit` asked per page of sites and prefixes. */
    pageSize: { type: "integer", minimum: 1, maximum: 10000, default: 1000 },
    /** Most sites plus prefixes one sync takes from one server; past it the sync stops with "too_many_objects" and keeps the previous data. */
    maxObjects: { type: "integer", minimum: 1, maximum: 5000000, default: 1000000 },
    /** Largest upstream response body read, in bytes. */
    maxResponseBytes: { type: "integer", minimum: 1024, maximum: 1073741824, default: 67108864 },
  },
} as const;

export type IpamConfig = ConfigOf<typeof ipamConfigSchema>;
export type IpamContext = PluginContext<IpamConfig>;

export const IPAM_CONTEXT = pluginContextToken("ipam");

/** Longest note an overlap ack stores (400 text_too_long above it). */
export const NOTE_MAX_LENGTH = 1000;
