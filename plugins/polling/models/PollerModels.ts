import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  MaxItems,
  MaxLength,
  Maximum,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Property,
  Required,
  Schema,
  integer,
  object,
  string,
} from "@tsed/schema";
import { MAX_SAMPLES_PER_POST } from "../poller/wire.js";
import { HOST_COUNTER_NAME, MAX_HOST_COUNTERS } from "../services/HostCounterRegistry.js";

const COUNTER = /^[0-9]{1,20}$/;
const METRIC_NAME = /^[A-Za-z_:][A-Za-z0-9_:]*$/;

// ---- host telemetry (heartbeat) -----------------------------------------------------------------

@AdditionalProperties(false)
@Description("A watched filesystem of a poller host's telemetry.")
export class DiskUsage {
  @Required() @MinLength(1) @MaxLength(200) @Description("Label of the watched filesystem") mount: string;
  @Required() @Integer() @Minimum(0) @Description("0 = capacity unknown") size_bytes: number;
  @Description("Bytes in use") @Required() @Integer() @Minimum(0) used_bytes: number;
}

@AdditionalProperties(false)
@Description("A poller host's telemetry, sent with its heartbeat.")
export class HostTelemetryBody {
  @Description("CPU use, 0 to 100; null when unknown") @Required() @Nullable(Number) @Minimum(0) @Maximum(100) cpu_pct: number | null;
  @Description("One-minute load average; null when unknown") @Required() @Nullable(Number) @Minimum(0) load1: number | null;
  @Description("null when unknown") @Required() @Nullable(Number) @Integer() @Minimum(0) mem_total_bytes: number | null;
  @Description("null when unknown") @Required() @Nullable(Number) @Integer() @Minimum(0) mem_used_bytes: number | null;
  @Description("Watched filesystems, at most 32") @Required() @CollectionOf(DiskUsage) @MaxItems(32) disks: DiskUsage[];
  @Optional()
  @Schema(object().maxProperties(MAX_HOST_COUNTERS).propertyNames(string().pattern(HOST_COUNTER_NAME)).additionalProperties(integer().minimum(0)))
  @Description("What the poller's passive receivers lost since it started, by counter name (for example events_forward_lost)")
  counters?: Record<string, number>;
}

// ---- registration and heartbeat ----------------------------------------------------------------

@AdditionalProperties(false)
@Description("Body a remote poller sends to register (POST /pollers/register).")
export class PollerRegisterBody {
  @Required()
  @MinLength(1)
  @MaxLength(100)
  @Pattern(/^[A-Za-z0-9_.:-]{1,100}$/)
  @Description("Letters, digits, _ . : - (at most 100); unique among pollers")
  poller_id: string;

  @Required()
  @MaxLength(200)
  @Description("The pool it polls: letters, digits, _, - (at most 63), else 400 invalid_pool")
  pool: string;

  @Description("The poller's software version") @Optional() @Nullable(String) @MaxLength(100) version?: string | null;

  @Optional()
  @CollectionOf(String)
  @MaxItems(32)
  @Description("Passive listeners it has bound (e.g. syslog/udp:514), recorded with a monitoring gap")
  listeners?: string[];
}

@Description("Answer to a poller's registration: its id, pool and heartbeat period (POST /pollers/register).")
export class PollerRegistered {
  @Description("The registered poller id") @Required() poller_id: string;
  @Description("The pool it polls") @Required() pool: string;
  @Required() @Integer() @Description("Seconds between heartbeats the core expects") heartbeat_secs: number;
}

@AdditionalProperties(false)
@Description("Body of a poller heartbeat: the poller host's telemetry (POST /pollers/{id}/heartbeat).")
export class PollerHeartbeatBody {
  @Optional()
  @Nullable(HostTelemetryBody)
  @Description("The poller's host telemetry (null or absent keeps the last reported)")
  telemetry?: HostTelemetryBody | null;
}

@Description("Answer to a poller heartbeat: the period of the next one (POST /pollers/{id}/heartbeat).")
export class PollerHeartbeatAck {
  @Description("Seconds between heartbeats the core expects") @Required() @Integer() heartbeat_secs: number;
}

@Description("A registered poller and whether it is online (GET /pollers).")
export class PollerView {
  @Description("The poller id it registered with") @Required() id: string;
  @Description("The pool it polls") @Required() pool: string;
  @Description("embedded: runs inside the core process; remote: a separate poller process") @Required() @Enum("embedded", "remote") kind: "embedded" | "remote";
  @Description("The poller's software version; null when it sent none") @Required() @Nullable(String) version: string | null;
  @Description("Passive listeners it has bound (e.g. syslog/udp:514)") @Required() @CollectionOf(String) listeners: string[];
  @Description("When it last registered") @Required() @Format("date-time") registered_at: string;
  @Description("Last registration or heartbeat") @Required() @Format("date-time") last_seen_at: string;
  @Required() @Description("false once silent past pluginConfig.polling.heartbeatAllowanceSecs") online: boolean;
}

// ---- samples ---------------------------------------------------------------------------------------

@AdditionalProperties(false)
@Description("One metric sample a poller measured.")
export class SampleBody {
  @Required() @Format("uuid") node_id: string;
  @Description("Metric name") @Required() @MaxLength(200) @Pattern(METRIC_NAME) metric: string;
  @Description("The measured value") @Required() value: number;
  @Description("Measurement time, Unix milliseconds") @Required() @Integer() @Minimum(0) at_unix_ms: number;
  @Description("Interface of an interface metric; null for node-level metrics")
  @Required()
  @Nullable(Number)
  @Integer()
  @Minimum(0)
  @Maximum(2147483647)
  ifindex: number | null;
  @Description("Port name when it was measured") @Required() @Nullable(String) @MaxLength(255) if_name: string | null;
  @Description("Row key of a table metric; null for whole-node or port metrics") @Required() @Nullable(Number) @Integer() @Minimum(0) @Maximum(2147483647) row:
    number | null;
  @Description("Name of that row when it was measured") @Required() @Nullable(String) @MaxLength(255) row_name: string | null;
  @Optional() @Description("Ignored: the core stamps the registered pool") pool?: string;
  @Optional() @Description("Ignored: the core stamps the poller id of the path") poller_id?: string;
  @Optional() @Description("Ignored: the body's backfill flag applies") backfill?: boolean;
}

@AdditionalProperties(false)
@Description("SNMP system facts a poller read from a node.")
export class FactsBody {
  @Required() @Format("uuid") node_id: string;
  @Description("sysDescr; null when not read") @Required() @Nullable(String) @MaxLength(4096) sys_descr: string | null;
  @Description("sysObjectID, dotted; null when not read") @Required() @Nullable(String) @MaxLength(512) sys_object_id: string | null;
  @Description("sysName; null when not read") @Required() @Nullable(String) @MaxLength(1024) sys_name: string | null;
}

@AdditionalProperties(false)
@Description("Raw interface counters as a poller read them.")
export class CountersBody {
  @Description("Raw counter value as a decimal string; null when not read") @Required() @Nullable(String) @Pattern(COUNTER) in_octets: string | null;
  @Description("Raw counter value as a decimal string; null when not read") @Required() @Nullable(String) @Pattern(COUNTER) out_octets: string | null;
  @Description("Raw counter value as a decimal string; null when not read") @Required() @Nullable(String) @Pattern(COUNTER) in_errors: string | null;
  @Description("Raw counter value as a decimal string; null when not read") @Required() @Nullable(String) @Pattern(COUNTER) out_errors: string | null;
  @Description("Raw counter value as a decimal string; null when not read") @Required() @Nullable(String) @Pattern(COUNTER) in_discards: string | null;
  @Description("Raw counter value as a decimal string; null when not read") @Required() @Nullable(String) @Pattern(COUNTER) out_discards: string | null;
}

@AdditionalProperties(false)
@Description("An interface of a node as a poller read it, with its raw counters.")
export class InterfaceUpdateBody {
  @Required() @Format("uuid") node_id: string;
  @Required() @Integer() @Minimum(0) @Maximum(2147483647) ifindex: number;
  @Description("ifName; null when not read") @Required() @Nullable(String) @MaxLength(255) if_name: string | null;
  @Description("ifAlias; null when not read") @Required() @Nullable(String) @MaxLength(255) if_alias: string | null;
  @Description("Configured speed in bits/s; null when not read") @Required() @Nullable(Number) @Minimum(0) if_speed_bps: number | null;
  @Description("ifOperStatus is up(1); null when not read") @Required() @Nullable(Boolean) oper_up: boolean | null;
  @Description("Width of the counters read: 32 or 64 bits") @Required() @Enum(32, 64) counter_bits: 32 | 64;
  @Required() @Property(CountersBody) counters: CountersBody;
  @Description("sysUpTime when the counters were read, hundredths of a second; null when not read")
  @Required()
  @Nullable(Number)
  @Integer()
  @Minimum(0)
  uptime_ticks: number | null;
  @Description("Read time, Unix milliseconds") @Required() @Integer() @Minimum(0) at_unix_ms: number;
}

@AdditionalProperties(false)
@Description("Whether a node answered a poller's reachability probe.")
export class ReachabilityBody {
  @Required() @Format("uuid") node_id: string;
  @Description("Whether the node answered") @Required() reachable: boolean;
  @Description("The probe used") @Required() @Enum("icmp", "snmp", "tcp") method: "icmp" | "snmp" | "tcp";
  @Description("Probe time, Unix milliseconds") @Required() @Integer() @Minimum(0) at_unix_ms: number;
}

@AdditionalProperties(false)
@Description("What a poller uploads after polling: samples, facts, interface counters and reachability (POST /pollers/{id}/samples).")
export class SamplesBody {
  @Description("Metric samples") @Required() @CollectionOf(SampleBody) @MaxItems(MAX_SAMPLES_PER_POST) samples: SampleBody[];
  @Description("SNMP system facts read") @Optional() @CollectionOf(FactsBody) @MaxItems(MAX_SAMPLES_PER_POST) facts?: FactsBody[];
  @Description("Interfaces read, with raw counters")
  @Optional()
  @CollectionOf(InterfaceUpdateBody)
  @MaxItems(MAX_SAMPLES_PER_POST)
  interfaces?: InterfaceUpdateBody[];
  @Description("Reachability probe results") @Optional() @CollectionOf(ReachabilityBody) @MaxItems(MAX_SAMPLES_PER_POST) reachability?: ReachabilityBody[];
  @Required() @Description("Samples a poller buffered while cut off from the core: stored, never alerted on") backfill: boolean;
}

@Description("Answer to a poller's samples upload (POST /pollers/{id}/samples).")
export class SamplesAck {
  @Description("Always true: failures answer the error envelope") @Required() ok: boolean;
  @Required() @Integer() @Description("Samples in the request") samples: number;
}

// ---- assignment (PollTarget, secrets included) ----------------------------------------------------

@Description("The SNMP credential a poller uses for a node of its assignment.")
export class SnmpCredentialView {
  @Description("SNMP version") @Required() @Enum("1", "2c", "3") version: "1" | "2c" | "3";
  @Description("Community string (v1, v2c)") @Optional() community?: string;
  @Description("USM user name (v3)") @Optional() user?: string;
  @Description("USM security level (v3)") @Optional() @Enum("noAuthNoPriv", "authNoPriv", "authPriv") security_level?:
    "noAuthNoPriv" | "authNoPriv" | "authPriv";
  @Description("Authentication protocol (v3, authNoPriv and authPriv)") @Optional() auth_protocol?: string;
  @Description("Authentication passphrase (v3, authNoPriv and authPriv)") @Optional() auth_key?: string;
  @Description("Privacy protocol (v3, authPriv)") @Optional() priv_protocol?: string;
  @Description("Privacy passphrase (v3, authPriv)") @Optional() priv_key?: string;
}

@Description("An OID a poller reads on each poll of a node, from the node's collection templates.")
export class TemplateItemView {
  @Description("The collection template item") @Required() id: string;
  @Description("Metric the values are stored under") @Required() metric_name: string;
  @Description("gauge: stored as read; counter: turned into a per-second rate") @Required() @Enum("gauge", "counter") metric_kind: "gauge" | "counter";
  @Description("Dotted OID read") @Required() oid: string;
  @Description("scalar: one GET of oid; table: a walk of the column oid, one value per row") @Required() @Enum("scalar", "table") collection:
    "scalar" | "table";
}

@Description("The HTTP status a URL check accepts.")
export class ExpectedStatusView {
  @Description("two_xx: any 2xx; exact: code; range: min to max") @Required() @Enum("two_xx", "exact", "range") kind: "two_xx" | "exact" | "range";
  @Description("kind exact only: the one accepted status code") @Optional() @Integer() code?: number;
  @Description("kind range only: lowest accepted status code") @Optional() @Integer() min?: number;
  @Description("kind range only: highest accepted status code") @Optional() @Integer() max?: number;
}

@Description("How a URL check matches the response body.")
export class BodyMatchView {
  @Description("contains, not_contains or regex") @Required() @Enum("contains", "not_contains", "regex") mode: "contains" | "not_contains" | "regex";
  @Description("Text to look for, or a regular expression (mode regex)") @Required() pattern: string;
}

@Description("A rule of a URL check that records one number of a JSON response as a metric.")
export class JsonExtractView {
  @Description("Metric name the value is recorded as") @Required() metric: string;
  @Description("Dot-separated path to one number in the JSON body") @Required() path: string;
}

@Description("The HTTP authentication a URL check sends.")
export class HttpAuthView {
  @Description("basic: username and password; bearer: token") @Required() @Enum("basic", "bearer") mode: "basic" | "bearer";
  @Description("basic only") @Optional() username?: string;
  @Description("basic only") @Optional() password?: string;
  @Description("bearer only") @Optional() token?: string;
}

@Description("The URL check a poller runs against a node of its assignment.")
export class UrlCheckSpecView {
  @Description("The URL requested") @Required() url: string;
  @Description("HTTP method") @Required() method: string;
  @Description("Request timeout, milliseconds") @Required() @Integer() timeout_ms: number;
  @Description("Whether redirects are followed") @Required() follow_redirects: boolean;
  @Description("Whether the server's TLS certificate is verified") @Required() verify_tls: boolean;
  @Required() @Property(ExpectedStatusView) expected_status: ExpectedStatusView;
  @Required() @Nullable(BodyMatchView) body_match: BodyMatchView | null;
  @Description("Most body bytes read; the body is only read when body_match or json_extract is set") @Required() @Integer() body_max_bytes: number;
  @Description("Numbers of a JSON body recorded as metrics") @Required() @CollectionOf(JsonExtractView) json_extract: JsonExtractView[];
  @Description("HTTP authentication from the check's credential; null = none") @Required() @Nullable(HttpAuthView) auth: HttpAuthView | null;
}

@Description("The DNS check a poller runs for a node of its assignment.")
export class DnsCheckSpecView {
  @Description("DNS name to resolve") @Required() name: string;
  @Description("Record type asked") @Required() record_type: string;
  @Description("Resolver address; null = the system resolver") @Required() @Nullable(String) resolver_ip: string | null;
  @Description("Resolver port") @Required() @Integer() resolver_port: number;
  @Description("Timeout of the lookup, milliseconds") @Required() @Integer() timeout_ms: number;
  @Description("Most CNAME hops followed") @Required() @Integer() max_depth: number;
}

@Description("A node a poller must poll, with what to poll on it (GET /pollers/{id}/assignment).")
export class PollTargetView {
  @Required() @Format("uuid") node_id: string;
  @Description("The node's name") @Required() name: string;
  @Description("IP address to poll") @Required() address: string;
  @Description("UDP port of the node's SNMP agent") @Required() @Integer() snmp_port: number;
  @Description("The node's effective pool") @Required() pool: string;
  @Description("Seconds between polls of the node") @Required() @Integer() interval_secs: number;
  @Required() @Nullable(SnmpCredentialView) @Description("Null: no SNMP credential (liveness and checks only)") snmp: SnmpCredentialView | null;
  @Description("OIDs read on each poll, from the collection templates of the node's profile")
  @Required()
  @CollectionOf(TemplateItemView)
  templates: TemplateItemView[];
  @Description("The node's URL check; null = none") @Required() @Nullable(UrlCheckSpecView) url_check: UrlCheckSpecView | null;
  @Description("The node's DNS check; null = none") @Required() @Nullable(DnsCheckSpecView) dns_check: DnsCheckSpecView | null;
}
