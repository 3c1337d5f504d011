/**
 * English alert titles, for example
 *   "Interface Gi0/1 inbound traffic above 800 Mbit/s on sw1"
 *   "CPU cpu0 load above 90% on sw1"
 *   "sw1 is unreachable"
 *   "All pollers of pool east are offline"
 * Pure functions.
 */

type Unit = "bps" | "pct" | "per_s" | "s" | "ms" | "bool" | "none";

interface MetricWording {
  /** What is measured, for interface metrics after "Interface <name>", for row metrics with {row} replaced. */
  label: string;
  unit: Unit;
}

const WORDING: Record<string, MetricWording> = {
  if_in_bps: { label: "inbound traffic", unit: "bps" },
  if_out_bps: { label: "outbound traffic", unit: "bps" },
  if_in_errors_ps: { label: "inbound errors", unit: "per_s" },
  if_out_errors_ps: { label: "outbound errors", unit: "per_s" },
  if_in_discards_ps: { label: "inbound discards", unit: "per_s" },
  if_out_discards_ps: { label: "outbound discards", unit: "per_s" },
  if_oper_up: { label: "operational status", unit: "bool" },
  if_util_in_pct: { label: "inbound utilisation", unit: "pct" },
  if_util_out_pct: { label: "outbound utilisation", unit: "pct" },
  cpu_load_pct: { label: "CPU {row}load", unit: "pct" },
  storage_used_pct: { label: "Storage {row}used", unit: "pct" },
  sys_uptime_secs: { label: "Uptime", unit: "s" },
  reachable: { label: "Reachability", unit: "bool" },
  rtt_ms: { label: "Round-trip time", unit: "ms" },
};

/** A number with at most three significant digits, trailing zeros dropped ("800", "1.25", "0.5"). */
export function compactNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n === 0) return "0";
  const abs = Math.abs(n);
  if (abs >= 1000) return String(Math.round(n));
  return String(Number(n.toPrecision(3)));
}

/** Bits per second with SI prefixes: 800000000 → "800 Mbit/s". */
export function formatBps(bps: number): string {
  const units = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s", "Pbit/s"];
  let v = bps;
  let i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${compactNumber(v)} ${units[i]}`;
}

export function formatValue(metric: string | null, value: number): string {
  const unit = (metric && WORDING[metric]?.unit) || "none";
  switch (unit) {
    case "bps":
      return formatBps(value);
    case "pct":
      return `${compactNumber(value)}%`;
    case "per_s":
      return `${compactNumber(value)}/s`;
    case "s":
      return `${compactNumber(value)} s`;
    case "ms":
      return `${compactNumber(value)} ms`;
    default:
      return compactNumber(value);
  }
}

function capitalise(s: string): string {
  return s.length ? s[0].toUpperCase() + s.slice(1) : s;
}

export interface ThresholdTitleInput {
  metric: string;
  node_name: string;
  ifindex: number | null;
  if_name: string | null;
  row: number | null;
  row_name: string | null;
  direction: "above" | "below";
  threshold: number;
}

/** Title of a threshold alert. */
export function thresholdTitle(t: ThresholdTitleInput): string {
  const wording = WORDING[t.metric];
  const label = wording?.label ?? t.metric;
  const rowLabel = t.row_name ?? (t.row !== null ? `#${t.row}` : null);
  let what: string;
  if (t.ifindex !== null) {
    const port = t.if_name ?? `ifIndex ${t.ifindex}`;
    what = `Interface ${port} ${label.replace("{row}", "")}`;
  } else if (label.includes("{row}")) {
    what = label.replace("{row}", rowLabel ? `${rowLabel} ` : "");
  } else {
    what = rowLabel ? `${capitalise(label)} of ${rowLabel}` : capitalise(label);
  }
  return `${what} ${t.direction} ${formatValue(t.metric, t.threshold)} on ${t.node_name}`;
}

export function unreachableTitle(nodeName: string): string {
  return `${nodeName} is unreachable`;
}

/** "SNMP agent on sw1 not answering (timeout)": the node answers ping, its agent does not. */
export function agentDownTitle(nodeName: string, reason: "timeout" | "credentials refused" | "error"): string {
  return `SNMP agent on ${nodeName} not answering (${reason})`;
}

export function poolOfflineTitle(pool: string): string {
  return `All pollers of pool ${pool} are offline`;
}
