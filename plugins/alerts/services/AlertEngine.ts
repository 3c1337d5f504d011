import { Inject, Injectable } from "@tsed/di";
import { type MetricCounter } from "../../../core/index.js";
import type { PollerEvent, ReachabilityEvent, Sample } from "../../polling/contract.js";
import { EVENT_METRIC, type ExternalAlert, type SubjectAlert } from "../contract.js";
import { classify, hitAtLevel, LEVEL_OF, levelOf, type BandHit, type Level } from "../lib/bands.js";
import { isThresholdCheck, LIVENESS_CHECK_ID, LIVENESS_MUTE_METRIC, nodeIncidentKey, POOL_CHECK_ID, poolIncidentKey } from "../lib/checks.js";
import { dwellStep, newDwellState, type DwellState } from "../lib/dwell.js";
import { historyRow } from "../lib/history.js";
import type { ThresholdRule } from "../lib/rules.js";
import { poolOfflineTitle, thresholdTitle, unreachableTitle } from "../lib/titles.js";
import type { ActiveRow } from "../repositories/IncidentRepository.js";
import type { DirectoryEntry } from "../repositories/ThresholdRepository.js";
import { IncidentWriter, type PendingTransition } from "./IncidentWriter.js";
import { RuleResolver } from "./RuleResolver.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/** An open incident as the engine keeps it: its active row plus the node's folders (scoped delivery, maintenance). */
interface OpenIncident extends ActiveRow {
  folder_path: string[];
}

/** Per series (node + metric + port + row): the rule tracking it, the dwell state and its open incident. */
interface SeriesState {
  node_id: string;
  metric: string;
  check_id: string;
  dwell: DwellState;
  open: OpenIncident | null;
}

export const subjectIncidentKey = (kind: string, name: string, checkId: string) => `${kind}:${name}:${checkId}`;

/** Counters for benchmarks and health. */
export interface EngineStats {
  samples_received: number;
  samples_evaluated: number;
  transitions: number;
  flushes: number;
  flush_failures: number;
}

const MAX_FLUSH_ATTEMPTS = 5;
/** Above this many queued transitions (the store is down for long) the oldest are dropped, with an error logged. */
const MAX_PENDING = 200_000;

const seriesKey = (nodeId: string, metric: string, ifindex: number | null, row: number | null) => `${nodeId}|${metric}|${ifindex ?? ""}|${row ?? ""}`;

/**
 * The alert engine. Consumes the polling plugin's bus events and commits incidents:
 *
 * - `polling.sample`: each sample (backfilled ones are ignored: alerts are not
 *   backfilled) is evaluated against the rule that applies to it (RuleResolver);
 *   a change of severity is committed after the rule's dwell_samples consecutive
 *   samples agree (lib/dwell.ts). A fire opens the incident node + check (+ port or
 *   row); a severity change is a clear of the old severity followed by a fire of the
 *   new one (two history rows, one incident row moved); a clear closes it. When the
 *   rule that applies to a series changes (a more specific rule was added, the rule
 *   was deleted or no longer covers it), an open incident of the old rule is cleared
 *   at once and the new rule starts from normal.
 * - `polling.reachability`: unreachable opens the node's liveness incident (state
 *   unreachable, critical, no metric, check LIVENESS_CHECK_ID); reachable clears it.
 * - `polling.poller.online` / `offline`: the pollers of each pool are tracked from
 *   these events; when every known poller of a pool is offline a `pool` incident
 *   (subject_name = the pool, check POOL_CHECK_ID) opens; one poller back clears it.
 * - `inventory.node.deleted`: the node's incidents are cleared and its state dropped.
 *
 * Transitions are batched: everything decided within one flush window
 * (`pluginConfig.alerts.flushMs`) is written by IncidentWriter in one transaction,
 * history rows sharing `recorded_at`. Open incidents are re-read from active_alerts
 * at start, so a restart neither fires again nor forgets to clear.
 */
@Injectable()
export class AlertEngine {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  @Inject(RuleResolver)
  private resolver: RuleResolver;

  @Inject(IncidentWriter)
  private writer: IncidentWriter;

  private running = false;
  private unsubscribe: (() => void)[] = [];
  private series = new Map<string, SeriesState>();
  /** Metrics that have series state (a metric whose rules all went must still clear its incidents). */
  private seriesMetrics = new Map<string, number>();
  private open = new Map<string, OpenIncident>();
  private pools = new Map<string, Map<string, boolean>>();
  private seen = new Set<string>();

  private pending: PendingTransition[] = [];
  private pendingAttempts = 0;
  private pendingNodes = new Map<string, { id: string; folder_path: readonly string[] }>();
  private pendingForget = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private events: Promise<void> = Promise.resolve();
  private counters: EngineStats = { samples_received: 0, samples_evaluated: 0, transitions: 0, flushes: 0, flush_failures: 0 };
  private transitionsMetric?: MetricCounter<"kind">;
  private droppedMetric?: MetricCounter;

  get isRunning(): boolean {
    return this.running;
  }

  stats(): EngineStats {
    return { ...this.counters };
  }

  /** Restores open incidents and subscribes to the bus. Idempotent; does nothing without a store (skeleton mode). */
  async start(): Promise<void> {
    if (this.running) return;
    if (!this.ctx.store.available) {
      this.ctx.log.info("alert engine not started: no store (skeleton mode)");
      return;
    }
    this.registerMetrics();
    this.resetState();
    this.resolver.start();
    await this.restore();
    await this.resolver.rules();
    const bus = this.ctx.bus;
    this.unsubscribe = [
      bus.on("polling.sample", (e) => this.inOrder(() => this.onSamples(e.samples))),
      bus.on("polling.reachability", (e) => this.inOrder(() => this.onReachability(e))),
      bus.on("polling.poller.online", (e) => this.onPoller(e, true)),
      bus.on("polling.poller.offline", (e) => this.onPoller(e, false)),
      bus.on("inventory.node.deleted", (e) => this.onNodeDeleted(e.id)),
    ];
    this.running = true;
    this.ctx.log.info("alert engine started", { open_incidents: this.open.size, flush_ms: this.ctx.config.flushMs });
  }

  /** Unsubscribes and writes what is pending. Idempotent. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    this.resolver.stop();
    await this.events;
    await this.flushNow();
  }

  /** Writes the pending transitions now (instead of at the end of the flush window). */
  flushNow(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.chain = this.chain.then(() => this.flushOnce());
    return this.chain;
  }

  // ---- event-driven incidents (EventAlertService, for the events plugin) ---------------------------

  /**
   * Opens a node incident for an external check (an event rule): node + check, metric EVENT_METRIC,
   * no port or row. An open incident of the same severity is left alone; another severity moves it
   * (a clear then a fire, as thresholds do). False when the node is not in the inventory.
   */
  raiseExternal(a: ExternalAlert): Promise<boolean> {
    let raised = false;
    return this.inOrder(async () => {
      if (!this.running) return;
      const node = a.node_id.toLowerCase();
      const entry = (await this.resolver.nodes([node])).get(node);
      if (!entry) return;
      raised = true;
      this.markSeen(entry);
      const key = nodeIncidentKey(node, a.check_id, null, null);
      const open = this.open.get(key);
      if (open?.severity === a.severity) return;
      if (open) this.queueClear(open, null, null);
      this.queueOpen(
        {
          incident_key: key,
          subject_kind: "node",
          node_id: node,
          subject_name: null,
          check_id: a.check_id,
          metric: EVENT_METRIC,
          ifindex: null,
          if_name: null,
          row_key: null,
          row_name: null,
          severity: a.severity,
          state: a.severity === "info" ? "ok" : a.severity,
          direction: null,
          observed_value: a.observed_value ?? null,
          threshold_value: a.threshold_value ?? null,
          title: a.title,
          fired_at_ms: a.at_ms,
          folder_path: entry.folder_path,
        },
        EVENT_METRIC,
      );
    }).then(() => raised);
  }

  /** Clears the external incident node + check; false when none is open. */
  clearExternal(nodeId: string, checkId: string): Promise<boolean> {
    let cleared = false;
    return this.inOrder(async () => {
      const open = this.open.get(nodeIncidentKey(nodeId.toLowerCase(), checkId, null, null));
      if (!open) return;
      cleared = true;
      this.queueClear(open, null, null);
    }).then(() => cleared);
  }

  /** Opens (or moves the severity of) a subject incident: no node, no metric, no folder (only unrestricted scopes see it). */
  raiseSubject(a: SubjectAlert): Promise<boolean> {
    let raised = false;
    return this.inOrder(async () => {
      if (!this.running) return;
      raised = true;
      const key = subjectIncidentKey(a.subject_kind, a.subject_name, a.check_id);
      const open = this.open.get(key);
      if (open?.severity === a.severity) return;
      if (open) this.queueClear(open, null, null);
      this.queueOpen(
        {
          incident_key: key,
          subject_kind: a.subject_kind,
          node_id: null,
          subject_name: a.subject_name,
          check_id: a.check_id,
          metric: null,
          ifindex: null,
          if_name: null,
          row_key: null,
          row_name: null,
          severity: a.severity,
          state: a.state ?? (a.severity === "info" ? "ok" : a.severity),
          direction: null,
          observed_value: null,
          threshold_value: null,
          title: a.title,
          fired_at_ms: a.at_ms,
          folder_path: [],
        },
        null,
      );
    }).then(() => raised);
  }

  /** Clears a subject incident; false when none is open. */
  clearSubject(kind: SubjectAlert["subject_kind"], name: string, checkId: string): Promise<boolean> {
    let cleared = false;
    return this.inOrder(async () => {
      const open = this.open.get(subjectIncidentKey(kind, name, checkId));
      if (!open) return;
      cleared = true;
      this.queueClear(open, null, null);
    }).then(() => cleared);
  }

  /** Open incidents of external checks (metric EVENT_METRIC), so their owner can resume its own state after a restart. */
  openExternal(): { node_id: string; check_id: string; severity: OpenIncident["severity"]; fired_at_ms: number }[] {
    return [...this.open.values()]
      .filter((i) => i.metric === EVENT_METRIC && i.node_id !== null)
      .map((i) => ({ node_id: i.node_id!, check_id: i.check_id, severity: i.severity, fired_at_ms: i.fired_at_ms }));
  }

  /** Clears the open incidents of a threshold that was deleted. */
  clearCheck(checkId: string): void {
    if (!this.running) return;
    for (const [key, st] of this.series) {
      if (st.check_id !== checkId) continue;
      if (st.open) this.queueClear(st.open, null, null);
      this.dropSeries(key, st);
    }
    for (const inc of [...this.open.values()]) if (inc.check_id === checkId) this.queueClear(inc, null, null);
  }

  // ---- events -------------------------------------------------------------------------------------

  /**
   * Runs sample and reachability handling one event after the other: a handler may wait for the store
   * (a node's directory row, the rules), and the samples of one series must be judged in arrival order.
   */
  private inOrder(fn: () => Promise<void>): Promise<void> {
    const run = this.events.then(fn).catch((err) => this.ctx.log.error("alert engine: event handling failed", { error: err }));
    this.events = run;
    return run;
  }

  private async onSamples(samples: readonly Sample[]): Promise<void> {
    if (!this.running || samples.length === 0) return;
    const index = await this.resolver.rules();
    const live: Sample[] = [];
    const nodeIds = new Set<string>();
    for (const s of samples) {
      if (s.backfill) continue;
      this.counters.samples_received++;
      const node = s.node_id.toLowerCase();
      const relevant = index.hasMetric(s.metric) || this.seriesMetrics.has(s.metric);
      if (relevant) live.push(s);
      if (relevant || !this.seen.has(node)) nodeIds.add(node);
    }
    if (nodeIds.size === 0) return;
    const nodes = await this.resolver.nodes(nodeIds);
    for (const id of nodeIds) {
      const entry = nodes.get(id);
      if (entry) this.markSeen(entry);
    }
    for (const s of live) {
      const entry = nodes.get(s.node_id.toLowerCase());
      if (!entry) continue; // not (or no longer) in the inventory
      this.counters.samples_evaluated++;
      this.evaluate(s, entry, index.resolve({ ...s, node_id: entry.id, folder_path: entry.folder_path, profile_id: entry.profile_id })?.compiled.rule ?? null);
    }
  }

  private evaluate(s: Sample, entry: DirectoryEntry, rule: ThresholdRule | null): void {
    const key = seriesKey(entry.id, s.metric, s.ifindex, s.row);
    let st = this.series.get(key);
    if (!rule) {
      if (st) {
        if (st.open) this.queueClear(st.open, s.value, s);
        this.dropSeries(key, st);
      }
      return;
    }
    if (!st) {
      st = { node_id: entry.id, metric: s.metric, check_id: rule.id, dwell: newDwellState(0), open: null };
      this.series.set(key, st);
      this.seriesMetrics.set(s.metric, (this.seriesMetrics.get(s.metric) ?? 0) + 1);
    } else if (st.check_id !== rule.id) {
      if (st.open) this.queueClear(st.open, s.value, s);
      st.check_id = rule.id;
      st.dwell = newDwellState(0);
      st.open = null;
    }
    const hit = classify(s.value, rule);
    const committed = dwellStep(st.dwell, levelOf(hit), rule.dwell_samples);
    if (committed === null) {
      // Same severity on the other side of a band (above → below): the open incident names the wrong bound; move it.
      if (st.open && hit && hit.severity === st.open.severity && hit.direction !== st.open.direction) {
        this.queueClear(st.open, s.value, s);
        st.open = this.queueFire(s, entry, rule, hit);
      }
      return;
    }
    if (st.open) {
      this.queueClear(st.open, s.value, s);
      st.open = null;
    }
    if (committed > 0) st.open = this.queueFire(s, entry, rule, hitAtLevel(committed as Level, s.value, rule)!);
  }

  private async onReachability(e: ReachabilityEvent): Promise<void> {
    if (!this.running) return;
    const node = e.node_id.toLowerCase();
    const key = nodeIncidentKey(node, LIVENESS_CHECK_ID, null, null);
    const open = this.open.get(key);
    if (e.reachable && !open && this.seen.has(node)) return;
    const entry = (await this.resolver.nodes([node])).get(node);
    if (!entry) return;
    this.markSeen(entry);
    if (e.reachable) {
      if (open) this.queueClear(open, null, null);
      return;
    }
    if (open) return;
    const inc = unreachableIncident({
      incident_key: key,
      subject_kind: "node",
      node_id: entry.id,
      subject_name: null,
      check_id: LIVENESS_CHECK_ID,
      title: unreachableTitle(entry.name),
      fired_at_ms: e.at_unix_ms,
      folder_path: entry.folder_path,
    });
    this.queueOpen(inc, LIVENESS_MUTE_METRIC);
  }

  private onPoller(e: PollerEvent, online: boolean): void {
    if (!this.running) return;
    let pollers = this.pools.get(e.pool);
    if (!pollers) this.pools.set(e.pool, (pollers = new Map()));
    pollers.set(e.poller_id, online);
    const key = poolIncidentKey(e.pool);
    const open = this.open.get(key);
    if (online) {
      if (open) this.queueClear(open, null, null);
      return;
    }
    if (open || [...pollers.values()].some(Boolean)) return;
    this.queueOpen(
      unreachableIncident({
        incident_key: key,
        subject_kind: "pool",
        node_id: null,
        subject_name: e.pool,
        check_id: POOL_CHECK_ID,
        title: poolOfflineTitle(e.pool),
        fired_at_ms: e.at_unix_ms,
        folder_path: [],
      }),
      null,
    );
  }

  private onNodeDeleted(id: string): void {
    if (!this.running) return;
    const node = id.toLowerCase();
    for (const [key, st] of this.series) if (st.node_id === node) this.dropSeries(key, st);
    for (const inc of [...this.open.values()]) if (inc.node_id === node) this.queueClear(inc, null, null);
    this.seen.delete(node);
    this.pendingNodes.delete(node);
    this.pendingForget.add(node);
    this.schedule();
  }

  // ---- transitions --------------------------------------------------------------------------------

  private queueFire(s: Sample, entry: DirectoryEntry, rule: ThresholdRule, hit: BandHit): OpenIncident {
    const inc: OpenIncident = {
      incident_key: nodeIncidentKey(entry.id, rule.id, s.ifindex, s.row),
      subject_kind: "node",
      node_id: entry.id,
      subject_name: null,
      check_id: rule.id,
      metric: s.metric,
      ifindex: s.ifindex,
      if_name: s.if_name,
      row_key: s.row,
      row_name: s.row_name,
      severity: hit.severity,
      state: hit.severity,
      direction: hit.direction,
      observed_value: s.value,
      threshold_value: hit.threshold,
      title: thresholdTitle({
        metric: s.metric,
        node_name: entry.name,
        ifindex: s.ifindex,
        if_name: s.if_name,
        row: s.row,
        row_name: s.row_name,
        direction: hit.direction,
        threshold: hit.threshold,
      }),
      fired_at_ms: s.at_unix_ms,
      folder_path: entry.folder_path,
    };
    this.queueOpen(inc, s.metric);
    return inc;
  }

  private queueOpen(inc: OpenIncident, muteMetric: string | null): void {
    this.open.set(inc.incident_key, inc);
    const { folder_path, ...active } = inc;
    this.push({ row: historyRow(active), active, folder_path, mute_metric: muteMetric });
  }

  /** Closes an incident; `observed` is the sample that committed the clear (threshold checks), `s` its sample for the port's current name. */
  private queueClear(inc: OpenIncident, observed: number | null, s: Sample | null): void {
    if (this.open.get(inc.incident_key) !== inc) return; // already closed (or replaced) in this window
    this.open.delete(inc.incident_key);
    const row = historyRow(inc, { observed_value: observed, if_name: s?.if_name ?? null });
    const muteMetric = inc.subject_kind !== "node" ? null : inc.check_id === LIVENESS_CHECK_ID ? LIVENESS_MUTE_METRIC : inc.metric;
    this.push({ row, active: null, folder_path: inc.folder_path, mute_metric: muteMetric });
  }

  private push(p: PendingTransition): void {
    this.pending.push(p);
    this.counters.transitions++;
    this.transitionsMetric?.inc({ kind: p.active ? "fire" : "clear" });
    if (this.pending.length > MAX_PENDING) {
      const dropped = this.pending.splice(0, this.pending.length - MAX_PENDING);
      this.droppedMetric?.inc({}, dropped.length);
      this.ctx.log.error("alert engine: transitions dropped, the store did not take them", { dropped: dropped.length });
    }
    this.schedule();
  }

  private markSeen(entry: DirectoryEntry): void {
    if (this.seen.has(entry.id)) return;
    this.seen.add(entry.id);
    this.pendingNodes.set(entry.id, { id: entry.id, folder_path: entry.folder_path });
    this.schedule();
  }

  private dropSeries(key: string, st: SeriesState): void {
    this.series.delete(key);
    const n = (this.seriesMetrics.get(st.metric) ?? 1) - 1;
    if (n <= 0) this.seriesMetrics.delete(st.metric);
    else this.seriesMetrics.set(st.metric, n);
  }

  /** The engine's metrics (once per kernel): its queue of transitions, evaluations, fires and clears, open incidents. */
  private registerMetrics(): void {
    if (this.transitionsMetric) return;
    const m = this.ctx.metrics;
    this.transitionsMetric = m.counter({
      name: "engine_transitions_total",
      help: "Incident transitions the alert engine decided, by kind (fire, clear; a severity change is a clear and a fire).",
      labelNames: ["kind"],
    });
    this.droppedMetric = m.counter({
      name: "engine_transitions_dropped_total",
      help: "Transitions dropped because the queue was full (the store did not take them for long).",
    });
    m.counter({
      name: "engine_samples_received_total",
      help: "Live samples the alert engine received from the bus.",
      collect: (report) => report({}, this.counters.samples_received),
    });
    m.counter({
      name: "engine_evaluations_total",
      help: "Samples the alert engine evaluated against a threshold rule.",
      collect: (report) => report({}, this.counters.samples_evaluated),
    });
    m.counter({
      name: "engine_flush_failures_total",
      help: "Writes of the engine's transitions that failed (retried, then dropped).",
      collect: (report) => report({}, this.counters.flush_failures),
    });
    m.gauge({
      name: "engine_queue_depth",
      help: "Transitions waiting for the engine's next write.",
      collect: (g) => g.set({}, this.pending.length),
    });
    m.gauge({
      name: "engine_open_incidents",
      help: "Incidents the engine holds open.",
      collect: (g) => g.set({}, this.open.size),
    });
  }

  // ---- flushing -----------------------------------------------------------------------------------

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flushNow();
    }, this.ctx.config.flushMs);
    this.timer.unref?.();
  }

  private async flushOnce(): Promise<void> {
    if (this.pending.length === 0 && this.pendingNodes.size === 0 && this.pendingForget.size === 0) return;
    const batch = this.pending;
    const nodes = [...this.pendingNodes.values()];
    const forget = [...this.pendingForget];
    this.pending = [];
    this.pendingNodes = new Map();
    this.pendingForget = new Set();
    try {
      await this.writer.write(batch, { nodes, forget });
      this.counters.flushes++;
      this.pendingAttempts = 0;
    } catch (err) {
      this.counters.flush_failures++;
      this.pendingAttempts++;
      if (this.pendingAttempts >= MAX_FLUSH_ATTEMPTS) {
        this.ctx.log.error("alert engine: flush failed, transitions dropped", { error: err, transitions: batch.length, attempts: this.pendingAttempts });
        this.pendingAttempts = 0;
        return;
      }
      this.ctx.log.warn("alert engine: flush failed, will retry", { error: err, transitions: batch.length, attempts: this.pendingAttempts });
      this.pending = batch.concat(this.pending);
      for (const n of nodes) if (!this.pendingNodes.has(n.id)) this.pendingNodes.set(n.id, n);
      for (const id of forget) this.pendingForget.add(id);
      if (this.running) this.schedule();
    }
  }

  // ---- state --------------------------------------------------------------------------------------

  private resetState(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.series = new Map();
    this.seriesMetrics = new Map();
    this.open = new Map();
    this.pools = new Map();
    this.seen = new Set();
    this.pending = [];
    this.pendingAttempts = 0;
    this.pendingNodes = new Map();
    this.pendingForget = new Set();
    this.chain = Promise.resolve();
    this.events = Promise.resolve();
    this.counters = { samples_received: 0, samples_evaluated: 0, transitions: 0, flushes: 0, flush_failures: 0 };
  }

  /** Open incidents from active_alerts: the engine continues where the last run stopped. */
  private async restore(): Promise<void> {
    const rows = await this.writer.loadActive();
    const nodeIds = [...new Set(rows.map((r) => r.node_id).filter((id): id is string => id !== null))];
    const nodes = await this.resolver.nodes(nodeIds);
    for (const r of rows) {
      const inc: OpenIncident = { ...r, folder_path: r.node_id ? (nodes.get(r.node_id)?.folder_path ?? []) : [] };
      this.open.set(inc.incident_key, inc);
      if (r.node_id && r.metric && r.metric !== EVENT_METRIC && isThresholdCheck(r.check_id) && r.severity !== "info") {
        const key = seriesKey(r.node_id, r.metric, r.ifindex, r.row_key);
        this.series.set(key, { node_id: r.node_id, metric: r.metric, check_id: r.check_id, dwell: newDwellState(LEVEL_OF[r.severity]), open: inc });
        this.seriesMetrics.set(r.metric, (this.seriesMetrics.get(r.metric) ?? 0) + 1);
      }
    }
  }
}

/** A liveness or pool incident: critical, state unreachable, no metric, port, row or values. */
function unreachableIncident(
  subject: Pick<OpenIncident, "incident_key" | "subject_kind" | "node_id" | "subject_name" | "check_id" | "title" | "fired_at_ms" | "folder_path">,
): OpenIncident {
  return {
    ...subject,
    metric: null,
    ifindex: null,
    if_name: null,
    row_key: null,
    row_name: null,
    severity: "critical",
    state: "unreachable",
    direction: null,
    observed_value: null,
    threshold_value: null,
  };
}
