/**
 * The seams between the parts of the poller. One poll of one node:
 *
 *   PollLoop (scheduling, embedded or remote)
 *     → SnmpPoller.poll(target, previous)  (snmp/)     system group, IF-MIB, HOST-RESOURCES, template OIDs
 *     → computeRates(previous, current)     (lib/rates.ts) counters → bits/s, errors/s, wrap and restart aware
 *     → Liveness.check(target)               (checks/)   ICMP, else SNMP, else TCP
 *     → UrlProbe / DnsProbe                  (checks/)   the node's URL and DNS checks
 *   → Sample[] → SampleSink (latest, history, bus "polling.sample")
 *
 * Everything here is plain data, so a remote poller (a separate process) runs the
 * same code on an assignment it fetched over HTTP.
 */

export interface SnmpCredential {
  version: "1" | "2c" | "3";
  community?: string;
  user?: string;
  security_level?: "noAuthNoPriv" | "authNoPriv" | "authPriv";
  auth_protocol?: "MD5" | "SHA" | "SHA224" | "SHA256" | "SHA384" | "SHA512";
  auth_key?: string;
  priv_protocol?: "DES" | "AES" | "AES192" | "AES256";
  priv_key?: string;
}

export interface TemplateItem {
  id: string;
  /** Metric name the value is stored under (an identifier). */
  metric_name: string;
  /** "gauge" (stored as read) or "counter" (turned into a per-second rate). */
  metric_kind: "gauge" | "counter";
  /** Scalar OID (….0) or a table column OID (walked: one sample per row, row = last index component). */
  oid: string;
  collection: "scalar" | "table";
}

export interface UrlCheckSpec {
  url: string;
  method: string;
  timeout_ms: number;
  follow_redirects: boolean;
  verify_tls: boolean;
  expected_status: { kind: "two_xx" } | { kind: "exact"; code: number } | { kind: "range"; min: number; max: number };
  body_match: { mode: "contains" | "not_contains" | "regex"; pattern: string } | null;
  body_max_bytes: number;
  json_extract: { metric: string; path: string }[];
  /** Resolved credential of kind http, or null. */
  auth: { mode: "basic"; username: string; password: string } | { mode: "bearer"; token: string } | null;
}

export interface DnsCheckSpec {
  name: string;
  record_type: string;
  resolver_ip: string | null;
  resolver_port: number;
  timeout_ms: number;
  max_depth: number;
}

/** What a poller needs to poll one node (the assignment is a list of these). */
export interface PollTarget {
  node_id: string;
  name: string;
  address: string;
  snmp_port: number;
  pool: string;
  interval_secs: number;
  /** Null: no SNMP credential (liveness and checks only). */
  snmp: SnmpCredential | null;
  templates: TemplateItem[];
  url_check: UrlCheckSpec | null;
  dns_check: DnsCheckSpec | null;
}

export interface SystemFacts {
  sys_descr: string | null;
  sys_object_id: string | null;
  sys_name: string | null;
  /** sysUpTime in hundredths of a second. */
  uptime_ticks: number | null;
}

export interface InterfaceReading {
  ifindex: number;
  if_name: string | null;
  if_alias: string | null;
  /** Configured speed in bits/s (ifHighSpeed × 10^6 when present, else ifSpeed). */
  if_speed_bps: number | null;
  oper_up: boolean | null;
  /** 64 when the HC counters were read, 32 otherwise. */
  counter_bits: 32 | 64;
  /** Raw counter values (as bigint-safe decimal strings). */
  counters: {
    in_octets: string | null;
    out_octets: string | null;
    in_errors: string | null;
    out_errors: string | null;
    in_discards: string | null;
    out_discards: string | null;
  };
}

export interface TableRowReading {
  metric: string;
  row: number;
  row_name: string | null;
  value: number;
}

export interface SnmpPollResult {
  /** False when the agent did not answer at all. */
  answered: boolean;
  facts: SystemFacts | null;
  interfaces: InterfaceReading[];
  /** HOST-RESOURCES and table template values. */
  rows: TableRowReading[];
  /** Scalar template values and counters (counters as raw strings for rate computation). */
  scalars: { metric: string; kind: "gauge" | "counter"; value: string }[];
  /** When the agent answered (Unix ms). */
  at_unix_ms: number;
}

/** What the previous poll left for rate computation of one interface. */
export interface InterfaceState {
  ifindex: number;
  counter_bits: 32 | 64;
  counters: InterfaceReading["counters"];
  uptime_ticks: number | null;
  at_unix_ms: number;
}
