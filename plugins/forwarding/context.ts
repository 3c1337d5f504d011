/** The forwarding plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const forwardingConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** Most destinations this deployment keeps (a create past it answers 400 too_many_destinations). */
    maxDestinations: { type: "integer", minimum: 1, maximum: 10000, default: 100 },
    /** Messages a stream destination (syslog_tcp, syslog_tls) holds while it is behind or reconnecting; past it the oldest are dropped and counted. */
    queueSize: { type: "integer", minimum: 10, maximum: 1000000, default: 10000 },
    /** Reconnect backoff of stream destinations: the first wait, doubled per failure up to the ceiling. */
    reconnectMinMs: { type: "integer", minimum: 10, maximum: 60000, default: 500 },
    reconnectMaxMs: { type: "integer", minimum: 100, maximum: 600000, default: 30000 },
    /** How often a replica re-reads the destinations (a change made on another replica reaches it within this). */
    reloadMs: { type: "integer", minimum: 1000, maximum: 3600000, default: 30000 },
    /**
     * Verbatim, unfiltered, unlimited syslog_udp destinations to an address are relayed by the UDP syslog listener's
     * reader thread as datagrams arrive, before parsing (what the other listeners receive still goes through the tee).
     */
    udpFastPath: { type: "boolean", default: true },
    /**
     * A relay port (off by default): every datagram it receives goes, as received, to the destinations the UDP fast path
     * relays to (verbatim, unfiltered, unlimited syslog_udp destinations to an address), from reader threads, and is
     * neither parsed nor stored. For a stream that is only passed on; what the events listeners receive is unchanged.
     */
    relay: {
      type: "object",
      additionalProperties: false,
      default: {},
      properties: {
        /** The port: null = off, 0 = any free port (tests). */
        udp: { type: ["integer", "null"], minimum: 0, maximum: 65535, default: null },
        /** "0.0.0.0" = every IPv4 and IPv6 address (dual stack). */
        bindAddress: { type: "string", default: "0.0.0.0" },
        /**
         * Sockets on the port (SO_REUSEPORT), each read by a thread of its own; null = 8, as the syslog listener has: the
         * kernel gives each sender to one socket, and a sender's opening burst fills that socket's buffer alone.
         */
        sockets: { type: ["integer", "null"], minimum: 1, maximum: 64, default: null },
        /** Receive buffer each socket asks for (forced past net.core.rmem_max when the service runs as root). */
        receiveBufferBytes: { type: "integer", minimum: 65536, maximum: 1073741824, default: 33554432 },
        /**
         * How the kernel shares the datagrams among the sockets: "datagram" = each one to a socket at random (one sender's
         * burst is read by every thread; a sender's datagrams may leave out of order), "sender" = the kernel's hash of the
         * sender's address and port (one sender, one socket, in order). "datagram" needs the batched socket (Linux, koffi).
         */
        spread: { type: "string", enum: ["datagram", "sender"], default: "datagram" },
      },
    },
    /** Warehouse destinations (streaming inserts): where rows go and how they are batched. */
    warehouse: {
      type: "object",
      additionalProperties: false,
      default: {},
      properties: {
        /** Project of the tables when the destination has no key (ambient identity); a key's project_id wins. */
        projectId: { type: ["string", "null"], default: null },
        dataset: { type: "string", minLength: 1, maxLength: 1024, default: "nms" },
        syslogTable: { type: "string", minLength: 1, maxLength: 1024, default: "syslog_events" },
        trapTable: { type: "string", minLength: 1, maxLength: 1024, default: "trap_events" },
        flowTable: { type: "string", minLength: 1, maxLength: 1024, default: "flow_records" },
        /** Rows per insert request, and the longest a row waits for its batch. */
        batchRows: { type: "integer", minimum: 1, maximum: 10000, default: 500 },
        flushMs: { type: "integer", minimum: 10, maximum: 60000, default: 1000 },
        /** The ambient identity's token endpoint (the instance metadata server). */
        metadataTokenUrl: { type: "string", default: "http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token" },
        /** OAuth scope a service-account key asks for. */
        scope: { type: "string", default: "https://www.googleapis.com/auth/bigquery.insertdata" },
      },
    },
  },
} as const;

export type ForwardingConfig = ConfigOf<typeof forwardingConfigSchema>;
export type ForwardingContext = PluginContext<ForwardingConfig>;

export const FORWARDING_CONTEXT = pluginContextToken("forwarding");
