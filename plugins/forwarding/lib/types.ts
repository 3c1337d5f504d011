/**
 * Shapes shared by the forwarding plugin's API half (destinations, validation, filters) and its tee (the
 * engine that filters, rate-limits and sends what the events and flows plugins received).
 */

/** Where a destination sends (spec: Forwarding destination body). */
export const DEST_KINDS = ["syslog_udp", "syslog_tcp", "syslog_tls", "snmp_trap_udp", "flow_udp", "warehouse"] as const;
export type DestKind = (typeof DEST_KINDS)[number];

/** The received stream a destination tees (spec: `syslog`, `trap`, `flow`). */
export const SOURCE_KINDS = ["syslog", "trap", "flow"] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** The 17 filter fields of the spec, in its order. */
export const FILTER_FIELDS = [
  "source_ip",
  "pool",
  "kind",
  "facility",
  "severity",
  "hostname",
  "app_name",
  "message",
  "trap_oid",
  "varbind",
  "src_addr",
  "dst_addr",
  "proto",
  "src_port",
  "dst_port",
  "src_as",
  "dst_as",
] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

/** The 12 filter operators of the spec. */
export const FILTER_OPS = ["eq", "ne", "contains", "not_contains", "prefix", "regex", "not_regex", "in_list", "in_cidr", "not_in_cidr", "lte", "gte"] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export interface FilterCondition {
  field: FilterField;
  op: FilterOp;
  /** Always a string in the API; parsed per field type when the filter is compiled. */
  value: string;
}

export interface Filter {
  mode: "all" | "any";
  conditions: FilterCondition[];
}

/**
 * One received record as a filter sees it, in the filter's field names. A field the record's stream does not have
 * is null (a syslog message has no `trap_oid`; a flow has no `message`), and a condition on a null field is false
 * (`ne`, `not_contains`, `not_regex`, `not_in_cidr` included: a missing field matches no condition).
 */
export interface FilterSubject {
  kind: SourceKind;
  source_ip: string;
  /** The pool whose receiver took it: a remote poller's pool, or the core's (`default`, its embedded poller's). */
  pool: string | null;
  facility: number | null;
  severity: number | null;
  hostname: string | null;
  app_name: string | null;
  message: string | null;
  trap_oid: string | null;
  /** Trap varbinds as `oid=value` texts; a varbind condition holds when it holds for any of them. */
  varbinds: readonly string[] | null;
  src_addr: string | null;
  dst_addr: string | null;
  proto: number | null;
  src_port: number | null;
  dst_port: number | null;
  src_as: number | null;
  dst_as: number | null;
}

/** A compiled filter: true = forward. */
export type CompiledFilter = (s: FilterSubject) => boolean;

/** A destination as the tee runs it: secrets unsealed, target split, filter compiled. Never answered or logged. */
export interface RuntimeDestination {
  id: string;
  name: string;
  dest_kind: DestKind;
  source_kind: SourceKind;
  host: string;
  port: number;
  pool: string | null;
  rate_limit_per_sec: number | null;
  verbatim: boolean;
  ca_cert: string | null;
  community: string | null;
  service_account_json: string | null;
  filter: CompiledFilter;
  /** No filter, or one without conditions: the destination takes the whole stream. */
  unfiltered: boolean;
  /** Changes whenever the row changes (its updated_at), so the tee knows when to rebuild a sender. */
  version: string;
}

/** A destination's connection as the tee sees it. `idle`: nothing sent yet (UDP: always idle or ready). */
export type ConnectionState = "idle" | "ready" | "connecting" | "connected" | "disconnected" | "disabled" | "not_built";

/** The per-destination counters of this replica since it started (GET /forwarding/destinations/{id}/status). */
export interface DestinationCounters {
  forwarded: number;
  dropped_filter: number;
  dropped_rate_limit: number;
  dropped_queue: number;
  /**
   * Messages (rows, records) that were not sent for an error: a frame the connection lost before the kernel took it,
   * a datagram whose send failed, a row the warehouse refused, a record that cannot be encoded. Never a connect attempt.
   */
  send_errors: number;
  /**
   * Failures of the connection itself, not of messages: a connect refused or timed out, a TLS handshake refused, a
   * connection reset, a socket error, a warehouse request that failed and is retried. What they cost in messages is
   * in send_errors or dropped_queue.
   */
  connection_errors: number;
  /** A class, never a message (no address, no secret): `connect_refused`, `timeout`, `tls`, `dns`, `reset`, `send`. */
  last_error_class: string | null;
  last_error_at: string | null;
  connection: ConnectionState;
  /** Messages waiting in the sender's queue (stream kinds). */
  queued: number;
}

/**
 * A pool destination as the core hands it to that pool's pollers (POST /forwarding/pollers/sync): the secrets still
 * sealed (a poller opens them with the same secret key, NMS_SECRET_KEY, or leaves the destination out), the filter as
 * stored (each poller compiles it).
 */
export interface PoolDestinationWire {
  id: string;
  name: string;
  dest_kind: DestKind;
  source_kind: SourceKind;
  host: string;
  port: number;
  pool: string | null;
  rate_limit_per_sec: number | null;
  verbatim: boolean;
  ca_cert: string | null;
  community_sealed: string | null;
  service_account_sealed: string | null;
  filter: Filter | null;
  version: string;
}
