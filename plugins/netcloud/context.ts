/** The netcloud plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const netcloudConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /**
     * Hosts a base_url may name: "host" (any port), "host:port", or "*.domain" (any subdomain of domain). Compared
     * case-insensitively; anything else answers 400 invalid_base_url, and redirects are only followed on the same host.
     */
    allowedHosts: { type: "array", items: { type: "string", minLength: 1, maxLength: 255 }, maxItems: 256, default: ["api.meraki.com"] },
    /** The base URL used when a request names none (it must be https and on allowedHosts too). */
    defaultBaseUrl: { type: "string", minLength: 9, maxLength: 2048, default: "https://api.meraki.com/api/v1" },
    /** PEM certificates trusted for the platform's TLS in addition to the system roots (a proxy or a private platform); null = system roots only. */
    caCertPem: { type: ["string", "null"], maxLength: 262144, default: null },
    /** How often each organization is synchronised (networks, devices, statuses, import). */
    syncIntervalSecs: { type: "integer", minimum: 30, maximum: 86400, default: 300 },
    /** Deadline of one upstream request (connect, headers and body). */
    requestTimeoutMs: { type: "integer", minimum: 100, maximum: 300000, default: 30000 },
    /** Longest Retry-After a 429 may ask for and still be waited out; a longer one fails the call (rate_limited). */
    maxRetryWaitSecs: { type: "integer", minimum: 0, maximum: 600, default: 30 },
    /** Attempts after a 429 before the call fails (rate_limited). */
    maxRetries: { type: "integer", minimum: 0, maximum: 20, default: 5 },
    /** perPage asked of the platform's paginated lists. */
    pageSize: { type: "integer", minimum: 3, maximum: 1000, default: 1000 },
    /** Most pages one list may take (a guard against a platform that never ends a list). */
    maxPages: { type: "integer", minimum: 1, maximum: 100000, default: 1000 },
    /** Organizations this deployment monitors at most (an add past it answers 400 too_many_organizations). */
    maxOrganizations: { type: "integer", minimum: 1, maximum: 10000, default: 100 },
  },
} as const;

export type NetcloudConfig = ConfigOf<typeof netcloudConfigSchema>;
export type NetcloudContext = PluginContext<NetcloudConfig>;

export const NETCLOUD_CONTEXT = pluginContextToken("netcloud");
