import promClient from "prom-client";
import type pg from "pg";
import type { Logger } from "../logging/Logger.js";
import type { ReadReplicas } from "../store/ReadReplicas.js";
import { poolFamily } from "../store/Store.js";
import type { MetricCounter, MetricDefinition, MetricGauge, MetricHistogram, MetricLabels, PluginMetrics } from "./PluginMetrics.js";

const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = promClient;
type Labels = Record<string, string | number>;

/** The exposition format this endpoint serves (Prometheus text format 0.0.4). */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Upper bounds (seconds) for durations: 1 ms to 60 s. */
export const DURATION_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const NAME = /^[a-z][a-z0-9_]*$/;
const LABEL = /^[a-z_][a-z0-9_]*$/;

let processRegistry: promClient.Registry | undefined;

/** prom-client's default gauges that carry a counter's suffix (each the sum of a per-type gauge it also exports). */
const SUM_GAUGES_NAMED_AS_COUNTERS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/**
 * The process's own metrics (CPU, memory, handles, GC, event-loop lag from monitorEventLoopDelay), collected once per
 * process: they describe the process, not a kernel, and collecting them again for every kernel a test process boots
 * would leave one event-loop monitor and one GC observer behind per kernel.
 */
function processMetrics(): promClient.Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 10 });
    // prom-client names three gauges with a counter's `_total` suffix, which `promtool check metrics` refuses; their
    // values are the sums of the per-type gauges it also exports (nodejs_active_handles{type} and the like).
    for (const name of SUM_GAUGES_NAMED_AS_COUNTERS) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

/**
 * One kernel's metrics: its own registry (never prom-client's global one, since a test process boots several kernels),
 * the kernel's metrics (HTTP, realtime, jobs, pool, store), and each plugin's, registered through `forPlugin`.
 */
export class KernelMetrics {
  private readonly registry = new Registry();
  /** full metric name → who registered it ("core" or a plugin id). */
  private readonly owners = new Map<string, string>();
  readonly httpDuration: promClient.Histogram<"method" | "route" | "status">;
  readonly broadcasts: promClient.Counter<"channel">;
  readonly jobRuns: promClient.Counter<"job" | "outcome">;
  readonly jobDuration: promClient.Histogram<"job" | "outcome">;

  constructor(
    private readonly log: Logger,
    version: string,
  ) {
    processMetrics();
    this.core(new Gauge({ name: "nms_build_info", help: "Always 1; the kernel's version as a label.", labelNames: ["version"], registers: [] })).set(
      { version },
      1,
    );
    this.httpDuration = this.core(
      new Histogram({
        name: "nms_http_request_duration_seconds",
        help: "HTTP requests by method, route pattern (unmatched for unknown paths) and status, and how long they took.",
        labelNames: ["method", "route", "status"],
        buckets: [...DURATION_BUCKETS],
        registers: [],
      }),
    );
    this.broadcasts = this.core(
      new Counter({ name: "nms_realtime_broadcasts_total", help: "Socket.IO publishes by channel.", labelNames: ["channel"], registers: [] }),
    );
    this.jobRuns = this.core(
      new Counter({ name: "nms_job_runs_total", help: "Job runs by job name and outcome (success, failure).", labelNames: ["job", "outcome"], registers: [] }),
    );
    this.jobDuration = this.core(
      new Histogram({
        name: "nms_job_duration_seconds",
        help: "How long job runs took, by job name and outcome.",
        labelNames: ["job", "outcome"],
        buckets: [...DURATION_BUCKETS],
        registers: [],
      }),
    );
  }

  private core<M extends promClient.Metric<string>>(metric: M): M {
    this.register("core", metric);
    return metric;
  }

  private register(owner: string, metric: promClient.Metric<string>): void {
    const name = (metric as unknown as { name: string }).name;
    const prior = this.owners.get(name);
    if (prior) throw new Error(`metric ${name} is already registered${prior === owner ? "" : ` by ${prior === "core" ? "the kernel" : `plugin "${prior}"`}`}`);
    this.owners.set(name, owner);
    this.registry.registerMetric(metric);
  }

  /** Records one HTTP request (the route pattern, never the raw path, keeps the series bounded). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
  }

  observeJob(job: string, outcome: "success" | "failure", seconds: number): void {
    this.jobRuns.inc({ job, outcome });
    this.jobDuration.observe({ job, outcome }, seconds);
  }

  /** The Socket.IO connections gauge, read on scrape. */
  realtimeConnections(count: () => number): void {
    this.core(
      new Gauge({
        name: "nms_realtime_connections",
        help: "Socket.IO clients connected (authenticated) to this kernel.",
        registers: [],
        collect() {
          this.set(count());
        },
      }),
    );
  }

  /**
   * The pool's connections, read on scrape: with its timed siblings (one per statement timeout in use, each as large,
   * made on first use), so the figures are every connection the kernel holds against the primary.
   */
  pool(pool: pg.Pool): void {
    const maxOf = (p: pg.Pool) => (p as unknown as { options?: { max?: number } }).options?.max ?? 0;
    const sum = (f: (p: pg.Pool) => number) => poolFamily(pool).reduce((s, p) => s + f(p), 0);
    this.core(
      new Gauge({
        name: "nms_db_pool_connections",
        help: "Connections of the kernel's PostgreSQL pool (with its statement-timeout siblings) by state (idle, in_use); their sum is the pool's total.",
        labelNames: ["state"],
        registers: [],
        collect() {
          this.set(
            { state: "idle" },
            sum((p) => p.idleCount),
          );
          this.set(
            { state: "in_use" },
            sum((p) => p.totalCount - p.idleCount),
          );
        },
      }),
    );
    this.core(
      new Gauge({
        name: "nms_db_pool_waiting_requests",
        help: "Queries waiting for a free connection of the kernel's PostgreSQL pool (with its statement-timeout siblings).",
        registers: [],
        collect() {
          this.set(sum((p) => p.waitingCount));
        },
      }),
    );
    this.core(
      new Gauge({
        name: "nms_db_pool_max_connections",
        help: "The size limit of the kernel's PostgreSQL pool, with its statement-timeout siblings made so far.",
        registers: [],
        collect() {
          this.set(sum(maxOf));
        },
      }),
    );
  }

  /** The read replicas (DATABASE_READ_URL): each one's staleness and whether it serves, and where reads went. */
  readReplicas(replicas: ReadReplicas): void {
    this.core(
      new Gauge({
        name: "nms_db_read_replica_lag_seconds",
        help: "How old the newest commits a read replica may miss are (the staleness of a read it serves); absent while it is unreachable or not a standby.",
        labelNames: ["replica"],
        registers: [],
        collect() {
          this.reset();
          for (const r of replicas.status()) if (r.lagSecs !== null) this.set({ replica: r.name }, r.lagSecs);
        },
      }),
    );
    this.core(
      new Gauge({
        name: "nms_db_read_replica_serving",
        help: "1 while a read replica serves reads (a standby within readReplicas.maxLagSecs), 0 while its reads go to the primary.",
        labelNames: ["replica"],
        registers: [],
        collect() {
          for (const r of replicas.status()) this.set({ replica: r.name }, r.serving ? 1 : 0);
        },
      }),
    );
    const served = this.core(
      new Counter({
        name: "nms_db_read_queries_total",
        help: "Heavy reads (ctx.store.read) by where they ran: a replica's name, or primary (no replica fresh enough, or one failed under the read).",
        labelNames: ["served_by"],
        registers: [],
      }),
    );
    replicas.onServed = (where) => served.inc({ served_by: where });
  }

  /** The store in use (embedded, external, none) as a label, and for the embedded server whether it runs. */
  store(kind: "embedded" | "external" | "none", embeddedUp?: () => boolean): void {
    this.core(
      new Gauge({ name: "nms_store_info", help: "Always 1; the store in use (embedded, external, none) as a label.", labelNames: ["kind"], registers: [] }),
    ).set({ kind }, 1);
    if (!embeddedUp) return;
    this.core(
      new Gauge({
        name: "nms_store_embedded_up",
        help: "1 while the embedded PostgreSQL server runs, 0 while it is down (being restarted). Absent with an external DATABASE_URL.",
        registers: [],
        collect() {
          this.set(embeddedUp() ? 1 : 0);
        },
      }),
    );
  }

  /** A plugin's `ctx.metrics`: names prefixed `nms_<plugin>_`, a clash with any registered name refused. */
  forPlugin(pluginId: string): PluginMetrics {
    const prefix = `nms_${pluginId.replace(/-/g, "_")}_`;
    const check = <L extends string>(kind: string, def: MetricDefinition<L>): { name: string; help: string; labelNames: L[] } => {
      const why = (m: string) => new Error(`plugin "${pluginId}": ${kind} "${String(def?.name)}": ${m}`);
      if (typeof def?.name !== "string" || !NAME.test(def.name)) throw why("name must be snake_case (a-z, 0-9, _), starting with a letter");
      if (typeof def.help !== "string" || !def.help.trim()) throw why("help must say what it counts");
      if (kind === "counter" && !def.name.endsWith("_total")) throw why("a counter's name ends in _total");
      const labelNames = [...(def.labelNames ?? [])];
      for (const l of labelNames) {
        if (typeof l !== "string" || !LABEL.test(l) || l.startsWith("__")) throw why(`label "${String(l)}" must be snake_case and not start with __`);
        if (kind === "histogram" && l === "le") throw why(`label "le" is reserved in histograms`);
      }
      if (new Set(labelNames).size !== labelNames.length) throw why("a label is named twice");
      const name = prefix + def.name;
      const prior = this.owners.get(name);
      if (prior) throw why(`${name} is already registered${prior === pluginId ? "" : ` by ${prior === "core" ? "the kernel" : `plugin "${prior}"`}`}`);
      return { name, help: def.help, labelNames };
    };
    const log = this.log;
    return {
      counter: <L extends string = never>(
        def: MetricDefinition<L> & { collect?: (report: (labels: MetricLabels<L>, total: number) => void) => void | Promise<void> },
      ): MetricCounter<L> => {
        const checked = check<string>("counter", def);
        const collect = def.collect;
        const c = new Counter<string>({
          ...checked,
          registers: [],
          ...(collect
            ? {
                async collect() {
                  const totals: [Labels, number][] = [];
                  try {
                    await collect((labels, total) => void (Number.isFinite(total) && total >= 0 && totals.push([(labels ?? {}) as Labels, total])));
                  } catch (err) {
                    log.warn("metric collect failed", { plugin: pluginId, metric: checked.name, error: (err as Error).message });
                    return;
                  }
                  this.reset();
                  for (const [labels, total] of totals) this.inc(labels, total);
                },
              }
            : {}),
        });
        this.register(pluginId, c);
        return { inc: (labels, value = 1) => c.inc((labels ?? {}) as Labels, value) };
      },
      gauge: <L extends string = never>(def: MetricDefinition<L> & { collect?: (gauge: MetricGauge<L>) => void | Promise<void> }): MetricGauge<L> => {
        const checked = check<string>("gauge", def);
        const wrapper: MetricGauge<L> = {
          set: (labels, value) => g.set((labels ?? {}) as Labels, value),
          inc: (labels, value = 1) => g.inc((labels ?? {}) as Labels, value),
          dec: (labels, value = 1) => g.dec((labels ?? {}) as Labels, value),
        };
        const collect = def.collect;
        const g = new Gauge<string>({
          ...checked,
          registers: [],
          ...(collect
            ? {
                // A failing collect loses this gauge's update, not the whole scrape.
                async collect() {
                  try {
                    await collect(wrapper);
                  } catch (err) {
                    log.warn("metric collect failed", { plugin: pluginId, metric: checked.name, error: (err as Error).message });
                  }
                },
              }
            : {}),
        });
        this.register(pluginId, g);
        return wrapper;
      },
      histogram: <L extends string = never>(def: MetricDefinition<L> & { buckets?: readonly number[] }): MetricHistogram<L> => {
        const checked = check<string>("histogram", def);
        const buckets = [...(def.buckets ?? DURATION_BUCKETS)];
        if (!buckets.length || buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1])))
          throw new Error(`plugin "${pluginId}": histogram "${def.name}": buckets must be finite and increasing`);
        const h = new Histogram<string>({ ...checked, buckets, registers: [] });
        this.register(pluginId, h);
        return {
          observe: (labels, value) => h.observe((labels ?? {}) as Labels, value),
          startTimer: (labels?: MetricLabels<L>) => {
            const started = process.hrtime.bigint();
            return (more?: MetricLabels<L>) => {
              const seconds = Number(process.hrtime.bigint() - started) / 1e9;
              h.observe({ ...(labels ?? {}), ...(more ?? {}) } as Labels, seconds);
              return seconds;
            };
          },
        };
      },
    };
  }

  /** The exposition text: this kernel's metrics, then the process's. */
  async scrape(): Promise<string> {
    const own = await this.registry.metrics();
    const proc = await processMetrics().metrics();
    // prom-client writes NaN as "Nan"; the format (and strict readers) want "NaN".
    return (own + (own && !own.endsWith("\n") ? "\n" : "") + proc).replace(/ Nan$/gm, " NaN");
  }
}
