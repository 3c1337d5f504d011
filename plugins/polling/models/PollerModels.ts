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
export class DiskUsage {
  @Required() @MinLength(1) @MaxLength(200) @Description("Label of the watched filesystem") mount: string;
  @Required() @Integer() @Minimum(0) @Description("0 = capacity unknown") size_bytes: number;
  @Required() @Integer() @Minimum(0) used_bytes: number;
}

@AdditionalProperties(false)
export class HostTelemetryBody {
  @Required() @Nullable(Number) @Minimum(0) @Maximum(100) cpu_pct: number | null;
  @Required() @Nullable(Number) @Minimum(0) load1: number | null;
  @Required() @Nullable(Number) @Integer() @Minimum(0) mem_total_bytes: number | null;
  @Required() @Nullable(Number) @Integer() @Minimum(0) mem_used_bytes: number | null;
  @Required() @CollectionOf(DiskUsage) @MaxItems(32) disks: DiskUsage[];
  @Optional()
  @Schema(object().maxProperties(MAX_HOST_COUNTERS).propertyNames(string().pattern(HOST_COUNTER_NAME)).additionalProperties(integer().minimum(0)))
  @Description("What the poller's passive receivers lost since it started, by counter name (for example events_forward_lost)")
  counters?: Record<string, number>;
}

// ---- registration and heartbeat ----------------------------------------------------------------

@AdditionalProperties(false)
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

  @Optional() @Nullable(String) @MaxLength(100) version?: string | null;

  @Optional()
  @CollectionOf(String)
  @MaxItems(32)
  @Description("Passive listeners it has bound (e.g. syslog/udp:514), recorded with a monitoring gap")
  listeners?: string[];
}

export class PollerRegistered {
  @Required() poller_id: string;
  @Required() pool: string;
  @Required() @Integer() @Description("Seconds between heartbeats the core expects") heartbeat_secs: number;
}

@AdditionalProperties(false)
export class PollerHeartbeatBody {
  @Optional()
  @Nullable(HostTelemetryBody)
  @Description("The poller's host telemetry (null or absent keeps the last reported)")
  telemetry?: HostTelemetryBody | null;
}

export class PollerHeartbeatAck {
  @Required() @Integer() heartbeat_secs: number;
}

export class PollerView {
  @Required() id: string;
  @Required() pool: string;
  @Required() @Enum("embedded", "remote") kind: "embedded" | "remote";
  @Required() @Nullable(String) version: string | null;
  @Required() @CollectionOf(String) listeners: string[];
  @Required() @Format("date-time") registered_at: string;
  @Required() @Format("date-time") last_seen_at: string;
  @Required() @Description("false once silent past pluginConfig.polling.heartbeatAllowanceSecs") online: boolean;
}

// ---- samples ---------------------------------------------------------------------------------------

@AdditionalProperties(false)
export class SampleBody {
  @Required() @Format("uuid") node_id: string;
  @Required() @MaxLength(200) @Pattern(METRIC_NAME) metric: string;
  @Required() value: number;
  @Required() @Integer() @Minimum(0) at_unix_ms: number;
  @Required() @Nullable(Number) @Integer() @Minimum(0) @Maximum(2147483647) ifindex: number | null;
  @Required() @Nullable(String) @MaxLength(255) if_name: string | null;
  @Required() @Nullable(Number) @Integer() @Minimum(0) @Maximum(2147483647) row: number | null;
  @Required() @Nullable(String) @MaxLength(255) row_name: string | null;
  @Optional() @Description("Ignored: the core stamps the registered pool") pool?: string;
  @Optional() @Description("Ignored: the core stamps the poller id of the path") poller_id?: string;
  @Optional() @Description("Ignored: the body's backfill flag applies") backfill?: boolean;
}

@AdditionalProperties(false)
export class FactsBody {
  @Required() @Format("uuid") node_id: string;
  @Required() @Nullable(String) @MaxLength(4096) sys_descr: string | null;
  @Required() @Nullable(String) @MaxLength(512) sys_object_id: string | null;
  @Required() @Nullable(String) @MaxLength(1024) sys_name: string | null;
}

@AdditionalProperties(false)
export class CountersBody {
  @Required() @Nullable(String) @Pattern(COUNTER) in_octets: string | null;
  @Required() @Nullable(String) @Pattern(COUNTER) out_octets: string | null;
  @Required() @Nullable(String) @Pattern(COUNTER) in_errors: string | null;
  @Required() @Nullable(String) @Pattern(COUNTER) out_errors: string | null;
  @Required() @Nullable(String) @Pattern(COUNTER) in_discards: string | null;
  @Required() @Nullable(String) @Pattern(COUNTER) out_discards: string | null;
}

@AdditionalProperties(false)
export class InterfaceUpdateBody {
  @Required() @Format("uuid") node_id: string;
  @Required() @Integer() @Minimum(0) @Maximum(2147483647) ifindex: number;
  @Required() @Nullable(String) @MaxLength(255) if_name: string | null;
  @Required() @Nullable(String) @MaxLength(255) if_alias: string | null;
  @Required() @Nullable(Number) @Minimum(0) if_speed_bps: number | null;
  @Required() @Nullable(Boolean) oper_up: boolean | null;
  @Required() @Enum(32, 64) counter_bits: 32 | 64;
  @Required() @Property(CountersBody) counters: CountersBody;
  @Required() @Nullable(Number) @Integer() @Minimum(0) uptime_ticks: number | null;
  @Required() @Integer() @Minimum(0) at_unix_ms: number;
}

@AdditionalProperties(false)
export class ReachabilityBody {
  @Required() @Format("uuid") node_id: string;
  @Required() reachable: boolean;
  @Required() @Enum("icmp", "snmp", "tcp") method: "icmp" | "snmp" | "tcp";
  @Required() @Integer() @Minimum(0) at_unix_ms: number;
}

@AdditionalProperties(false)
export class SamplesBody {
  @Required() @CollectionOf(SampleBody) @MaxItems(MAX_SAMPLES_PER_POST) samples: SampleBody[];
  @Optional() @CollectionOf(FactsBody) @MaxItems(MAX_SAMPLES_PER_POST) facts?: FactsBody[];
  @Optional() @CollectionOf(InterfaceUpdateBody) @MaxItems(MAX_SAMPLES_PER_POST) interfaces?: InterfaceUpdateBody[];
  @Optional() @CollectionOf(ReachabilityBody) @MaxItems(MAX_SAMPLES_PER_POST) reachability?: ReachabilityBody[];
  @Required() @Description("Samples a poller buffered while cut off from the core: stored, never alerted on") backfill: boolean;
}

export class SamplesAck {
  @Required() ok: boolean;
  @Required() @Integer() @Description("Samples in the request") samples: number;
}

// ---- assignment (PollTarget, secrets included) ----------------------------------------------------

export class SnmpCredentialView {
  @Required() @Enum("1", "2c", "3") version: "1" | "2c" | "3";
  @Optional() community?: string;
  @Optional() user?: string;
  @Optional() @Enum("noAuthNoPriv", "authNoPriv", "authPriv") security_level?: "noAuthNoPriv" | "authNoPriv" | "authPriv";
  @Optional() auth_protocol?: string;
  @Optional() auth_key?: string;
  @Optional() priv_protocol?: string;
  @Optional() priv_key?: string;
}

export class TemplateItemView {
  @Required() id: string;
  @Required() metric_name: string;
  @Required() @Enum("gauge", "counter") metric_kind: "gauge" | "counter";
  @Required() oid: string;
  @Required() @Enum("scalar", "table") collection: "scalar" | "table";
}

export class ExpectedStatusView {
  @Required() @Enum("two_xx", "exact", "range") kind: "two_xx" | "exact" | "range";
  @Optional() @Integer() code?: number;
  @Optional() @Integer() min?: number;
  @Optional() @Integer() max?: number;
}

export class BodyMatchView {
  @Required() @Enum("contains", "not_contains", "regex") mode: "contains" | "not_contains" | "regex";
  @Required() pattern: string;
}

export class JsonExtractView {
  @Required() metric: string;
  @Required() path: string;
}

export class HttpAuthView {
  @Required() @Enum("basic", "bearer") mode: "basic" | "bearer";
  @Optional() username?: string;
  @Optional() password?: string;
  @Optional() token?: string;
}

export class UrlCheckSpecView {
  @Required() url: string;
  @Required() method: string;
  @Required() @Integer() timeout_ms: number;
  @Required() follow_redirects: boolean;
  @Required() verify_tls: boolean;
  @Required() @Property(ExpectedStatusView) expected_status: ExpectedStatusView;
  @Required() @Nullable(BodyMatchView) body_match: BodyMatchView | null;
  @Required() @Integer() body_max_bytes: number;
  @Required() @CollectionOf(JsonExtractView) json_extract: JsonExtractView[];
  @Required() @Nullable(HttpAuthView) auth: HttpAuthView | null;
}

export class DnsCheckSpecView {
  @Required() name: string;
  @Required() record_type: string;
  @Required() @Nullable(String) resolver_ip: string | null;
  @Required() @Integer() resolver_port: number;
  @Required() @Integer() timeout_ms: number;
  @Required() @Integer() max_depth: number;
}

export class PollTargetView {
  @Required() @Format("uuid") node_id: string;
  @Required() name: string;
  @Required() address: string;
  @Required() @Integer() snmp_port: number;
  @Required() pool: string;
  @Required() @Integer() interval_secs: number;
  @Required() @Nullable(SnmpCredentialView) @Description("Null: no SNMP credential (liveness and checks only)") snmp: SnmpCredentialView | null;
  @Required() @CollectionOf(TemplateItemView) templates: TemplateItemView[];
  @Required() @Nullable(UrlCheckSpecView) url_check: UrlCheckSpecView | null;
  @Required() @Nullable(DnsCheckSpecView) dns_check: DnsCheckSpecView | null;
}
