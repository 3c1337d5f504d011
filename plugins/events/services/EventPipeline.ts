import { Inject, Injectable } from "@tsed/di";
import { DayPartitions, pgErrorCode, timeOrderedUuid } from "../../../core/index.js";
import { EventAlertService } from "../../alerts/contract.js";
import { NodeAddressBook, type AttributedNode } from "../../inventory/contract.js";
import { EMBEDDED_POOL } from "../../polling/contract.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { Inbound } from "../lib/types.js";
import type { EventView } from "../models/EventModels.js";
import { EventRepository, type EventRow } from "../repositories/EventRepository.js";
import { compileRule, eventText, type CompiledRule } from "../rules/compile.js";
import { RuleEngine, type AlertAction } from "../rules/engine.js";
import { RULE_ACTIONS, type RuleAction } from "../rules/vocab.js";
import { RuleRepository } from "../repositories/RuleRepository.js";
import { SourceRepository } from "../repositories/SourceRepository.js";
import { ListenerService } from "./ListenerService.js";
import { BUILTIN_SOURCES, type SourceEntry } from "./sources.js";

/** Counters of the pipeline (the listeners keep their own): exposed to benchmarks and host telemetry. */
export interface PipelineStats {
  accepted: number;
  /** Dropped because the queue was full (the store is slower than the senders). */
  dropped_queue_full: number;
  /** Dropped because their source is disabled. */
  dropped_disabled: number;
  written: number;
  write_failures: number;
  queued: number;
}

/** Days of partitions kept ready ahead of today. */
const DAYS_AHEAD = 2;
/** How often rule edits made on another replica are looked for. */
const RULE_POLL_MS = 5000;
/** Batches written at the same time (each on a connection of its own). */
const WRITE_LANES = 2;
/** A failed batch is retried this many times before it is given up (logged). */
const MAX_WRITE_ATTEMPTS = 5;

/**
 * From receiver to store: every received message is attributed to the node at its sender's address
 * (inventory's NodeAddressBook), given its source, matched against the rules (which may fire or clear an
 * alert through the alerts plugin's contract), queued, and written in batches (one multi-row insert
 * per flush, daily partitions made ahead). `accept` never waits: the receivers call it for every
 * message, and past `queueSize` waiting events it drops and counts. At most WRITE_LANES batches are being
 * written at a time (PostgreSQL inserts one while the next is built); what waits for a lane stays in the
 * queue, so `queueSize` bounds the memory however slow the store is. Each batch written also goes out on the
 * live channel, grouped by folder so scoped subscribers only get what they may see.
 */
@Injectable()
export class EventPipeline {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  @Inject(EventRepository)
  private events: EventRepository;

  @Inject(RuleRepository)
  private rules: RuleRepository;

  @Inject(SourceRepository)
  private sources: SourceRepository;

  @Inject(NodeAddressBook)
  private addresses: NodeAddressBook;

  @Inject(ListenerService)
  private listeners: ListenerService;

  private engine = new RuleEngine();
  private alerts: EventAlertService | null = null;
  private partitions: DayPartitions;
  private queue: EventRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  private ticker: NodeJS.Timeout | null = null;
  /** Writes in flight: the position (in taken events) where each batch starts. */
  private writing = new Set<number>();
  /** Events taken off the queue so far (a batch's position is this count when it is taken). */
  private taken = 0;
  /** flush() callers, each waiting until every event queued before its call is written. */
  private waiters: { through: number; done: () => void }[] = [];
  private running = false;
  private ruleVersion = "";
  /** A node's own sources by kind, then node id (no key is built per message). */
  private sourceByNode = new Map<string, Map<string, SourceEntry>>();
  private sourceById = new Map<string, SourceEntry>();
  private counters: PipelineStats = { accepted: 0, dropped_queue_full: 0, dropped_disabled: 0, written: 0, write_failures: 0, queued: 0 };
  private live: ((rows: readonly EventRow[]) => void) | null = null;
  /** Per listener (`http` for the HTTP ingest): what the pipeline dropped, and what the ingest received. */
  private byListener = new Map<string, { http_received: number; queue_full: number; source_disabled: number }>();
  /** Events by the rules' outcome (rule_matches_total reads them at scrape time: a labelled inc per event costs more). */
  private matchCounts: Record<RuleAction, number> = { unmatched: 0, counted: 0, suppressed: 0, cleared: 0, fired: 0 };
  private metricsRegistered = false;
  // What accept() reads for every message, as plain fields: an @Inject property is a getter that resolves its
  // token again on each read (Ts.ED's metadata look-ups), a few per cent of the main thread at ten thousand events a second.
  private config: EventsContext["config"];
  private book: NodeAddressBook;

  get isRunning(): boolean {
    return this.running;
  }

  stats(): PipelineStats {
    return { ...this.counters, queued: this.queue.length };
  }

  /** Loads rules and sources, restores the rules' open alerts, and starts the flush and TTL timers. */
  async start(alerts: EventAlertService | null, live: ((rows: readonly EventRow[]) => void) | null): Promise<void> {
    if (this.running) return;
    this.registerMetrics();
    this.config = this.ctx.config;
    this.book = this.addresses;
    this.alerts = alerts;
    this.live = live;
    this.partitions = new DayPartitions(this.ctx.store, "events");
    await this.maintainPartitions();
    await this.reloadSources();
    await this.reloadRules();
    // Open alerts of the rules resume (their TTL counts from now: the last match before the restart is not known).
    if (alerts) this.engine.restore(alerts.open().map((a) => ({ rule_id: a.check_id, node_id: a.node_id, last_ms: Date.now() })));
    this.running = true;
    this.ticker = setInterval(() => this.tick(), 1000);
    this.ticker.unref();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    await this.flush();
  }

  /** Partitions for today and the days ahead; whole days past the retention go. */
  async maintainPartitions(now = Date.now()): Promise<number[]> {
    const dropped = await this.partitions.maintain(this.ctx.config.retentionDays, DAYS_AHEAD, now);
    if (dropped.length) this.ctx.log.info("event partitions dropped (retention)", { days: dropped.map((d) => new Date(d).toISOString().slice(0, 10)) });
    return dropped;
  }

  /** Re-reads the rules (after an edit here; other replicas notice within RULE_POLL_MS). */
  async reloadRules(): Promise<void> {
    this.ruleVersion = await this.rules.version();
    const compiled: CompiledRule[] = [];
    for (const r of await this.rules.all()) {
      if (!r.enabled) continue;
      const c = compileRule(r, r.id);
      if (c.ok) compiled.push(c.rule);
      else this.ctx.log.warn("event rule skipped: it no longer compiles", { rule_id: r.id, field: c.field, reason: c.message });
    }
    // A rule deleted, disabled or changed in how it matches takes its open alerts with it.
    for (const a of this.engine.setRules(compiled)) this.clear(a.rule_id, a.node_id);
  }

  async reloadSources(): Promise<void> {
    const byNode = new Map<string, Map<string, SourceEntry>>();
    const byId = new Map<string, SourceEntry>();
    for (const s of await this.sources.all()) {
      const entry: SourceEntry = { id: s.id, kind: s.kind, node_id: s.node_id, enabled: s.enabled };
      byId.set(s.id, entry);
      if (s.node_id && s.kind !== "http") {
        let ofKind = byNode.get(s.kind);
        if (!ofKind) byNode.set(s.kind, (ofKind = new Map()));
        ofKind.set(s.node_id, entry);
      }
    }
    this.sourceByNode = byNode;
    this.sourceById = byId;
  }

  /**
   * Takes one received message. Never waits and never throws: false when it was dropped (queue full,
   * or its source is disabled). `source` is given for the HTTP ingest (its own source and node).
   */
  accept(m: Inbound, source?: SourceEntry): boolean {
    if (!this.running) return false;
    const tally = this.tally(m);
    const node = this.attribute(m, source);
    const src = source ?? this.sourceFor(m.kind, node);
    if (!src.enabled) {
      this.counters.dropped_disabled++;
      tally.source_disabled++;
      return false;
    }
    if (this.queue.length >= this.config.queueSize) {
      this.counters.dropped_queue_full++;
      tally.queue_full++;
      return false;
    }
    const sourceKind = m.transport === "http" ? "http" : m.kind;
    const verdict = this.engine.evaluate({
      kind: m.kind,
      node_id: node?.id ?? null,
      source_id: src.id,
      source_kind: sourceKind,
      text: eventText(m),
      trap_oid: m.trap?.trap_oid ?? null,
      varbinds: m.trap?.varbinds ?? [],
      at_ms: m.received_at_ms,
    });
    this.matchCounts[verdict.action]++;
    for (const a of verdict.alerts) this.alert(a, node);
    this.queue.push(toRow(m, node, src.id, verdict.action, verdict.rule_id));
    this.counters.accepted++;
    // A full batch goes at once when a lane is free (else the write finishing next takes it); a partial one waits flushMs.
    if (this.queue.length >= this.config.batchSize) this.take(false);
    else this.flushSoon(this.config.flushMs);
    return true;
  }

  /** The per-listener tallies of a message (the HTTP ingest's sources all count as listener `http`). */
  private tally(m: Inbound): { http_received: number; queue_full: number; source_disabled: number } {
    const key = m.transport === "http" ? "http" : m.listener;
    let t = this.byListener.get(key);
    if (!t) this.byListener.set(key, (t = { http_received: 0, queue_full: 0, source_disabled: 0 }));
    if (m.transport === "http") t.http_received++;
    return t;
  }

  /**
   * The events metrics (once per kernel): received, malformed and dropped per listener (the listeners' own counters,
   * split by reason with the pipeline's tallies), rule matches by action, writes, and the queue.
   */
  private registerMetrics(): void {
    if (this.metricsRegistered) return;
    this.metricsRegistered = true;
    const m = this.ctx.metrics;
    m.counter({
      name: "rule_matches_total",
      help: "Events an event rule matched, by the outcome (fired, cleared, suppressed, counted).",
      labelNames: ["action"],
      collect: (report) => {
        for (const action of RULE_ACTIONS) if (action !== "unmatched" && this.matchCounts[action] > 0) report({ action }, this.matchCounts[action]);
      },
    });
    m.counter({
      name: "received_total",
      help: "Messages received per listener (syslog.udp, syslog.tcp, syslog.tls, traps.udp, http for the HTTP ingest), malformed ones included.",
      labelNames: ["listener"],
      collect: (report) => {
        for (const l of this.listeners.listeners()) report({ listener: l.name }, l.counters.received);
        const http = this.byListener.get("http");
        if (http) report({ listener: "http" }, http.http_received);
      },
    });
    m.counter({
      name: "malformed_total",
      help: "Messages per listener that did not parse (stored raw where possible).",
      labelNames: ["listener"],
      collect: (report) => {
        for (const l of this.listeners.listeners()) report({ listener: l.name }, l.counters.malformed);
      },
    });
    m.counter({
      name: "dropped_total",
      help: "Messages dropped per listener and reason: queue_full (the store is slower than the senders), source_disabled, refused (over a limit, unknown community or user).",
      labelNames: ["listener", "reason"],
      collect: (report) => {
        const zero = { http_received: 0, queue_full: 0, source_disabled: 0 };
        for (const l of this.listeners.listeners()) {
          const t = this.byListener.get(l.name) ?? zero;
          report({ listener: l.name, reason: "refused" }, Math.max(0, l.counters.dropped - t.queue_full - t.source_disabled));
        }
        for (const [listener, t] of this.byListener) {
          report({ listener, reason: "queue_full" }, t.queue_full);
          report({ listener, reason: "source_disabled" }, t.source_disabled);
        }
      },
    });
    m.counter({ name: "written_total", help: "Events written to the store.", collect: (report) => report({}, this.counters.written) });
    m.counter({
      name: "write_failures_total",
      help: "Event writes that failed (a batch retried, or an event the store refused).",
      collect: (report) => report({}, this.counters.write_failures),
    });
    m.gauge({ name: "queue_depth", help: "Events waiting for the next batched write.", collect: (g) => g.set({}, this.queue.length) });
  }

  /** Writes what is queued now; resolves when it is written (or given up). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const through = this.taken + this.queue.length;
    const done = new Promise<void>((resolve) => this.waiters.push({ through, done: resolve }));
    this.take(true);
    this.settle();
    return done;
  }

  private attribute(m: Inbound, source?: SourceEntry): AttributedNode | null {
    if (source?.node_id) return this.book.node(source.node_id);
    return this.book.byIp(m.source_ip, m.pool === undefined ? EMBEDDED_POOL : (m.pool ?? undefined));
  }

  private sourceFor(kind: string, node: AttributedNode | null): SourceEntry {
    if (node) {
      const own = this.sourceByNode.get(kind)?.get(node.id);
      if (own) return own;
    }
    return this.sourceById.get(kind === "trap" ? BUILTIN_SOURCES.trap : BUILTIN_SOURCES.syslog) ?? { id: null, kind, node_id: null, enabled: true };
  }

  private alert(a: AlertAction, node: AttributedNode | null): void {
    if (a.kind === "clear") return this.clear(a.rule_id, a.node_id);
    if (!this.alerts || !node) return;
    this.alerts
      .fire({ node_id: a.node_id, check_id: a.rule_id, severity: a.severity, title: a.title, at_ms: a.at_ms, observed_value: a.count })
      .catch((err: unknown) => this.ctx.log.warn("events: alert not committed", { error: err, rule_id: a.rule_id, node_id: a.node_id }));
  }

  private clear(ruleId: string, nodeId: string): void {
    this.alerts
      ?.clear(nodeId, ruleId)
      .catch((err: unknown) => this.ctx.log.warn("events: alert clear not committed", { error: err, rule_id: ruleId, node_id: nodeId }));
  }

  /** Every second: TTL clears, and rule edits made on another replica. */
  private tick(): void {
    for (const a of this.engine.expire(Date.now())) this.alert(a, null);
    if (Date.now() % RULE_POLL_MS < 1000) {
      this.rules
        .version()
        .then((v) => (v !== this.ruleVersion ? this.reloadRules() : undefined))
        .catch((err: unknown) => this.ctx.log.warn("events: rule reload failed", { error: err }));
    }
  }

  /** Writes a partial batch in `ms` (unless a timer is already set). */
  private flushSoon(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.take();
    }, ms);
  }

  /**
   * Starts writing batches while a lane is free: a full batch, or (`partial`: the flush timer, flush()) whatever is
   * queued. When every lane is busy the events stay queued; each finished write takes the next batch.
   */
  private take(partial = true): void {
    while (this.writing.size < WRITE_LANES && this.queue.length > 0 && (partial || this.queue.length >= this.config.batchSize)) {
      const batch = this.queue.splice(0, this.config.batchSize);
      const at = this.taken;
      this.taken += batch.length;
      this.writing.add(at);
      void this.write(batch)
        .catch((err: unknown) => this.ctx.log.error("events: batch write failed", { error: err, events: batch.length }))
        .finally(() => {
          this.writing.delete(at);
          this.take(true);
          this.settle();
        });
    }
  }

  /** Resolves the flush() callers whose events are all written (or given up). */
  private settle(): void {
    if (!this.waiters.length) return;
    let through = this.taken;
    for (const at of this.writing) through = Math.min(through, at);
    this.waiters = this.waiters.filter((w) => {
      if (w.through > through) return true;
      w.done();
      return false;
    });
  }

  /** Sends written events on the live channel; a failure there is logged (the events are stored: never written again for it). */
  private publish(rows: EventRow[]): void {
    try {
      this.live?.(rows);
    } catch (err) {
      this.ctx.log.warn("events: live publish failed", { error: err, events: rows.length });
    }
  }

  private async writeOneByOne(batch: EventRow[]): Promise<void> {
    const kept: EventRow[] = [];
    let refused = 0;
    for (const row of batch) {
      try {
        await this.events.insert([row]);
        kept.push(row);
      } catch (err) {
        refused++;
        this.ctx.log.warn("events: an event the store refused was dropped", { error: err, listener: row.listener, source_ip: row.source_ip });
      }
    }
    this.counters.written += kept.length;
    this.counters.write_failures += refused;
    if (kept.length) this.publish(kept);
  }

  private async write(batch: EventRow[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.partitions.ensure(
          batch.map((r) => r.received_at_ms),
          attempt > 1,
        );
        await this.events.insert(batch);
        this.counters.written += batch.length;
        this.publish(batch);
        return;
      } catch (err) {
        // A row the store refuses (a data exception) must not take the rest of the batch with it: write them one by one.
        if (pgErrorCode(err)?.startsWith("22") && batch.length > 1) return this.writeOneByOne(batch);
        this.counters.write_failures++;
        if (attempt >= MAX_WRITE_ATTEMPTS || !this.running) {
          this.ctx.log.error("events: batch not written, given up", { error: err, events: batch.length, attempts: attempt });
          return;
        }
        this.ctx.log.warn("events: batch not written, will retry", { error: err, events: batch.length, attempt });
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }
}

/** The stored row of one received message. */
function toRow(m: Inbound, node: AttributedNode | null, sourceId: string | null, action: string, ruleId: string | null): EventRow {
  const s = m.syslog;
  const t = m.trap;
  let data: Record<string, unknown> | null = null;
  if (s) data = { format: s.format, timestamp: s.timestamp, procid: s.procid, structured_data: s.structured_data, cisco: s.cisco };
  else if (t) data = { version: t.version, pdu: t.pdu, user: t.user, uptime: t.uptime, varbinds: t.varbinds, v1: t.v1 };
  if (m.extra) data = { ...data, fields: m.extra };
  return {
    id: timeOrderedUuid(m.received_at_ms),
    received_at_ms: m.received_at_ms,
    kind: m.kind,
    transport: m.transport,
    listener: m.listener,
    source_ip: m.source_ip || null,
    source_id: sourceId,
    node_id: node?.id ?? null,
    folder_path: node?.folder_path ?? [],
    severity: s?.severity ?? null,
    facility: s?.facility ?? null,
    host: s?.hostname ?? null,
    app: s?.app_name ?? null,
    msgid: s?.msgid ?? null,
    message: s ? s.message : t ? t.trap_oid : (m.raw ?? ""),
    trap_oid: t?.trap_oid ?? null,
    data,
    raw: m.raw,
    malformed: m.malformed,
    action,
    rule_id: ruleId,
  };
}

/** The last received_at text liveView made (the rows of a flush share their milliseconds by the dozen). */
let isoMs = NaN;
let iso = "";

/** The API's view of a row written a moment ago (the live channel sends these). */
export function liveView(r: EventRow): EventView {
  if (r.received_at_ms !== isoMs) {
    isoMs = r.received_at_ms;
    iso = new Date(isoMs).toISOString().replace("Z", "000Z");
  }
  return {
    id: r.id,
    received_at: iso,
    kind: r.kind,
    transport: r.transport,
    listener: r.listener,
    source_ip: r.source_ip,
    source_id: r.source_id,
    node_id: r.node_id,
    severity: r.severity,
    facility: r.facility,
    host: r.host,
    app: r.app,
    msgid: r.msgid,
    message: r.message,
    trap_oid: r.trap_oid,
    data: r.data,
    raw: r.raw,
    malformed: r.malformed,
    action: r.action,
    rule_id: r.rule_id,
  };
}
