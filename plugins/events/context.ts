/** The events plugin's configuration schema (the one source of its config type) and its context token. */
import { journalConfigSchema, pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

/** A listener port: 0 = any free port (tests), null = off. Production defaults are the IANA ports (docs/events.md: binding them without root). */
const port = (fallback: number | null) => ({ type: ["integer", "null"], minimum: 0, maximum: 65535, default: fallback }) as const;

export const eventsConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    syslog: {
      type: "object",
      additionalProperties: false,
      default: {},
      properties: {
        udp: port(514),
        tcp: port(514),
        tls: port(6514),
        /** PEM files of the TLS listener; when unset a self-signed pair is made once in the data directory. */
        tlsCert: { type: ["string", "null"], default: null },
        tlsKey: { type: ["string", "null"], default: null },
        /** Address the syslog listeners bind ("::" = every IPv4 and IPv6 address). */
        bindAddress: { type: "string", default: "0.0.0.0" },
        /** Longest message kept; a longer datagram is dropped, a longer stream frame is skipped (both counted as dropped). */
        maxMessageBytes: { type: "integer", minimum: 480, maximum: 65536, default: 8192 },
        /**
         * Receive buffer each syslog UDP socket asks for: what a burst fills before it is read. The kernel grants up to
         * net.core.rmem_max, or all of it when the service runs with CAP_NET_ADMIN (root), as rsyslog's imudp forces its own.
         */
        udpReceiveBufferBytes: { type: "integer", minimum: 65536, maximum: 1073741824, default: 33554432 },
        /** A TCP/TLS connection silent this long is closed. */
        idleTimeoutMs: { type: "integer", minimum: 1000, maximum: 86400000, default: 300000 },
        maxConnectionsPerAddress: { type: "integer", minimum: 1, maximum: 10000, default: 32 },
        maxConnections: { type: "integer", minimum: 1, maximum: 100000, default: 2048 },
      },
    },
    traps: {
      type: "object",
      additionalProperties: false,
      default: {},
      properties: {
        udp: port(162),
        bindAddress: { type: "string", default: "0.0.0.0" },
        /** v1/v2c communities accepted; traps with any other are counted and dropped. */
        communities: { type: "array", items: { type: "string", minLength: 1, maxLength: 64 }, maxItems: 64, default: ["public"] },
        /** Ids of inventory snmp_v3 credentials whose USM users may send v3 traps and informs. */
        v3Credentials: { type: "array", items: { type: "string" }, maxItems: 256, default: [] },
        /** How often those credentials are read again: a changed password or user applies within this, without a restart. */
        v3RefreshMs: { type: "integer", minimum: 1000, maximum: 3600000, default: 60000 },
        /** Most remote engine ids whose keys are kept (the oldest is forgotten first). */
        engineIdCacheSize: { type: "integer", minimum: 16, maximum: 1000000, default: 4096 },
        /** This receiver's SNMP engine id (hex, 5 to 32 bytes) for v3 informs; unset = one made once and kept in the data directory. */
        engineId: { type: ["string", "null"], pattern: "^(0x)?([0-9a-fA-F]{2}){5,32}$", default: null },
      },
    },
    /**
     * The syslog listeners' ingest: worker threads that receive (SO_REUSEPORT), journal and parse (docs/operations.md,
     * "The ingest journal"). The journal is shared among the workers (each holds its part of maxMB).
     */
    ingest: {
      type: "object",
      additionalProperties: false,
      default: {},
      properties: {
        /** Worker threads receiving syslog; null = one per core. */
        workers: { type: ["integer", "null"], minimum: 1, maximum: 64, default: null },
        /** Records a worker hands over and the store has not yet taken, before it stops reading its journal (the journal holds the rest). */
        maxInFlight: { type: "integer", minimum: 1000, maximum: 10000000, default: 50000 },
        /**
         * Niceness of the parser threads (Linux; 0 = the process's own). Above 0, when the cores are short the receiving
         * threads and the store get them first and the parsers fall behind into the journal, which they drain later.
         */
        parserNice: { type: "integer", minimum: 0, maximum: 19, default: 5 },
        /**
         * UDP sockets each worker binds on the syslog UDP port (SO_REUSEPORT), each read by a thread of its own: the kernel
         * spreads senders over all of them, so a burst from one sender fills one socket's buffer and not the others'.
         * null = enough for 8 sockets in all (4 per worker on 2 cores, 1 from 8 cores up).
         */
        udpSocketsPerWorker: { type: ["integer", "null"], minimum: 1, maximum: 16, default: null },
        journal: journalConfigSchema,
      },
    },
    /** Received events waiting for the store; past this they are dropped and counted (the receivers never wait). */
    queueSize: { type: "integer", minimum: 1000, maximum: 10000000, default: 200000 },
    /** Events written by one statement, and the longest an event waits to be written. */
    batchSize: { type: "integer", minimum: 1, maximum: 50000, default: 5000 },
    flushMs: { type: "integer", minimum: 10, maximum: 60000, default: 250 },
    /** Days of events kept (whole daily partitions are dropped). */
    retentionDays: { type: "integer", minimum: 1, maximum: 3650, default: 14 },
    /** Most HTTP ingest events in one request. */
    ingestMaxEvents: { type: "integer", minimum: 1, maximum: 10000, default: 1000 },
  },
} as const;

export type EventsConfig = ConfigOf<typeof eventsConfigSchema>;
export type EventsContext = PluginContext<EventsConfig>;

export const EVENTS_CONTEXT = pluginContextToken("events");
