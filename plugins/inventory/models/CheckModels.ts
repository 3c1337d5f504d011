import {
  AdditionalProperties,
  CollectionOf,
  Default,
  Description,
  Enum,
  Example,
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
} from "@tsed/schema";

export const URL_CHECK_METHODS = ["GET", "HEAD", "POST", "PUT", "OPTIONS"] as const;
export type UrlCheckMethod = (typeof URL_CHECK_METHODS)[number];

export const EXPECTED_STATUS_KINDS = ["two_xx", "exact", "range"] as const;
export type ExpectedStatusKind = (typeof EXPECTED_STATUS_KINDS)[number];

export const BODY_MATCH_MODES = ["contains", "not_contains", "regex"] as const;
export type BodyMatchMode = (typeof BODY_MATCH_MODES)[number];

export const DNS_RECORD_TYPES = ["A", "AAAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT"] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

/** Prometheus-style metric name (spec: URL check, json_extract). */
export const METRIC_NAME_PATTERN = "^[A-Za-z_:][A-Za-z0-9_:]*$";

/**
 * Which status codes count as up. The fields a kind needs are checked by the service
 * (two_xx: none; exact: code; range: min and max), so one flat shape serves all three.
 */
@AdditionalProperties(false)
@Description("Which HTTP status codes count as up: `two_xx` (200-299), `exact` (`code`), or `range` (`min` to `max`, inclusive).")
export class ExpectedStatus {
  @Description("two_xx (200-299), exact (code) or range (min to max)")
  @Required()
  @Enum(...EXPECTED_STATUS_KINDS)
  kind: ExpectedStatusKind;

  @Optional()
  @Integer()
  @Minimum(100)
  @Maximum(599)
  @Description("kind `exact` only: the one accepted status code (100-599).")
  code?: number;

  @Optional()
  @Integer()
  @Minimum(100)
  @Maximum(599)
  @Description("kind `range` only: lowest accepted status code (100-599, at most `max`).")
  min?: number;

  @Optional()
  @Integer()
  @Minimum(100)
  @Maximum(599)
  @Description("kind `range` only: highest accepted status code (100-599, at least `min`).")
  max?: number;
}

@AdditionalProperties(false)
@Description("A condition on the response body: it `contains` or does `not_contains` the text, or matches the `regex` (JavaScript syntax).")
export class BodyMatch {
  @Description("contains, not_contains or regex")
  @Required()
  @Enum(...BODY_MATCH_MODES)
  mode: BodyMatchMode;

  @Required()
  @MinLength(1)
  @MaxLength(1000)
  @Description("Text to look for, or a regular expression that must compile (else 400 `invalid_regex`).")
  pattern: string;
}

@AdditionalProperties(false)
@Description("Records one number from a JSON response body as a metric.")
export class JsonExtractRule {
  @Required()
  @MinLength(1)
  @MaxLength(200)
  @Pattern(METRIC_NAME_PATTERN)
  @Description("Metric name; not one the URL monitor already emits, and unique within the check.")
  metric: string;

  @Required()
  @MinLength(1)
  @MaxLength(512)
  @Example("items[0].value")
  @Description(
    "Dot-separated path to one number: each part a name or a numeric array index, an index also written in brackets (`items[0].value` and `items.0.value` read the same value). Stored and returned exactly as sent. A malformed path answers 400 `invalid_json_path`.",
  )
  path: string;
}

@AdditionalProperties(false)
@Description("A URL check; PUT replaces the node's whole check, an omitted field takes its default.")
export class UrlCheckBody {
  @Required()
  @MinLength(1)
  @MaxLength(2048)
  @Description("Absolute http or https URL, at most 2048 characters, without user:password (use credential_id).")
  url: string;

  @Description("HTTP method; default GET")
  @Optional()
  @Enum(...URL_CHECK_METHODS)
  @Default("GET")
  method?: UrlCheckMethod;

  @Description("How long the request may take, milliseconds; default 5000")
  @Optional()
  @Integer()
  @Minimum(100)
  @Maximum(60000)
  @Default(5000)
  timeout_ms?: number;

  @Description("Follow redirects; default true")
  @Optional()
  @Default(true)
  follow_redirects?: boolean;

  @Description("Verify the server's TLS certificate; default true")
  @Optional()
  @Default(true)
  verify_tls?: boolean;

  @Optional()
  @Property(ExpectedStatus)
  @Description("Default `{kind: two_xx}`.")
  expected_status?: ExpectedStatus;

  @Optional()
  @Nullable(BodyMatch)
  @Description("null (default) for no body condition.")
  body_match?: BodyMatch | null;

  @Optional()
  @Integer()
  @Minimum(1024)
  @Maximum(1048576)
  @Default(65536)
  @Description("Most body bytes read; the body is only read when body_match or json_extract is set.")
  body_max_bytes?: number;

  @Optional()
  @CollectionOf(JsonExtractRule)
  @MaxItems(16)
  @Description("At most 16 rules, default none.")
  json_extract?: JsonExtractRule[];

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("A stored credential of kind `http`, or null (default).")
  credential_id?: string | null;
}

@Description("The node's URL check (1:1 with the node).")
export class UrlCheckView {
  @Required() @Format("uuid") node_id: string;
  @Description("The URL requested") @Required() url: string;
  @Description("HTTP method") @Required() @Enum(...URL_CHECK_METHODS) method: UrlCheckMethod;
  @Description("How long the request may take, milliseconds") @Required() @Integer() timeout_ms: number;
  @Description("Whether redirects are followed") @Required() follow_redirects: boolean;
  @Description("Whether the server's TLS certificate is verified") @Required() verify_tls: boolean;
  @Required() @Property(ExpectedStatus) expected_status: ExpectedStatus;
  @Description("A condition on the response body; null = none") @Required() @Nullable(BodyMatch) body_match: BodyMatch | null;
  @Description("Most body bytes read; the body is only read when body_match or json_extract is set") @Required() @Integer() body_max_bytes: number;
  @Description("Numbers of a JSON body recorded as metrics") @Required() @CollectionOf(JsonExtractRule) json_extract: JsonExtractRule[];
  @Description("A stored credential of kind http; null = none") @Required() @Nullable(String) @Format("uuid") credential_id: string | null;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

@AdditionalProperties(false)
@Description("A DNS check; PUT replaces the node's whole check, an omitted field takes its default.")
export class DnsCheckBody {
  @Required()
  @MinLength(1)
  @MaxLength(254)
  @Description("DNS name to resolve: labels of letters, digits, `-` and `_` (1-63 each), at most 253 characters (a trailing dot is allowed).")
  name: string;

  @Description("Record type asked; default A")
  @Optional()
  @Enum(...DNS_RECORD_TYPES)
  @Default("A")
  record_type?: DnsRecordType;

  @Optional()
  @Nullable(String)
  @MaxLength(45)
  @Description("IPv4 or IPv6 address of the resolver; null (default) uses the system resolver.")
  resolver_ip?: string | null;

  @Description("Resolver port; default 53")
  @Optional()
  @Integer()
  @Minimum(1)
  @Maximum(65535)
  @Default(53)
  resolver_port?: number;

  @Description("Timeout of the lookup, milliseconds; default 2000")
  @Optional()
  @Integer()
  @Minimum(100)
  @Maximum(60000)
  @Default(2000)
  timeout_ms?: number;

  @Optional()
  @Integer()
  @Minimum(1)
  @Maximum(16)
  @Default(5)
  @Description("Most CNAME hops followed.")
  max_depth?: number;
}

@Description("The node's DNS check (1:1 with the node).")
export class DnsCheckView {
  @Required() @Format("uuid") node_id: string;
  @Description("DNS name to resolve") @Required() name: string;
  @Description("Record type asked") @Required() @Enum(...DNS_RECORD_TYPES) record_type: DnsRecordType;
  @Description("Resolver address; null = the system resolver") @Required() @Nullable(String) resolver_ip: string | null;
  @Description("Resolver port") @Required() @Integer() resolver_port: number;
  @Description("Timeout of the lookup, milliseconds") @Required() @Integer() timeout_ms: number;
  @Description("Most CNAME hops followed") @Required() @Integer() max_depth: number;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}
