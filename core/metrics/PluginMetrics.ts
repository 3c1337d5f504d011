/**
 * What a plugin registers its Prometheus metrics through (`ctx.metrics`). The types are the kernel's own, not
 * prom-client's, so a plugin keeps compiling when the kernel changes its metrics library.
 */

/** Label values by label name; a label left out is exported as the empty string. */
export type MetricLabels<L extends string> = Partial<Record<L, string | number>>;

export interface MetricDefinition<L extends string> {
  /** snake_case, without the `nms_<plugin>_` prefix the kernel adds; counters end in `_total`. */
  name: string;
  help: string;
  /** Keep each label's values bounded (no node ids, no addresses): every combination is a time series. */
  labelNames?: readonly L[];
}

export interface MetricCounter<L extends string = never> {
  /** Adds `value` (default 1, never negative) to the series of these labels. */
  inc(labels?: MetricLabels<L>, value?: number): void;
}

export interface MetricGauge<L extends string = never> {
  set(labels: MetricLabels<L>, value: number): void;
  inc(labels?: MetricLabels<L>, value?: number): void;
  dec(labels?: MetricLabels<L>, value?: number): void;
}

export interface MetricHistogram<L extends string = never> {
  /** Records one observation (seconds for durations). */
  observe(labels: MetricLabels<L>, value: number): void;
  /** Starts a timer; calling the result records the seconds elapsed (with its labels merged over these) and returns them. */
  startTimer(labels?: MetricLabels<L>): (labels?: MetricLabels<L>) => number;
}

export interface PluginMetrics {
  /**
   * A counter `nms_<plugin>_<name>`; its name must end in `_total`. Registering a name twice throws. With `collect`,
   * the counter is read from running totals the plugin already keeps: called on every scrape, it reports each series'
   * total (and `inc` is not used).
   */
  counter<L extends string = never>(
    def: MetricDefinition<L> & { collect?: (report: (labels: MetricLabels<L>, total: number) => void) => void | Promise<void> },
  ): MetricCounter<L>;
  /** A gauge; with `collect`, it is called on every scrape to set the current values (queue depths, sizes). */
  gauge<L extends string = never>(def: MetricDefinition<L> & { collect?: (gauge: MetricGauge<L>) => void | Promise<void> }): MetricGauge<L>;
  /** A histogram; `buckets` are the upper bounds (default: the kernel's duration buckets, 1 ms to 60 s). */
  histogram<L extends string = never>(def: MetricDefinition<L> & { buckets?: readonly number[] }): MetricHistogram<L>;
}
