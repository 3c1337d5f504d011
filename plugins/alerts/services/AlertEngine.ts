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
import type { PartitionMessage, PartitionSpace } from "../../../core/index.js";

/** What a replica sends the owner of a subject's partition (ADR 0017): the event it received, as it received it. */
type EngineMessage =
  | { k: "samples"; s: SampleTuple[] }
  | { k: "reachability"; e: ReachabilityEvent }
  | { k: "poller"; e: PollerEvent; online: boolean }
  | { k: "external"; a: ExternalAlert }
  | { k: "external.clear"; node_id: string; check_id: string }
  | { k: "subject"; a: SubjectAlert }
  | { k: "subject.clear"; kind: SubjectAlert["subject_kind"]; name: string; check_id: string }
  | { k: "node.deleted"; id: string }
  | { k: "check.deleted"; check_id: string };

/** A sample as sent to another replica: positional, so a poll's 23 samples do not repeat every key (most of the bytes). */
type SampleTuple = [string, string, number, number, number | null, string | null, number | null, string | null, string, string];
const toTuple = (s: Sample): SampleTuple => [s.node_id, s.metric, s.value, s.at_unix_ms, s.ifindex, s.if_name, s.row, s.row_name, s.pool, s.poller_id];
const fromTuple = (t: SampleTuple): Sample => ({
  node_id: t[0],
  metric: t[1],
  value: t[2],
  at_unix_ms: t[3],
  ifindex: t[4],
  if_name: t[5],
  row: t[6],
  row_name: t[7],
  pool: t[8],
  poller_id: t[9],
  backfill: false,
});

/** The partition key of an incident's subject: the node, else `<kind>:<name>` (a pool is `pool:<name>`). */
const subjectKey = (nodeId: string | null, kind: string, name: string | null) => (nodeId ? nodeId.toLowerCase() : `${kind}:${name ?? ""}`);

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
 *
 * Several replicas (ADR 0017): the engine joins the partition space `alerts`; a subject (a node, `pool:<name>`,
 * `<kind>:<name>`) is judged only by the replica holding its partition. What another replica receives comes here
 * through the partition inbox, so dwell counts are never split. Taking a partition restores its open incidents and
 * replays its recent stored samples (`replaySecs`, after each series' last written transition) into the dwell counts;
 * giving one up writes what is pending and forgets its state. A replica holding every partition (one replica) sends
 * nothing.
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
  private forwardedSamples = 0;
  private metricsRegistered = false;
  private space: PartitionSpace<EngineMessage> | null = null;

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
    await this.resolver.rules();
    this.running = true;
    try {
      // Resolves once this replica took its share: each partition's incidents restored, its recent samples replayed.
      this.space = await this.ctx.store.partitions<EngineMessage>(
        "alerts",
        {
          acquired: (parts, space) => this.serial(() => this.acquire(parts, space)),
          lost: (parts, space) => this.serial(() => this.release(parts, space)),
          received: (messages) => this.serial(() => this.onMessages(messages)),
        },
        this.ctx.log,
      );
    } catch (err) {
      this.running = false;
      throw err;
    }
    const bus = this.ctx.bus;
    this.unsubscribe = [
      bus.on("polling.sample", (e) => this.inOrder(() => this.onSamples(e.samples))),
      bus.on("polling.reachability", (e) => this.inOrder(() => this.onReachability(e))),
      bus.on("polling.poller.online", (e) => this.onPoller(e, true)),
      bus.on("polling.poller.offline", (e) => this.onPoller(e, false)),
      bus.on("inventory.node.deleted", (e) => this.onNodeDeleted(e.id)),
    ];
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
    await this.space?.flush().catch((err) => this.ctx.log.warn("alert engine: forwarded events not written", { error: err }));
    this.space?.leave();
    this.space = null;
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
      raised = await this.raiseExternalNow(a);
    }).then(() => raised);
  }

  /** raiseExternal's work, in turn (forwarded to the node's owner when that is another replica: true then). */
  private async raiseExternalNow(a: ExternalAlert): Promise<boolean> {
    if (!this.running) return false;
    if (this.forward(a.node_id, { k: "external", a })) return true;
    const node = a.node_id.toLowerCase();
    const entry = (await this.resolver.nodes([node])).get(node);
    if (!entry) return false;
    this.markSeen(entry);
    const key = nodeIncidentKey(node, a.check_id, null, null);
    const open = this.incidents.get(key);
    if (open?.severity === a.severity) return true;
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
    return true;
  }

  /** Clears the external incident node + check; false when none is open. */
  clearExternal(nodeId: string, checkId: string): Promise<boolean> {
    let cleared = false;
    return this.inOrder(async () => {
      cleared = this.clearExternalNow(nodeId, checkId);
    }).then(() => cleared);
  }

  private clearExternalNow(nodeId: string, checkId: string): boolean {
    if (this.forward(nodeId, { k: "external.clear", node_id: nodeId, check_id: checkId })) return true;
    const open = this.incidents.get(nodeIncidentKey(nodeId.toLowerCase(), checkId, null, null));
    if (!open) return false;
    this.incidents.clear(open, null, null);
    return true;
  }

  /** Opens (or moves the severity of) a subject incident: no node, no metric, no folder (only unrestricted scopes see it). */
  raiseSubject(a: SubjectAlert): Promise<boolean> {
    let raised = false;
    return this.inOrder(async () => {
      raised = this.raiseSubjectNow(a);
    }).then(() => raised);
  }

  private raiseSubjectNow(a: SubjectAlert): boolean {
    if (!this.running) return false;
    if (this.forward(subjectKey(null, a.subject_kind, a.subject_name), { k: "subject", a })) return true;
    const key = subjectIncidentKey(a.subject_kind, a.subject_name, a.check_id);
    const open = this.incidents.get(key);
    if (open?.severity === a.severity) return true;
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
    return true;
  }

  /** Clears a subject incident; false when none is open. */
  clearSubject(kind: SubjectAlert["subject_kind"], name: string, checkId: string): Promise<boolean> {
    let cleared = false;
    return this.inOrder(async () => {
      cleared = this.clearSubjectNow(kind, name, checkId);
    }).then(() => cleared);
  }

  private clearSubjectNow(kind: SubjectAlert["subject_kind"], name: string, checkId: string): boolean {
    if (this.forward(subjectKey(null, kind, name), { k: "subject.clear", kind, name, check_id: checkId })) return true;
    const open = this.incidents.get(subjectIncidentKey(kind, name, checkId));
    if (!open) return false;
    this.incidents.clear(open, null, null);
    return true;
  }

  /** Open incidents of external checks (metric EVENT_METRIC), so their owner can resume its own state after a restart. */
  openExternal(): { node_id: string; check_id: string; severity: OpenIncident["severity"]; fired_at_ms: number }[] {
    return this.incidents
      .all()
      .filter((i) => i.metric === EVENT_METRIC && i.node_id !== null)
      .map((i) => ({ node_id: i.node_id!, check_id: i.check_id, severity: i.severity, fired_at_ms: i.fired_at_ms }));
  }

  /** Clears the open incidents of a threshold that was deleted (on every replica: the others' partitions are told). */
  clearCheck(checkId: string, forwarded = false): void {
    if (!this.running) return;
    const space = this.space;
    if (!forwarded && space && !space.solo) for (let p = 0; p < space.count; p++) if (!space.owns(p)) space.send(p, { k: "check.deleted", check_id: checkId });
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

  /** As inOrder, but the caller sees the failure (a partition whose state could not be rebuilt is given back). */
  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.events.then(fn);
    this.events = run.catch((err) => this.ctx.log.error("alert engine: event handling failed", { error: err }));
    return run;
  }

  // ---- partitions (ADR 0017) ------------------------------------------------------------------------

  /** Whether this replica judges the subject with this partition key (always, alone). */
  private mine(key: string): boolean {
    const space = this.space;
    return !space || space.solo || space.owns(space.partitionOf(key.toLowerCase()));
  }

  /** Sends the message to the owner of the key's partition when that is another replica; true when sent. */
  private forward(key: string, m: EngineMessage): boolean {
    const space = this.space;
    if (!space || space.solo) return false;
    const p = space.partitionOf(key.toLowerCase());
    if (space.owns(p)) return false;
    space.send(p, m);
    return true;
  }

  private async onMessages(messages: readonly PartitionMessage<EngineMessage>[]): Promise<void> {
    for (const { payload: m } of messages) {
      try {
        if (m.k === "samples") await this.onSamples(m.s.map(fromTuple), true);
        else if (m.k === "reachability") await this.onReachability(m.e);
        else if (m.k === "poller") this.onPoller(m.e, m.online);
        else if (m.k === "node.deleted") this.onNodeDeleted(m.id);
        else if (m.k === "check.deleted") this.clearCheck(m.check_id, true);
        else if (m.k === "external") await this.raiseExternalNow(m.a);
        else if (m.k === "external.clear") this.clearExternalNow(m.node_id, m.check_id);
        else if (m.k === "subject") this.raiseSubjectNow(m.a);
        else if (m.k === "subject.clear") this.clearSubjectNow(m.kind, m.name, m.check_id);
      } catch (err) {
        this.ctx.log.error("alert engine: forwarded event not handled", { error: err, kind: m.k });
      }
    }
  }

  /** Partitions taken: their open incidents from the store, then their recent samples replayed into the dwell counts. */
  private async acquire(parts: readonly number[], space: PartitionSpace<EngineMessage>): Promise<void> {
    const taken = new Set(parts);
    const inPart = (key: string) => taken.has(space.partitionOf(key));
    const rows = (await this.writer.loadActive()).filter((r) => inPart(subjectKey(r.node_id, r.subject_kind, r.subject_name)));
    const nodes = await this.resolver.nodes(new Set(rows.map((r) => r.node_id).filter((id): id is string => id !== null)));
    for (const r of rows) {
      if (this.incidents.get(r.incident_key)) continue;
      const inc: OpenIncident = { ...r, folder_path: r.node_id ? (nodes.get(r.node_id)?.folder_path ?? []) : [] };
      this.incidents.restore(inc);
      this.thresholds.restore(inc);
    }
    await this.replay(inPart);
  }

  /**
   * The stored samples of the last `replaySecs` of the partitions taken, judged again, each series from after its last
   * written transition: a streak the former owner had counted goes on, and a fire it decided but never wrote happens
   * here. Samples the inbox still holds are judged once (ThresholdEvaluator skips what is not newer).
   */
  private async replay(inPart: (key: string) => boolean): Promise<void> {
    const secs = this.ctx.config.replaySecs;
    const index = await this.resolver.rules();
    const stored = (await this.incidentRepo.recentSamples(index.metrics(), secs)).filter((r) => inPart(r.node_id.toLowerCase()));
    if (stored.length === 0) return;
    const last = await this.incidentRepo.lastTransitions(secs);
    const nodes = await this.resolver.nodes(new Set(stored.map((r) => r.node_id.toLowerCase())));
    for (const r of stored) {
      const entry = nodes.get(r.node_id.toLowerCase());
      if (!entry) continue;
      const s: Sample = {
        node_id: entry.id,
        metric: r.metric,
        value: r.value,
        at_unix_ms: r.at_ms,
        ifindex: r.ifindex === -1 ? null : r.ifindex,
        if_name: null,
        row: r.row_key === -1 ? null : r.row_key,
        row_name: null,
        pool: "",
        poller_id: "",
        backfill: false,
      };
      const rule = index.resolve({ ...s, node_id: entry.id, folder_path: entry.folder_path, profile_id: entry.profile_id })?.compiled.rule ?? null;
      if (!rule) continue;
      const since = last.get(nodeIncidentKey(entry.id, rule.id, s.ifindex, s.row));
      if (since !== undefined && r.at_ms <= since) continue;
      this.thresholds.evaluate(s, entry, rule, true);
    }
  }

  /** Partitions given up: what is decided is written, then their state goes (the next owner reads it back). */
  private async release(parts: readonly number[], space: PartitionSpace<EngineMessage>): Promise<void> {
    await this.queue.flushNow();
    const gone = new Set(parts);
    const inPart = (key: string) => gone.has(space.partitionOf(key.toLowerCase()));
    for (const inc of this.incidents.all()) if (inPart(subjectKey(inc.node_id, inc.subject_kind, inc.subject_name))) this.incidents.forget(inc.incident_key);
    this.thresholds.forgetNodes(inPart);
    for (const id of [...this.seen]) if (inPart(id)) this.seen.delete(id);
    for (const id of [...this.agentFailures.keys()]) if (inPart(id)) this.agentFailures.delete(id);
    for (const pool of [...this.pools.keys()]) if (inPart(`pool:${pool}`)) this.pools.delete(pool);
  }

  private async onSamples(all: readonly Sample[], forwarded = false): Promise<void> {
    if (!this.running || all.length === 0) return;
    let samples = all;
    const space = this.space;
    if (space && !space.solo) {
      // Each node's samples go to its partition's owner; this replica keeps its own.
      const away = new Map<number, Sample[]>();
      const mine: Sample[] = [];
      for (const s of all) {
        if (s.backfill) continue;
        const p = space.partitionOf(s.node_id.toLowerCase());
        if (space.owns(p)) mine.push(s);
        else {
          const list = away.get(p);
          if (list) list.push(s);
          else away.set(p, [s]);
        }
      }
      for (const [p, list] of away) {
        this.forwardedSamples += list.length;
        space.send(p, { k: "samples", s: list.map(toTuple) });
      }
      samples = mine;
      if (samples.length === 0) return;
    }
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
        forwarded,
      );
    }
  }

  private async onReachability(e: ReachabilityEvent): Promise<void> {
    if (!this.running) return;
    if (this.forward(e.node_id, { k: "reachability", e })) return;
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
    if (this.forward(`pool:${e.pool}`, { k: "poller", e, online })) return;
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
    if (this.forward(id, { k: "node.deleted", id })) return;
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
      samplesForwarded: () => this.forwardedSamples,
      partitionsHeld: () => {
        const space = this.space;
        if (!space) return 0;
        let n = 0;
        for (let p = 0; p < space.count; p++) if (space.owns(p)) n++;
        return n;
      },
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
