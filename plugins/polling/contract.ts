/**
 * The polling plugin's public contract: the sample stream (bus), metric names and
 * which of them are raw monotonic counters, poller and reachability events.
 */
import type { EventBus, Secrets } from "../../core/index.js";

/** One measurement. Interface metrics carry ifindex (+ if_name); table metrics (CPU, storage) carry row (+ row_name). */
export interface Sample {
  node_id: string;
  metric: string;
  value: number;
  /** When it was measured (Unix ms). */
  at_unix_ms: number;
  ifindex: number | null;
  if_name: string | null;
  row: number | null;
  row_name: string | null;
  pool: string;
  poller_id: string;
  /** True for samples a remote poller buffered while cut off and sent late (alerts must not fire on them). */
  backfill: boolean;
}

/** Rates and gauges polling produces (names are identifiers; alert thresholds use them). */
export const METRICS = {
  // IF-MIB, per interface (ifindex)
  ifInBps: "if_in_bps",
  ifOutBps: "if_out_bps",
  ifInErrorsPs: "if_in_errors_ps",
  ifOutErrorsPs: "if_out_errors_ps",
  ifInDiscardsPs: "if_in_discards_ps",
  ifOutDiscardsPs: "if_out_discards_ps",
  ifOperUp: "if_oper_up",
  ifUtilInPct: "if_util_in_pct",
  ifUtilOutPct: "if_util_out_pct",
  // HOST-RESOURCES, per row
  cpuLoadPct: "cpu_load_pct",
  storageUsedPct: "storage_used_pct",
  // system
  sysUptimeSecs: "sys_uptime_secs",
  // liveness
  reachable: "reachable",
  rttMs: "rtt_ms",
  // the SNMP agent of a node polled by SNMP: one of SNMP_AGENT_STATUS per poll
  snmpAgentStatus: "snmp_agent_status",
} as const;

/**
 * Values of the sample `snmp_agent_status` (one per poll of a node with SNMP credentials): whether its agent answered,
 * and if not, why. A node may answer ping while its agent is silent; the alerts plugin raises "SNMP agent not
 * answering" after a few such polls.
 */
export const SNMP_AGENT_STATUS = { answering: 0, timeout: 1, auth: 2, error: 3 } as const;

/**
 * Raw monotonic counters (as read from the agent, before rates): stored for rate
 * computation, never a sensible threshold metric (alerts refuse them).
 */
export const RAW_COUNTER_METRICS: ReadonlySet<string> = new Set([
  "if_in_octets",
  "if_out_octets",
  "if_in_errors",
  "if_out_errors",
  "if_in_discards",
  "if_out_discards",
  "if_hc_in_octets",
  "if_hc_out_octets",
]);

/** The IF-MIB object names of the raw counters, each with its metric name in RAW_COUNTER_METRICS. */
export const RAW_COUNTER_MIB_NAMES: Readonly<Record<string, string>> = Object.freeze({
  ifInOctets: "if_in_octets",
  ifOutOctets: "if_out_octets",
  ifInErrors: "if_in_errors",
  ifOutErrors: "if_out_errors",
  ifInDiscards: "if_in_discards",
  ifOutDiscards: "if_out_discards",
  ifHCInOctets: "if_hc_in_octets",
  ifHCOutOctets: "if_hc_out_octets",
});

const RAW_COUNTER_NAMES_LOWER: ReadonlySet<string> = new Set([...RAW_COUNTER_METRICS, ...Object.keys(RAW_COUNTER_MIB_NAMES).map((n) => n.toLowerCase())]);

/**
 * Whether `name` names a raw monotonic counter, in either spelling and in any case: the
 * metric name (`if_hc_in_octets`, `IF_HC_IN_OCTETS`) or the IF-MIB object name
 * (`ifHCInOctets`, `ifhcinoctets`). Rates (`if_in_bps`, …) are not raw counters.
 */
export function isRawCounterMetric(name: string): boolean {
  return RAW_COUNTER_NAMES_LOWER.has(name.toLowerCase());
}

export interface ReachabilityEvent {
  node_id: string;
  reachable: boolean;
  /** How it was decided: icmp, snmp or tcp. */
  method: "icmp" | "snmp" | "tcp";
  at_unix_ms: number;
  poller_id: string;
  pool: string;
}

export interface PollerEvent {
  poller_id: string;
  pool: string;
  at_unix_ms: number;
}

declare module "../../core/bus/EventBus.js" {
  interface BusEvents {
    /** Samples of one poll of one node (or one backfill batch). */
    "polling.sample": { samples: Sample[] };
    "polling.reachability": ReachabilityEvent;
    "polling.poller.online": PollerEvent;
    "polling.poller.offline": PollerEvent;
  }
}

/** Extension point `polling.passive`: receivers a remote poller runs for its pool (syslog, traps …) besides polling. */
/** The pool of the core's embedded poller: what the core's own listeners and probes serve. */
export const EMBEDDED_POOL = "default";

export const PASSIVE_RECEIVERS_POINT = "polling.passive";

/** What a remote poller gives a passive receiver. */
export interface PassiveEnvironment {
  pollerId: string;
  pool: string;
  dataDir: string;
  /** A plugin's checked `pluginConfig` section (defaults applied). */
  pluginConfig<T = unknown>(pluginId: string): T;
  /** POSTs JSON to the core under /api/v1 with the poller's token; resolves with the HTTP status (0 = not reached). Never buffered. */
  post(path: string, body: unknown): Promise<number>;
  /** A request to the core under /api/v1 with the poller's token, with the answer's body (status 0 = not reached). */
  call(method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /**
   * The poller process's own bus, shared by its passive receivers: the events and flows receivers publish
   * `events.received` and `flows.received` on it as the core's listeners do, so a receiver of another plugin (the
   * forwarding tee) can take what this poller received.
   */
  bus: EventBus;
  /** Opens values the core sealed (it holds the core's key only when NMS_SECRET_KEY is set alike on both). */
  secrets: Secrets;
  log: {
    debug(msg: string, fields?: Record<string, unknown>): void;
    info(msg: string, fields?: Record<string, unknown>): void;
    warn(msg: string, fields?: Record<string, unknown>): void;
    error(msg: string, fields?: Record<string, unknown>): void;
  };
}

/** A running passive receiver: the listeners it bound (`syslog.udp:514` …), reported at registration and named by monitoring gaps. */
export interface RunningPassive {
  listeners: string[];
  /** What this receiver lost so far, by host counter name (reported with the poller's host telemetry, GET /system/hosts). */
  counters?(): Record<string, number>;
  stop(): Promise<void>;
}

/** An item of `polling.passive`, contributed by the plugin that owns the stream. */
export interface PassiveReceiver {
  name: string;
  start(env: PassiveEnvironment): Promise<RunningPassive>;
}

/** Read-only views for the reports plugin (migration 0900): sample history (node_id, metric, ifindex, row_key, at, value) and interfaces. */
export const REPORT_SAMPLES_VIEW = "polling.report_samples";
export const REPORT_INTERFACES_VIEW = "polling.report_interfaces";

/** Host counters (GET /system/hosts `counters`): `register(name, read)` at start for what a plugin's receivers lose on the core. */
export abstract class HostCounters {
  /** `read` is called whenever host telemetry is answered (GET /system/hosts, `counters`); a name registered again takes the new reader. */
  abstract register(name: string, read: () => number): void;
  /** Every counter's value now (a reader that throws or answers no whole number ≥ 0 is left out). */
  abstract read(): Record<string, number>;
}
