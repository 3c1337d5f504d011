import {
  AdditionalProperties,
  Any,
  CollectionOf,
  Description,
  Enum,
  Integer,
  Maximum,
  MaxItems,
  MaxLength,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Required,
} from "@tsed/schema";
import { POOL_NAME_PATTERN } from "../../../core/index.js";

/** What happened to an event when the rules saw it. */
export const ACTIONS = ["unmatched", "counted", "fired", "cleared", "suppressed"] as const;
export type EventAction = (typeof ACTIONS)[number];

export const GROUP_BY = ["kind", "action", "trap", "source", "time"] as const;

@Description("A stored passive event: a syslog message, a trap or an ingested event (GET /events).")
export class EventView {
  @Required() id: string;
  @Required() @Description("when the service received it (RFC 3339, microseconds)") received_at: string;
  @Description("syslog or trap") @Required() @Enum("syslog", "trap") kind: string;
  @Description("How it arrived: udp, tcp, tls or http (ingest)") @Required() @Enum("udp", "tcp", "tls", "http") transport: string;
  @Description("The listener's name (syslog.udp, traps.udp, or an ingest source id)") @Required() listener: string;
  @Description("The sender's address; null when unknown") @Required() @Nullable(String) source_ip: string | null;
  @Description("The event source it was attributed to; null = none") @Required() @Nullable(String) source_id: string | null;
  @Description("The node it was attributed to; null = none") @Required() @Nullable(String) node_id: string | null;
  @Required() @Nullable(Number) @Description("syslog severity 0 (emergency) to 7 (debug)") severity: number | null;
  @Description("syslog facility 0 to 23; null when absent") @Required() @Nullable(Number) facility: number | null;
  @Description("Host name the sender gave (syslog HOSTNAME); null when absent") @Required() @Nullable(String) host: string | null;
  @Description("Application name (syslog APP-NAME); null when absent") @Required() @Nullable(String) app: string | null;
  @Description("Message type (syslog MSGID); null when absent") @Required() @Nullable(String) msgid: string | null;
  @Description("The message text (for a trap, a rendering of it)") @Required() message: string;
  @Description("The trap's OID; null for syslog") @Required() @Nullable(String) trap_oid: string | null;
  @Required()
  @Any("object", "null")
  @Description("syslog: timestamp, procid, structured_data, format, cisco; trap: version, pdu, user, uptime, varbinds, v1")
  data: Record<string, unknown> | null;
  @Required() @Nullable(String) @Description("the message as received, when it did not parse") raw: string | null;
  @Description("The message did not parse; raw holds it") @Required() malformed: boolean;
  @Description("What the rules did with it: unmatched, counted, fired, cleared or suppressed") @Required() @Enum(...ACTIONS) action: string;
  @Description("The event rule that matched; null = none") @Required() @Nullable(String) rule_id: string | null;
  @Optional()
  @Nullable(String)
  @Description("GET /events: the name of the node it was attributed to (null = none); absent from the live stream")
  node_name?: string | null;
  @Optional()
  @Nullable(String)
  @Description("GET /events: the trap OID's name from GET /events/trap-names (built-in or user-added); null = unknown or not a trap")
  trap_name?: string | null;
}

export class TimeBucket {
  @Required() @Integer() ts_unix_ms: number;
  @Required() @Integer() count: number;
  @Required() @Any("object", "null") @Description("counts per kind when split=kind, else null") by_kind: Record<string, number> | null;
}

/** One answer row of GET /events/stats: a time bucket (group_by=time) or a count bucket (the other group_by values). */
@Description("One row of GET /events/stats: a time bucket (group_by=time) or a count bucket.")
export class StatsBucket {
  @Optional() @Integer() @Description("group_by=time: the bucket's start") ts_unix_ms?: number;
  @Description("Events in the bucket") @Required() @Integer() count: number;
  @Optional() @Any("object", "null") @Description("group_by=time: counts per kind when split=kind, else null") by_kind?: Record<string, number> | null;
  @Optional() @Description("group_by=kind|action|trap|source: the kind, action, trap OID, or source (node name, else the sender's address)") key?: string;
  @Optional() @Any("string", "null") @Description("group_by=source: the node, when attributed") node_id?: string | null;
}

export class CountBucket {
  @Required() @Description("the kind, action, trap OID, or source (node name, else the sender's address)") key: string;
  @Required() @Nullable(String) @Description("group_by=source: the node, when attributed") node_id: string | null;
  @Required() @Integer() count: number;
}

/** One event posted to an HTTP ingest source. */
@AdditionalProperties(false)
@Description("One event posted to an HTTP ingest source.")
export class IngestEvent {
  @Description("The message text") @Required() @MinLength(1) @MaxLength(8192) message: string;
  @Optional() @Nullable(Number) @Integer() @Minimum(0) @Maximum(7) @Description("syslog severity 0-7") severity?: number | null;
  @Description("Host name the event is about") @Optional() @Nullable(String) @MaxLength(255) host?: string | null;
  @Description("Application name") @Optional() @Nullable(String) @MaxLength(48) app?: string | null;
  @Description("Message type identifier") @Optional() @Nullable(String) @MaxLength(32) msgid?: string | null;
  @Optional() @Nullable(String) @MaxLength(64) @Description("the sender's address, for attribution when the source names no node") source_ip?: string | null;
  @Optional() @Any("object", "null") @Description("any JSON object, stored with the event (at most 16 KiB)") data?: Record<string, unknown> | null;
}

@AdditionalProperties(false)
@Description("Body of POST /events/ingest: events posted to an HTTP ingest source.")
export class IngestBody {
  @Description("At most 10000 events") @Required() @CollectionOf(IngestEvent) @MaxItems(10000) events: IngestEvent[];
}

@Description("Answer to an HTTP event ingest (POST /events/ingest).")
export class IngestResult {
  @Description("Events queued for storage") @Required() @Integer() accepted: number;
  @Required() @Integer() @Description("refused because the queue was full") dropped: number;
}

/** What a remote poller forwards: its receivers' records as they came (each is checked and made storable by the core). */
@AdditionalProperties(false)
@Description("Events a remote poller's receivers got, forwarded as they came (POST /events/forwarded).")
export class ForwardedBody {
  @Description("The forwarding poller") @Required() @MinLength(1) @MaxLength(100) poller_id: string;
  @Optional()
  @Pattern(POOL_NAME_PATTERN)
  @Description("the poller's pool: a record is attributed to a node of that pool first (two sites may reuse an address)")
  pool?: string;
  @Description("Receiver records, at most 2000") @Required() @CollectionOf(Object) @MaxItems(2000) events: Record<string, unknown>[];
}

@Description("Answer to a poller forwarding events (POST /events/forwarded).")
export class EventForwardedResult {
  @Description("Records queued for storage") @Required() @Integer() accepted: number;
  @Required() @Integer() @Description("not receiver records, or refused because the queue was full") dropped: number;
}

/** A v3 trap user for a remote poller's trap listener: the keys sealed with the core's secret key. */
@Description("An SNMPv3 trap user for a remote poller's trap listener, its keys sealed with the core's secret key.")
export class PollerTrapUser {
  @Description("USM user name") @Required() name: string;
  @Description("USM security level") @Required() @Enum("noAuthNoPriv", "authNoPriv", "authPriv") level: string;
  @Description("Authentication protocol; null for noAuthNoPriv")
  @Required()
  @Nullable(String)
  @Enum("md5", "sha", "sha224", "sha256", "sha384", "sha512", null)
  auth_protocol: string | null;
  @Required() @Nullable(String) @Description("sealed; opened only with the core's NMS_SECRET_KEY") auth_key_sealed: string | null;
  @Description("Privacy protocol; null unless authPriv") @Required() @Nullable(String) @Enum("des", "aes", "aes192", "aes256", null) priv_protocol:
    string | null;
  @Required() @Nullable(String) @Description("sealed; opened only with the core's NMS_SECRET_KEY") priv_key_sealed: string | null;
}

@Description("The core's SNMPv3 trap users for a poller's trap listener (GET /events/pollers/trap-users).")
export class PollerTrapUsers {
  @Description("Every v3 trap user of the core") @Required() @CollectionOf(PollerTrapUser) users: PollerTrapUser[];
  @Required() @Integer() @Description("how often a poller asks again (traps.v3RefreshMs)") refresh_ms: number;
}
