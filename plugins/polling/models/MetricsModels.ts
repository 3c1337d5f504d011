import { CollectionOf, Description, Enum, Format, Integer, Maximum, MaxLength, Minimum, Nullable, Required } from "@tsed/schema";

/** `metric` of GET /metrics/interface-top and the stored rates it adds up. */
export const INTERFACE_TOP_METRICS = {
  throughput: ["if_in_bps", "if_out_bps"],
  in_bps: ["if_in_bps"],
  out_bps: ["if_out_bps"],
  errors: ["if_in_errors_ps", "if_out_errors_ps"],
  discards: ["if_in_discards_ps", "if_out_discards_ps"],
} as const;
export type InterfaceTopMetric = keyof typeof INTERFACE_TOP_METRICS;
export const INTERFACE_TOP_METRIC_NAMES = Object.keys(INTERFACE_TOP_METRICS) as InterfaceTopMetric[];

/**
 * `agg` of GET /metrics/interface-top: the latest value, or the average / maximum over a trailing window of the raw
 * history. No day-long window: without rollups it reads every sample of every interface for the day (about 24 × the
 * 1.5 s that one hour of 10,000 interfaces takes).
 */
export const INTERFACE_TOP_AGGS = {
  latest: null,
  avg_15m: { fn: "avg", secs: 900 },
  max_15m: { fn: "max", secs: 900 },
  avg_1h: { fn: "avg", secs: 3600 },
  max_1h: { fn: "max", secs: 3600 },
} as const;
export type InterfaceTopAgg = keyof typeof INTERFACE_TOP_AGGS;
export const INTERFACE_TOP_AGG_NAMES = Object.keys(INTERFACE_TOP_AGGS) as InterfaceTopAgg[];

export const INTERFACE_TOP_LIMIT = { min: 1, max: 100, default: 10 } as const;

/** `latest` leaves out interfaces whose latest rate is older than this (a node gone silent, a removed port). */
export const LATEST_MAX_AGE_SECS = 3600;

/** History: most points one answer carries (raw samples, or buckets of `step`). */
export const HISTORY_MAX_POINTS = 10000;
/** The query of GET /metrics/interfaces/top: which metric, how it is aggregated, how many entries. */
export class InterfaceTopQuery {
  // Declared `string` (a union alias would emit Object as the field's type metadata and change how it is read).
  @Required() @Enum(...INTERFACE_TOP_METRIC_NAMES) metric: string;
  @Enum(...INTERFACE_TOP_AGG_NAMES) @Description("Default latest") agg?: string;
  @Integer() @Description("Clamped to 1..100; default 10") limit?: number;
}

/** The query of GET /nodes/{id}/metrics/{metric}/history: the range, the series (ifindex, row) and the bucket width. */
export class MetricHistoryQuery {
  @MaxLength(64) @Description("RFC 3339 or Unix seconds; default one hour before to") from?: string;
  @MaxLength(64) @Description("RFC 3339 or Unix seconds; default now") to?: string;
  @Integer() @Minimum(0) @Maximum(2147483647) ifindex?: number;
  @Integer() @Minimum(0) @Maximum(2147483647) row?: number;
  @Integer() @Minimum(1) @Maximum(86400) @Description("Bucket width in seconds; absent = raw samples") step?: number;
}

/** History: the range when `from` is absent (before `to`). */
export const HISTORY_DEFAULT_SECS = 3600;

export const INTERFACE_TOP_DESCRIPTION =
  "Interfaces ranked by a rate, highest first. `metric`: throughput (in + out, bits/s), in_bps, out_bps (bits/s), errors (in + out errors/s), " +
  "discards (in + out discards/s). `agg`: latest (default: each interface's most recent rate, leaving out rates older than one hour), " +
  "avg_15m, max_15m, avg_1h, max_1h (average or maximum over that trailing window of the sample history; for throughput, " +
  "errors and discards the maximum is that of the in + out sums of one poll). `limit`: clamped to 1..100, default 10. " +
  "if_speed_bps is the configured speed (ifHighSpeed, else ifSpeed). A folder-scoped caller sees only nodes filed under its folders, " +
  "and `partial` is then true; it is false for unrestricted callers. 400 validation_failed for a metric outside the list or an unsupported agg.";

@Description("One interface of the fleet interface top-N with its value.")
export class InterfaceTopEntry {
  @Required() @Format("uuid") node_id: string;
  @Required() node_name: string;
  @Required() @Integer() ifindex: number;
  @Description("Port name (ifName); null when unknown") @Required() @Nullable(String) if_name: string | null;
  @Description("Port description (ifAlias); null when unknown") @Required() @Nullable(String) if_alias: string | null;
  @Required() @Nullable(Number) @Integer() @Description("Configured speed in bits/s (for utilisation)") if_speed_bps: number | null;
  @Required() @Description("bits/s for throughput, in_bps and out_bps; errors or discards per second otherwise") value: number;
}

@Description("Ranked interfaces of the fleet for one metric (GET /metrics/interface-top).")
export class InterfaceTopResult {
  @Required() @CollectionOf(InterfaceTopEntry) @Description("Highest first, at most `limit`") entries: InterfaceTopEntry[];
  @Required() @Description("True for folder-scoped callers (the scope filter may have removed entries); false for scope All") partial: boolean;
}

/** One interface of a node with its latest rates (null where none was measured). */
@Description("An interface of a node with its latest rates (GET /nodes/{id}/interfaces).")
export class NodeInterfaceView {
  @Required() @Integer() ifindex: number;
  @Description("Port name (ifName); null when unknown") @Required() @Nullable(String) if_name: string | null;
  @Description("Port description (ifAlias); null when unknown") @Required() @Nullable(String) if_alias: string | null;
  @Required() @Nullable(Number) @Integer() @Description("Configured speed in bits/s") if_speed_bps: number | null;
  @Required() @Nullable(Boolean) @Description("ifOperStatus is up(1)") oper_up: boolean | null;
  @Description("Inbound traffic, bits/s") @Required() @Nullable(Number) in_bps: number | null;
  @Description("Outbound traffic, bits/s") @Required() @Nullable(Number) out_bps: number | null;
  @Description("Inbound errors per second") @Required() @Nullable(Number) in_errors_ps: number | null;
  @Description("Outbound errors per second") @Required() @Nullable(Number) out_errors_ps: number | null;
  @Description("Inbound discards per second") @Required() @Nullable(Number) in_discards_ps: number | null;
  @Description("Outbound discards per second") @Required() @Nullable(Number) out_discards_ps: number | null;
  @Description("Inbound traffic as a percentage of if_speed_bps") @Required() @Nullable(Number) util_in_pct: number | null;
  @Description("Outbound traffic as a percentage of if_speed_bps") @Required() @Nullable(Number) util_out_pct: number | null;
  @Required() @Nullable(String) @Format("date-time") @Description("When the newest of these rates was measured") rates_at: string | null;
  @Required() @Nullable(String) @Format("date-time") @Description("When a poller last read this interface") last_polled_at: string | null;
}

@Description("One time step of a metric history.")
export class HistoryPoint {
  @Required()
  @Format("date-time")
  @Description("Sample time, or the bucket's start (buckets are aligned to multiples of step since the Unix epoch)")
  at: string;
  @Required() @Description("The sample, or the bucket's average") value: number;
  @Description("Smallest sample in the point") @Required() min: number;
  @Description("Largest sample in the point") @Required() max: number;
  @Required() @Integer() @Description("Samples in the point (1 for raw samples)") count: number;
}

@Description("A metric's history for one node over a time range (GET /nodes/{id}/metrics/{metric}/history).")
export class MetricHistory {
  @Required() @Format("uuid") node_id: string;
  @Required() metric: string;
  @Description("Interface of an interface metric; null = the node-level series") @Required() @Nullable(Number) @Integer() ifindex: number | null;
  @Description("Row of a table metric; null = the node-level series") @Required() @Nullable(Number) @Integer() row: number | null;
  @Description("Start of the range, inclusive") @Required() @Format("date-time") from: string;
  @Description("End of the range, exclusive") @Required() @Format("date-time") to: string;
  @Required() @Nullable(Number) @Integer() @Description("Bucket width in seconds; null for raw samples") step: number | null;
  @Required() @CollectionOf(HistoryPoint) @Description("Oldest first") points: HistoryPoint[];
}

export const HISTORY_DESCRIPTION =
  "A node's series of one metric from the sample history, oldest first. `from` and `to` are RFC 3339 timestamps or Unix seconds " +
  `(default: to = now, from = ${HISTORY_DEFAULT_SECS / 3600} hour before to; from < to); from is inclusive, to exclusive. ` +
  "`ifindex` picks the interface of an interface metric and `row` the row of a table metric (CPU, storage); absent = the node-level series. " +
  `Without \`step\` the raw samples are answered (at most ${HISTORY_MAX_POINTS}, else 400 too_many_points: ask for a step); ` +
  `with \`step\` (seconds, 1..86400) one point per bucket with its average, minimum, maximum and count, at most ${HISTORY_MAX_POINTS} buckets. ` +
  "400 invalid_range for a bound that does not parse or from not before to; 404 for a node that is missing or outside the caller's scope.";

@Description("One series a node has a latest value for (GET /nodes/{id}/metrics): what the graphs of a node can ask the history for.")
export class NodeSeriesView {
  @Required() @Description("The metric name (for example cpu_load_pct, storage_used_pct, rtt_ms, if_in_bps)") metric: string;
  @Description("Interface of an interface metric; null = not an interface series") @Required() @Nullable(Number) @Integer() ifindex: number | null;
  @Description("Row of a table metric (CPU, storage); null = not a table series") @Required() @Nullable(Number) @Integer() row: number | null;
  @Description('The interface name (ifName) or row name (hrStorageDescr, "cpu <index>") the poller stored; null when unknown')
  @Required()
  @Nullable(String)
  name: string | null;
  @Required() @Description("The latest value") value: number;
  @Required() @Format("date-time") @Description("When the latest value was measured") at: string;
}

export const NODE_SERIES_DESCRIPTION =
  "The series a node has a latest value for, one per metric and interface or row, ordered by metric, ifindex, row. " +
  "`metric` (optional) keeps only that metric. The graphs of a node use it to learn which CPU, storage and interface series exist " +
  "before asking GET /nodes/{id}/metrics/{metric}/history for each. 400 invalid_metric for a metric that is not an identifier; " +
  "404 for a node that is missing or outside the caller's scope.";
