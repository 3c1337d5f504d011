import { Inject, Injectable } from "@tsed/di";
import { METRICS, SNMP_AGENT_STATUS, type PollerEvent, type ReachabilityEvent, type Sample } from "../../polling/contract.js";
import { EVENT_METRIC, type ExternalAlert, type SubjectAlert } from "../contract.js";
import { AGENT_CHECK_ID, LIVENESS_CHECK_ID, LIVENESS_MUTE_METRIC, nodeIncidentKey, POOL_CHECK_ID, poolIncidentKey } from "../lib/checks.js";
import { agentDownTitle, poolOfflineTitle, unreachableTitle } from "../lib/titles.js";
import type { DirectoryEntry } from "../repositories/ThresholdRepository.js";
import { registerEngineMetrics } from "./engineMetrics.js";
import { IncidentRepository } from "../repositories/IncidentRepository.js";
import { IncidentWriter } from "./IncidentWriter.js";
import { OpenIncidents, type OpenIncident } from "./OpenIncidents.js";
import { RuleResolver } from "./RuleResolver.js";
import { ThresholdEvaluator } from "./ThresholdEvaluator.js";
import { TransitionQueue } from "./TransitionQueue.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

export const subjectIncidentKey = (kind: string, name: string, checkId: string) => `${kind}:${name}:${checkId}`;

/** Counters for benchmarks and health. */
export interface EngineStats {
  samples_received: number;
  samples_evaluated: number;
  transitions: number;
  flushes: number;
  flush_failures: number;
}

/**
 * The alert engine. Consumes the polling plugin's bus events and commits incidents:
 *
 * - `polling.sample`: each sample (backfilled ones are ignored: alerts are not
 *   backfilled) is evaluated against the rule that applies to it (RuleResolver) by
 *   ThresholdEvaluator (dwell, fire, severity change, clear, a rule that changed).
 * - `polling.reachability`: unreachable opens the node's liveness incident (state
 *   unreachable, critical, no metric, check LIVENESS_CHECK_ID); reachable clears it.
 * - `polling.poller.online` / `offline`: the pollers of each pool are tracked from
 *   these events; when every known poller of a pool is offline a `pool` incident
 *   (subject_name = the pool, check POOL_CHECK_ID) opens; one poller back clears it.
 * - `inventory.node.deleted`: the node's incidents are cleared and its state dropped.
 *
 * Open incidents are held by OpenIncidents, whose transitions TransitionQueue batches:
 * everything decided within one flush window (`pluginConfig.alerts.flushMs`) is written
 * by IncidentWriter in one transaction, history rows sharing `recorded_at`. Open
 * incidents are re-read from active_alerts at start, so a restart neither fires again
 * nor forgets to clear.
 */
@Injectable()
export class AlertEngine {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  @Inject(RuleResolver)
  private resolver: RuleResolver;

  @Inject(IncidentWriter)
  private writer: IncidentWriter;

  @Inject(IncidentRepository)
  private incidentRepo: IncidentRepository;

  private running = false;
  private unsubscribe: (() => void)[] = [];
  private queue = new TransitionQueue({
    write: (batch, extras) => this.writer.write(batch, extras),
    flushMs: () => this.ctx.config.flushMs,
    log: () => this.ctx.log,
    running: () => this.running,
  });
  private incidents = new OpenIncidents(this.queue);
  private thresholds = new ThresholdEvaluator(this.incidents);
  private pools = new Map<string, Map<string, boolean>>();
  private seen = new Set<string>();
  /** Polls in a row in which a reachable node's SNMP agent did not answer, by node. */
  private agentFailures = new Map<string, number>();
  private events: Promise<void> = Promise.resolve();
  private counters = { samples_received: 0, samples_evaluated: 0 };
  private metricsRegistered = false;

  get isRunning(): boolean {
    return this.running;
  }

  stats(): EngineStats {
    const q = this.queue.counts;
    return { ...this.counters, transitions: q.transitions, flushes: q.flushes, flush_failures: q.flush_failures };
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
    this.ctx.log.info("alert engine started", { open_incidents: this.incidents.size, flush_ms: this.ctx.config.flushMs });
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
    return this.queue.flushNow();
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
      const open = this.incidents.get(key);
      if (open?.severity === a.severity) return;
      if (open) this.incidents.clear(open, null, null);
      this.incidents.fire(
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
      const open = this.incidents.get(nodeIncidentKey(nodeId.toLowerCase(), checkId, null, null));
      if (!open) return;
      cleared = true;
      this.incidents.clear(open, null, null);
    }).then(() => cleared);
  }

  /** Opens (or moves the severity of) a subject incident: no node, no metric, no folder (only unrestricted scopes see it). */
  raiseSubject(a: SubjectAlert): Promise<boolean> {
    let raised = false;
    return this.inOrder(async () => {
      if (!this.running) return;
      raised = true;
      const key = subjectIncidentKey(a.subject_kind, a.subject_name, a.check_id);
      const open = this.incidents.get(key);
      if (open?.severity === a.severity) return;
      if (open) this.incidents.clear(open, null, null);
      this.incidents.fire(
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
      const open = this.incidents.get(subjectIncidentKey(kind, name, checkId));
      if (!open) return;
      cleared = true;
      this.incidents.clear(open, null, null);
    }).then(() => cleared);
  }

  /** Open incidents of external checks (metric EVENT_METRIC), so their owner can resume its own state after a restart. */
  openExternal(): { node_id: string; check_id: string; severity: OpenIncident["severity"]; fired_at_ms: number }[] {
    return this.incidents
      .all()
      .filter((i) => i.metric === EVENT_METRIC && i.node_id !== null)
      .map((i) => ({ node_id: i.node_id!, check_id: i.check_id, severity: i.severity, fired_at_ms: i.fired_at_ms }));
  }

  /** Clears the open incidents of a threshold that was deleted. */
  clearCheck(checkId: string): void {
    if (!this.running) return;
    this.thresholds.clearCheck(checkId);
    for (const inc of this.incidents.all()) if (inc.check_id === checkId) this.incidents.clear(inc, null, null);
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
      const relevant = s.metric === METRICS.snmpAgentStatus || index.hasMetric(s.metric) || this.thresholds.tracks(s.metric);
      if (relevant) live.push(s);
      if (relevant || !this.seen.has(node)) nodeIds.add(node);
    }
    if (nodeIds.size === 0) return;
    const nodes = await this.resolver.nodes(nodeIds);
    for (const id of nodeIds) {
      const entry = nodes.get(id);
      if (entry) this.markSeen(entry);
    }
    // Nodes this batch found unreachable: their liveness incident says it, their agent's silence adds nothing.
    const unreachable = new Set(samples.filter((s) => s.metric === METRICS.reachable && s.value === 0).map((s) => s.node_id.toLowerCase()));
    for (const s of live) {
      const entry = nodes.get(s.node_id.toLowerCase());
      if (!entry) continue; // not (or no longer) in the inventory
      if (s.metric === METRICS.snmpAgentStatus) this.onAgentStatus(s, entry, unreachable.has(entry.id));
      if (!index.hasMetric(s.metric) && !this.thresholds.tracks(s.metric)) continue;
      this.counters.samples_evaluated++;
      this.thresholds.evaluate(
        s,
        entry,
        index.resolve({ ...s, node_id: entry.id, folder_path: entry.folder_path, profile_id: entry.profile_id })?.compiled.rule ?? null,
      );
    }
  }

  private async onReachability(e: ReachabilityEvent): Promise<void> {
    if (!this.running) return;
    const node = e.node_id.toLowerCase();
    const key = nodeIncidentKey(node, LIVENESS_CHECK_ID, null, null);
    const open = this.incidents.get(key);
    if (e.reachable && !open && this.seen.has(node)) return;
    const entry = (await this.resolver.nodes([node])).get(node);
    if (!entry) return;
    this.markSeen(entry);
    if (e.reachable) {
      if (open) this.incidents.clear(open, null, null);
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
    this.incidents.fire(inc, LIVENESS_MUTE_METRIC);
  }

  /**
   * The SNMP agent of a reachable node: `agentDownPolls` polls in a row without an answer open its incident (warning,
   * state unknown: what the agent would tell is unknown), the first answer clears it. Polls while the node is
   * unreachable do not count (the liveness incident covers them).
   */
  private onAgentStatus(s: Sample, entry: DirectoryEntry, unreachable: boolean): void {
    const key = nodeIncidentKey(entry.id, AGENT_CHECK_ID, null, null);
    const open = this.incidents.get(key);
    if (s.value === SNMP_AGENT_STATUS.answering) {
      this.agentFailures.delete(entry.id);
      if (open) this.incidents.clear(open, s.value, null);
      return;
    }
    if (unreachable || this.incidents.get(nodeIncidentKey(entry.id, LIVENESS_CHECK_ID, null, null))) return;
    const failures = (this.agentFailures.get(entry.id) ?? 0) + 1;
    this.agentFailures.set(entry.id, failures);
    if (open || failures < this.ctx.config.agentDownPolls) return;
    const reason = s.value === SNMP_AGENT_STATUS.timeout ? "timeout" : s.value === SNMP_AGENT_STATUS.auth ? "credentials refused" : "error";
    this.incidents.fire(
      {
        incident_key: key,
        subject_kind: "node",
        node_id: entry.id,
        subject_name: null,
        check_id: AGENT_CHECK_ID,
        title: agentDownTitle(entry.name, reason),
        fired_at_ms: s.at_unix_ms,
        folder_path: entry.folder_path,
        metric: METRICS.snmpAgentStatus,
        ifindex: null,
        if_name: null,
        row_key: null,
        row_name: null,
        severity: "warning",
        state: "unknown",
        direction: null,
        observed_value: s.value,
        threshold_value: null,
      },
      METRICS.snmpAgentStatus,
    );
  }

  private onPoller(e: PollerEvent, online: boolean): void {
    if (!this.running) return;
    let pollers = this.pools.get(e.pool);
    if (!pollers) this.pools.set(e.pool, (pollers = new Map()));
    pollers.set(e.poller_id, online);
    const key = poolIncidentKey(e.pool);
    const open = this.incidents.get(key);
    if (online) {
      if (open) this.incidents.clear(open, null, null);
      return;
    }
    if (open || [...pollers.values()].some(Boolean)) return;
    this.incidents.fire(
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
    this.thresholds.forgetNode(node);
    this.agentFailures.delete(node);
    for (const inc of this.incidents.all()) if (inc.node_id === node) this.incidents.clear(inc, null, null);
    this.seen.delete(node);
    this.queue.nodeDeleted(node);
  }

  private markSeen(entry: DirectoryEntry): void {
    if (this.seen.has(entry.id)) return;
    this.seen.add(entry.id);
    this.queue.nodeSeen(entry);
  }

  /** The engine's metrics (once per kernel; see engineMetrics.ts). */
  private registerMetrics(): void {
    if (this.metricsRegistered) return;
    this.metricsRegistered = true;
    const { transitions, dropped } = registerEngineMetrics(this.ctx.metrics, {
      samplesReceived: () => this.counters.samples_received,
      samplesEvaluated: () => this.counters.samples_evaluated,
      flushFailures: () => this.queue.counts.flush_failures,
      queueDepth: () => this.queue.depth,
      openIncidents: () => this.incidents.size,
      bySeverity: () => {
        const counts: Record<string, number> = {};
        for (const inc of this.incidents.all()) counts[inc.severity] = (counts[inc.severity] ?? 0) + 1;
        return counts;
      },
      nodeStates: () => this.incidentRepo.nodeStateCounts(),
    });
    this.queue.setMetrics(transitions, dropped);
  }

  // ---- state --------------------------------------------------------------------------------------

  private resetState(): void {
    this.queue.reset();
    this.incidents.reset();
    this.thresholds.reset();
    this.pools = new Map();
    this.seen = new Set();
    this.agentFailures = new Map();
    this.events = Promise.resolve();
    this.counters = { samples_received: 0, samples_evaluated: 0 };
  }

  /** Open incidents from active_alerts: the engine continues where the last run stopped. */
  private async restore(): Promise<void> {
    const rows = await this.writer.loadActive();
    const nodeIds = [...new Set(rows.map((r) => r.node_id).filter((id): id is string => id !== null))];
    const nodes = await this.resolver.nodes(nodeIds);
    for (const r of rows) {
      const inc: OpenIncident = { ...r, folder_path: r.node_id ? (nodes.get(r.node_id)?.folder_path ?? []) : [] };
      this.incidents.restore(inc);
      this.thresholds.restore(inc);
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
