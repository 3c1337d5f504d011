import { Inject, Injectable } from "@tsed/di";
import { badRequest, notFound, type Scope, scopeFolders } from "../../../core/index.js";
import {
  HISTORY_DEFAULT_SECS,
  HISTORY_MAX_POINTS,
  INTERFACE_TOP_AGGS,
  INTERFACE_TOP_LIMIT,
  INTERFACE_TOP_METRICS,
  LATEST_MAX_AGE_SECS,
  type InterfaceTopAgg,
  type InterfaceTopMetric,
  type InterfaceTopResult,
  type MetricHistory,
  type MetricHistoryQuery,
  type NodeInterfaceView,
  type NodeSeriesView,
} from "../models/MetricsModels.js";
import { MetricsRepository, type RollupSpec } from "../repositories/MetricsRepository.js";

const NONE = -1;
const METRIC_NAME = /^[A-Za-z_:][A-Za-z0-9_:]{0,99}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/** A range bound: Unix seconds (digits) or an RFC 3339 timestamp; null when it is neither. */
export function parseTimeBound(value: string): number | null {
  const v = value.trim();
  if (/^\d{1,12}$/.test(v)) return Number(v) * 1000;
  if (!RFC3339.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : null;
}

function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return INTERFACE_TOP_LIMIT.default;
  return Math.min(INTERFACE_TOP_LIMIT.max, Math.max(INTERFACE_TOP_LIMIT.min, Math.trunc(limit)));
}

/** Every windowed answer the rollups keep: each metric of interface-top under each windowed agg. */
const ROLLUP_SPECS: RollupSpec[] = Object.entries(INTERFACE_TOP_AGGS).flatMap(([agg, w]) =>
  w === null ? [] : Object.entries(INTERFACE_TOP_METRICS).map(([metric, metrics]) => ({ metric, agg, metrics, fn: w.fn, secs: w.secs })),
);

/**
 * How old the windowed rollups may be: younger than ROLLUP_FRESH_MS they answer as they are; older, they still answer
 * while one refresh runs in the background; older than ROLLUP_MAX_AGE_MS (or never computed) the request waits for a
 * refresh. So a window's answer lags by at most about ROLLUP_FRESH_MS plus one refresh, and nothing is computed while
 * nobody asks.
 */
export const ROLLUP_FRESH_MS = 30_000;
const ROLLUP_MAX_AGE_MS = 300_000;

/** Metric reads for dashboards: interface top-N, a node's interfaces, a node's metric history. */
@Injectable()
export class MetricsService {
  @Inject(MetricsRepository)
  private repo: MetricsRepository;

  /** Until when (this process's clock) the rollups are known to be fresh: no need to ask the database before. */
  private rollupsFreshUntil = 0;
  private refreshing: Promise<unknown> | null = null;

  /** `metric` and `agg` come checked by the route's enums (a value outside them is 400 validation_failed there). */
  async interfaceTop(metric: InterfaceTopMetric, agg: InterfaceTopAgg | undefined, limit: number | undefined, scope: Scope): Promise<InterfaceTopResult> {
    const folders = scopeFolders(scope);
    const window = INTERFACE_TOP_AGGS[agg ?? "latest"];
    const metrics = INTERFACE_TOP_METRICS[metric];
    let entries;
    if (window === null) {
      entries = await this.repo.interfaceTopLatest({ metrics, latestMaxAgeSecs: LATEST_MAX_AGE_SECS, folders, limit: clampLimit(limit) });
    } else {
      await this.freshRollups();
      entries = await this.repo.interfaceTopRollup({ metric, agg: agg!, metrics, windowSecs: window.secs, folders, limit: clampLimit(limit) });
    }
    return { entries, partial: folders !== null };
  }

  /** Makes sure the windowed rollups are young enough to answer (see ROLLUP_FRESH_MS), refreshing them if not. */
  private async freshRollups(): Promise<void> {
    if (Date.now() < this.rollupsFreshUntil) return;
    const { computedMs, nowMs } = await this.repo.rollupAge();
    const age = computedMs === null ? Infinity : nowMs - computedMs;
    if (age < ROLLUP_FRESH_MS) {
      this.rollupsFreshUntil = Date.now() + (ROLLUP_FRESH_MS - age);
      return;
    }
    const wait = age >= ROLLUP_MAX_AGE_MS;
    if (this.refreshing) {
      if (wait) await this.refreshing.catch(() => undefined);
      if (!wait) return;
    }
    // One refresh per process at a time; across replicas the repository's advisory lock keeps it to one.
    const started = Date.now();
    const run = this.repo.refreshRollups(ROLLUP_SPECS, wait, ROLLUP_FRESH_MS).then((computed) => {
      if (computed) this.rollupsFreshUntil = started + ROLLUP_FRESH_MS;
    });
    this.refreshing = run.finally(() => (this.refreshing = null));
    if (wait) await run;
    else void this.refreshing.catch(() => undefined);
  }

  async nodeInterfaces(nodeId: string, scope: Scope): Promise<NodeInterfaceView[]> {
    await this.requireNode(nodeId, scope);
    return this.repo.nodeInterfaces(nodeId);
  }

  async nodeSeries(nodeId: string, metric: string | undefined, scope: Scope): Promise<NodeSeriesView[]> {
    if (metric !== undefined && !METRIC_NAME.test(metric))
      throw badRequest("invalid_metric", "metric must be an identifier ([A-Za-z_:][A-Za-z0-9_:]*, at most 100 characters).");
    await this.requireNode(nodeId, scope);
    return this.repo.nodeSeries(nodeId, metric ?? null);
  }

  async history(nodeId: string, metric: string, p: MetricHistoryQuery, scope: Scope): Promise<MetricHistory> {
    if (!METRIC_NAME.test(metric)) throw badRequest("invalid_metric", "metric must be an identifier ([A-Za-z_:][A-Za-z0-9_:]*, at most 100 characters).");
    const toMs = p.to === undefined ? Date.now() : parseTimeBound(p.to);
    if (toMs === null) throw badRequest("invalid_range", "to must be an RFC 3339 timestamp or Unix seconds.");
    const fromMs = p.from === undefined ? toMs - HISTORY_DEFAULT_SECS * 1000 : parseTimeBound(p.from);
    if (fromMs === null) throw badRequest("invalid_range", "from must be an RFC 3339 timestamp or Unix seconds.");
    if (fromMs >= toMs) throw badRequest("invalid_range", "from must be before to.");
    const step = p.step ?? null;
    if (step !== null && Math.ceil((toMs - fromMs) / (step * 1000)) + 1 > HISTORY_MAX_POINTS) {
      throw badRequest("too_many_points", `The range holds more than ${HISTORY_MAX_POINTS} buckets of ${step} s; ask for a larger step or a shorter range.`);
    }
    await this.requireNode(nodeId, scope);
    const points = await this.repo.history({
      nodeId,
      metric,
      ifindex: p.ifindex ?? NONE,
      row: p.row ?? NONE,
      fromMs,
      toMs,
      step,
      limit: step === null ? HISTORY_MAX_POINTS + 1 : HISTORY_MAX_POINTS,
    });
    if (step === null && points.length > HISTORY_MAX_POINTS) {
      throw badRequest(
        "too_many_points",
        `The range holds more than ${HISTORY_MAX_POINTS} samples; ask for a step (bucket width in seconds) or a shorter range.`,
      );
    }
    return {
      node_id: nodeId,
      metric,
      ifindex: p.ifindex ?? null,
      row: p.row ?? null,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      step,
      points,
    };
  }

  /** 404 for a node that is missing or outside the caller's scope (the same answer for both). */
  private async requireNode(nodeId: string, scope: Scope): Promise<void> {
    if (!(await this.repo.nodeVisible(nodeId, scopeFolders(scope)))) throw notFound("No such node.");
  }
}
