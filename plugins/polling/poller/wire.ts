/**
 * What one poll produces beyond samples, and the batch a poller hands to its sink: the
 * core's SampleSink (embedded poller) or the store-and-forward buffer of a remote poller,
 * which POSTs the same shape to /api/v1/pollers/{id}/samples. Plain data only.
 */
import type { Sample } from "../contract.js";
import type { InterfaceReading } from "./types.js";

/** What a poller learnt of one interface (and the counters rate computation continues from). */
export interface InterfaceUpdate {
  node_id: string;
  ifindex: number;
  if_name: string | null;
  if_alias: string | null;
  if_speed_bps: number | null;
  oper_up: boolean | null;
  counter_bits: 32 | 64;
  counters: InterfaceReading["counters"];
  uptime_ticks: number | null;
  at_unix_ms: number;
}

/** The system group of a node, sent when it changed (written back to inventory's node facts). */
export interface FactsUpdate {
  node_id: string;
  sys_descr: string | null;
  sys_object_id: string | null;
  sys_name: string | null;
}

/** The liveness verdict of one poll (becomes the bus event polling.reachability). */
export interface ReachabilityUpdate {
  node_id: string;
  reachable: boolean;
  method: "icmp" | "snmp" | "tcp";
  at_unix_ms: number;
}

export interface PollBatch {
  samples: Sample[];
  facts: FactsUpdate[];
  interfaces: InterfaceUpdate[];
  reachability: ReachabilityUpdate[];
  /** Measured while the poller was cut off from the core and sent late: stored, never alerted on. */
  backfill: boolean;
}

/** Where a PollLoop delivers what it measured. Resolves once the batch is safe (stored, or on disk). */
export interface BatchSink {
  write(batch: PollBatch): Promise<void>;
}

export function emptyBatch(backfill = false): PollBatch {
  return { samples: [], facts: [], interfaces: [], reachability: [], backfill };
}

/** Host telemetry a poller reports in its heartbeat (and the core measures of itself). */
export interface HostTelemetry {
  cpu_pct: number | null;
  load1: number | null;
  mem_total_bytes: number | null;
  mem_used_bytes: number | null;
  disks: { mount: string; size_bytes: number; used_bytes: number }[];
  /** What the host's passive receivers lost so far, by counter name (HostCounters); absent from older pollers. */
  counters?: Record<string, number>;
}

/** Poller ids (the pollers table's check). */
export const POLLER_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;
/** Most samples one POST /pollers/{id}/samples may carry (a 1 MiB body holds about this many). */
export const MAX_SAMPLES_PER_POST = 3000;
