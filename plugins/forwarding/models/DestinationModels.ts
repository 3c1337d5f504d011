import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Example,
  Integer,
  MaxLength,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Property,
  Required,
} from "@tsed/schema";
import { FILTER_VALUE_MAX } from "../lib/filter.js";
import {
  DEST_KINDS,
  FILTER_FIELDS,
  FILTER_OPS,
  SOURCE_KINDS,
  type DestKind,
  type FilterField,
  type FilterOp,
  type PoolDestinationWire,
  type SourceKind,
} from "../lib/types.js";

/**
 * A filter condition. `field` and `op` are checked by the service (400 invalid_filter, with which pairings apply and
 * how `value` is read per field: plugins/forwarding/README.md, "Filters"), so a bad one answers that code.
 */
@AdditionalProperties(false)
@Description("A condition of a forwarding filter.")
export class FilterConditionBody {
  @Required() @MinLength(1) @MaxLength(32) @Example("severity") @Description(`one of ${FILTER_FIELDS.join(", ")}`) field: string;
  @Required() @MinLength(1) @MaxLength(32) @Example("lte") @Description(`one of ${FILTER_OPS.join(", ")}; which apply depends on the field`) op: string;
  @Required()
  @MaxLength(FILTER_VALUE_MAX)
  @Example("3")
  @Description("always a string, read per field type (integer, address, prefix list, OID, regex, comma-separated list)")
  value: string;
}

@AdditionalProperties(false)
@Description("Which records of the stream a destination forwards.")
export class FilterBody {
  @Optional() @Example("all") @Description("all (default): every condition holds; any: at least one") mode?: string;
  @Optional() @CollectionOf(FilterConditionBody) @Description("at most 32; empty matches everything") conditions?: FilterConditionBody[];
}

/** The spec's forwarding destination body (create and the full-body update). */
@AdditionalProperties(false)
@Description("Body of POST /forwarding/destinations and of the full-document PUT: the spec's forwarding destination.")
export class DestinationBody {
  @Required() @MinLength(1) @MaxLength(120) @Description("unique regardless of case") name: string;
  @Description("syslog_udp, syslog_tcp, syslog_tls, snmp_trap_udp, flow_udp or warehouse") @Required() @Enum(...DEST_KINDS) dest_kind: DestKind;
  @Required() @Enum(...SOURCE_KINDS) @Description("the received stream it tees; must fit dest_kind (400 kind_mismatch)") source_kind: SourceKind;
  @Required() @Example("127.0.0.1:514") @Description("host:port of the collector: a hostname, an IPv4 address or [IPv6]; port 1 to 65535") target: string;
  @Optional() @Description("default true") enabled?: boolean;
  @Optional() @Nullable(String) @Description("only what the pollers of this pool received; null or omitted = every pool") pool?: string | null;
  @Optional() @Nullable(Number) @Integer() @Description("messages per second, at least 1; null or omitted = no ceiling") rate_limit_per_sec?: number | null;
  @Optional() @Description("relay the original bytes (default true) instead of re-rendering from the parsed fields") verbatim?: boolean;
  @Optional()
  @Nullable(String)
  @MaxLength(262144)
  @Description("PEM certificates trusted in addition to the system roots (syslog_tls, warehouse); not secret; empty or null clears it")
  ca_cert?: string | null;
  @Optional()
  @Nullable(String)
  @MinLength(1)
  @MaxLength(255)
  @Description("SNMP community of re-encoded traps (snmp_trap_udp only); sealed, never answered; on update omitted keeps it, null clears it")
  community?: string | null;
  @Optional()
  @Nullable(String)
  @MinLength(2)
  @MaxLength(65536)
  @Description(
    "service-account key file (JSON) of a warehouse destination; sealed, never answered; omitted or null on create = the platform's ambient identity; on update omitted keeps it, null clears it (ambient identity)",
  )
  service_account_json?: string | null;
  @Optional() @Nullable(FilterBody) @Description("omitted or null = forward the whole stream") filter?: FilterBody | null;
}

@Description("A condition of a forwarding destination's filter.")
export class FilterConditionView {
  @Description("Record field tested") @Required() field: string;
  @Description("Comparison applied") @Required() op: string;
  @Description("Operand, parsed per field type") @Required() value: string;
}

@Description("The filter of a forwarding destination.")
export class FilterView {
  @Description("all: every condition must match; any: one is enough") @Required() @Enum("all", "any") mode: string;
  @Description("Empty matches everything") @Required() @CollectionOf(FilterConditionView) conditions: FilterConditionView[];
}

/** A destination as answered: the body without its secrets, and what the secrets' state is. */
@Description("A forwarding destination without its secrets (GET /forwarding/destinations, GET /forwarding/destinations/{id}).")
export class DestinationView {
  @Required() id: string;
  @Required() name: string;
  @Description("syslog_udp, syslog_tcp, syslog_tls, snmp_trap_udp, flow_udp or warehouse") @Required() @Enum(...DEST_KINDS) dest_kind: string;
  @Description("Stream it tees: syslog, trap or flow") @Required() @Enum(...SOURCE_KINDS) source_kind: string;
  @Description("host:port of the collector") @Required() target: string;
  @Description("Disabled destinations forward nothing") @Required() enabled: boolean;
  @Description("Only this poller pool's stream; null = every pool") @Required() @Nullable(String) pool: string | null;
  @Description("Messages-per-second ceiling; null = none") @Required() @Nullable(Number) @Integer() rate_limit_per_sec: number | null;
  @Description("Relays the original bytes instead of re-rendering from parsed fields") @Required() verbatim: boolean;
  @Description("PEM certificates trusted for a TLS destination in addition to system roots; null = none") @Required() @Nullable(String) ca_cert: string | null;
  @Description("null = the whole stream is forwarded") @Required() @Nullable(FilterView) filter: FilterView | null;
  @Required() @Description("a community is stored (sealed)") has_community: boolean;
  @Required() @Description("a service-account key is stored (sealed)") has_service_account: boolean;
  @Required() @Description("a warehouse destination without a key: it authenticates as the platform's ambient identity") ambient_identity: boolean;
  @Property()
  @Nullable(String)
  @Description("secret_missing: imported from a bundle without the secret it had; it stays disabled until the secret is set")
  disabled_reason: string | null;
  @Required() created_at: string;
  @Required() updated_at: string;
}

/** A poller that tees a pool destination, as it last reported. */
@Description("A poller that tees a pool destination, as it last reported.")
export class PollerTeeView {
  @Description("The poller that reported") @Required() poller_id: string;
  @Required() @Description("when its report came (RFC 3339)") reported_at: string;
  @Description("State of its connection to the target") @Required() connection: string;
  @Description("Class of its last error; null = none") @Property() @Nullable(String) last_error_class: string | null;
}

/** This replica's counters for a destination since it started. */
@Description("A forwarding destination's counters on this replica since it started (GET /forwarding/destinations/{id}/status).")
export class DestinationStatusView {
  @Required() id: string;
  @Required() name: string;
  @Description("Records sent") @Required() @Integer() forwarded: number;
  @Required() @Integer() @Description("records the filter did not pass") dropped_filter: number;
  @Required() @Integer() @Description("records over rate_limit_per_sec") dropped_rate_limit: number;
  @Required() @Integer() @Description("records dropped from a full send queue (the oldest go first)") dropped_queue: number;
  @Required()
  @Integer()
  @Description("messages lost to an error (a frame a broken connection lost, a failed send, a refused row); never a connect attempt")
  send_errors: number;
  @Required()
  @Integer()
  @Description("failures of the connection itself (connect refused or timed out, TLS refused, reset, a retried warehouse request); not messages")
  connection_errors: number;
  @Property() @Nullable(String) @Description("connect_refused, timeout, tls, dns, reset, send; never a message") last_error_class: string | null;
  @Description("When the last error happened; null = none yet") @Property() @Nullable(String) last_error_at: string | null;
  @Description("State of the connection to the target")
  @Required()
  @Enum("idle", "ready", "connecting", "connected", "disconnected", "disabled", "not_built")
  connection: string;
  @Required() @Integer() @Description("messages waiting in the send queue (syslog_tcp, syslog_tls)") queued: number;
  @Required()
  @CollectionOf(PollerTeeView)
  @Description("the pollers that tee it (its pool's, or every pool's for a destination without one) and reported lately: their counters are summed above")
  pollers: PollerTeeView[];
}

/** What a remote poller sends with each sync: its counters per destination it tees. */
@AdditionalProperties(false)
@Description("Body a remote poller sends with each forwarding sync: its counters per destination (POST /forwarding/pollers/sync).")
export class PollerSyncBody {
  @Description("The syncing poller") @Required() @MinLength(1) @MaxLength(100) @Pattern(/^[A-Za-z0-9_.:-]{1,100}$/) poller_id: string;
  @Description("The poller's pool") @Required() @MinLength(1) @MaxLength(63) @Pattern(/^[A-Za-z0-9_-]{1,63}$/) pool: string;
  @Optional() @Property(Object) @Description("destination id → its counters on this poller (as the status route answers them)") counters?: Record<
    string,
    unknown
  >;
}

/** What a poller gets back: its pool's destinations (secrets sealed) and how often to ask again. */
@Description("Answer to a poller's forwarding sync: its pool's destinations, secrets sealed, and when to ask again (POST /forwarding/pollers/sync).")
export class PollerSyncResult {
  @Description("The destinations the poller tees, secrets sealed") @Required() @CollectionOf(Object) destinations: PoolDestinationWire[];
  @Description("Milliseconds until the poller should sync again") @Required() @Integer() reload_ms: number;
}

/** The bundle's `forward_destination` record: the body without secrets, plus id and had_secret. */
export interface ForwardDestinationRecord {
  id: string;
  name: string;
  dest_kind: DestKind;
  source_kind: SourceKind;
  target: string;
  enabled: boolean;
  pool: string | null;
  rate_limit_per_sec: number | null;
  verbatim: boolean;
  ca_cert: string | null;
  filter: { mode: "all" | "any"; conditions: { field: FilterField; op: FilterOp; value: string }[] } | null;
  had_secret: boolean;
}
