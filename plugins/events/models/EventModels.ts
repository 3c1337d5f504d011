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

export class EventView {
  @Required() id: string;
  @Required() @Description("when the service received it (RFC 3339, microseconds)") received_at: string;
  @Required() @Enum("syslog", "trap") kind: string;
  @Required() @Enum("udp", "tcp", "tls", "http") transport: string;
  @Required() listener: string;
  @Required() @Nullable(String) source_ip: string | null;
  @Required() @Nullable(String) source_id: string | null;
  @Required() @Nullable(String) node_id: string | null;
  @Required() @Nullable(Number) @Description("syslog severity 0 (emergency) to 7 (debug)") severity: number | null;
  @Required() @Nullable(Number) facility: number | null;
  @Required() @Nullable(String) host: string | null;
  @Required() @Nullable(String) app: string | null;
  @Required() @Nullable(String) msgid: string | null;
  @Required() message: string;
  @Required() @Nullable(String) trap_oid: string | null;
  @Required()
  @Any("object", "null")
  @Description("syslog: timestamp, procid, structured_data, format, cisco; trap: version, pdu, user, uptime, varbinds, v1")
  data: Record<string, unknown> | null;
  @Required() @Nullable(String) @Description("the message as received, when it did not parse") raw: string | null;
  @Required() malformed: boolean;
  @Required() @Enum(...ACTIONS) action: string;
  @Required() @Nullable(String) rule_id: string | null;
}

export class TimeBucket {
  @Required() @Integer() ts_unix_ms: number;
  @Required() @Integer() count: number;
  @Required() @Any("object", "null") @Description("counts per kind when split=kind, else null") by_kind: Record<string, number> | null;
}

/** One answer row of GET /events/stats: a time bucket (group_by=time) or a count bucket (the other group_by values). */
export class StatsBucket {
  @Optional() @Integer() @Description("group_by=time: the bucket's start") ts_unix_ms?: number;
  @Required() @Integer() count: number;
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
export class IngestEvent {
  @Required() @MinLength(1) @MaxLength(8192) message: string;
  @Optional() @Nullable(Number) @Integer() @Minimum(0) @Maximum(7) @Description("syslog severity 0-7") severity?: number | null;
  @Optional() @Nullable(String) @MaxLength(255) host?: string | null;
  @Optional() @Nullable(String) @MaxLength(48) app?: string | null;
  @Optional() @Nullable(String) @MaxLength(32) msgid?: string | null;
  @Optional() @Nullable(String) @MaxLength(64) @Description("the sender's address, for attribution when the source names no node") source_ip?: string | null;
  @Optional() @Any("object", "null") @Description("any JSON object, stored with the event (at most 16 KiB)") data?: Record<string, unknown> | null;
}

@AdditionalProperties(false)
export class IngestBody {
  @Required() @CollectionOf(IngestEvent) @MaxItems(10000) events: IngestEvent[];
}

export class IngestResult {
  @Required() @Integer() accepted: number;
  @Required() @Integer() @Description("refused because the queue was full") dropped: number;
}

/** What a remote poller forwards: its receivers' records as they came (each is checked and made storable by the core). */
@AdditionalProperties(false)
export class ForwardedBody {
  @Required() @MinLength(1) @MaxLength(100) poller_id: string;
  @Optional()
  @Pattern(POOL_NAME_PATTERN)
  @Description("the poller's pool: a record is attributed to a node of that pool first (two sites may reuse an address)")
  pool?: string;
  @Required() @CollectionOf(Object) @MaxItems(2000) events: Record<string, unknown>[];
}

export class EventForwardedResult {
  @Required() @Integer() accepted: number;
  @Required() @Integer() @Description("not receiver records, or refused because the queue was full") dropped: number;
}

/** A v3 trap user for a remote poller's trap listener: the keys sealed with the core's secret key. */
export class PollerTrapUser {
  @Required() name: string;
  @Required() @Enum("noAuthNoPriv", "authNoPriv", "authPriv") level: string;
  @Required() @Nullable(String) @Enum("md5", "sha", "sha224", "sha256", "sha384", "sha512", null) auth_protocol: string | null;
  @Required() @Nullable(String) @Description("sealed; opened only with the core's NMS_SECRET_KEY") auth_key_sealed: string | null;
  @Required() @Nullable(String) @Enum("des", "aes", "aes192", "aes256", null) priv_protocol: string | null;
  @Required() @Nullable(String) @Description("sealed; opened only with the core's NMS_SECRET_KEY") priv_key_sealed: string | null;
}

export class PollerTrapUsers {
  @Required() @CollectionOf(PollerTrapUser) users: PollerTrapUser[];
  @Required() @Integer() @Description("how often a poller asks again (traps.v3RefreshMs)") refresh_ms: number;
}
