import { Inject, Injectable } from "@tsed/di";
import { DayPartitions, type MetricCounter, type PartitionMessage, type PartitionSpace } from "../../../core/index.js";
import type { EventAlerts } from "../../alerts/contract.js";
import { NodeAddresses, type AttributedNode } from "../../inventory/contract.js";
import { EMBEDDED_POOL } from "../../polling/contract.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { IngestBatch } from "../ingest/IngestWorkers.js";
import { unpackHits, type BookNode, type IngestState } from "../ingest/protocol.js";
import { toRow } from "../lib/row.js";
import type { Inbound } from "../lib/types.js";
import type { EventView } from "../models/EventModels.js";
import { EventRepository, type EventRow } from "../repositories/EventRepository.js";
import { eventCopyLine, UNMATCHED_TAIL } from "../repositories/eventCopy.js";
import { compileRule, eventText, type CompiledRule } from "../rules/compile.js";
import { matchRules, RuleEngine, type AlertAction, type Evaluation, type RuleHit } from "../rules/engine.js";
import type { RuleAction } from "../rules/vocab.js";
import { RuleRepository } from "../repositories/RuleRepository.js";
import { SourceRepository } from "../repositories/SourceRepository.js";
import { ListenerService } from "./ListenerService.js";
import { registerPipelineMetrics, type ListenerTally } from "./pipelineMetrics.js";
import { QueueJournal, type TextBatch } from "./queueJournal.js";
import { SourceCache, type SourceEntry } from "./sources.js";

/** Counters of the pipeline (the listeners keep their own): exposed to benchmarks and host telemetry. */
export interface PipelineStats {
  accepted: number;
  /** Dropped because the queue was full (the store is slower than the senders). */
  dropped_queue_full: number;
  /** Dropped because their source is disabled. */
  dropped_disabled: number;
  written: number;
  write_failures: number;
  /** Events PostgreSQL refused (kept in the dead-letter table, core.dead_letters). */
  dead_lettered: number;
  queued: number;
}

/** A rule match seen on a replica that does not own the node's partition, for the owner's window (ADR 0017). */
interface ForwardedHits {
  node_id: string;
  at_ms: number;
  hits: RuleHit[];
}

/** Days of partitions kept ready ahead of today. */
const DAYS_AHEAD = 2;
/** How often rule edits made on another replica are looked for. */
const RULE_POLL_MS = 5000;
/** Past this many changed addresses the parsers get a whole new copy of the book rather than a patch. */
const BOOK_PATCH_MAX = 2000;
/** Batches written at the same time (each on a connection of its own). */
const WRITE_LANES = 2;
/** A failed batch of events that are in no journal (HTTP ingest, traps, forwarded) is retried this many times before it is given up (logged). */
const MAX_WRITE_ATTEMPTS = 5;
/** The longest wait between two tries of a batch the journal holds (those are tried until the store takes them). */
const MAX_RETRY_WAIT_MS = 5000;

/**
 * From receiver to store: every received message is attributed to the node at its sender's address
 * (inventory's NodeAddressBook), given its source, matched against the rules (which may fire or clear an
 * alert through the alerts plugin's contract), journaled (the queue journal; the syslog ingest workers journal and
 * match theirs before acceptBatch), and written in batches with COPY (daily partitions made ahead), each with the
 * journal ranges it covers. `accept` never waits: the receivers call it for every message. At most WRITE_LANES
 * batches are being written at a time (PostgreSQL inserts one while the next is built); the queue journal is read
 * back only while fewer than `queueSize` of its events are in memory, so `queueSize` bounds the memory however slow
 * the store is (without a journal, past it events are dropped and counted). Each batch written also goes out on the
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

  @Inject(NodeAddresses)
  private addresses: NodeAddresses;

  @Inject(ListenerService)
  private listeners: ListenerService;

  private engine = new RuleEngine();
  private alerts: EventAlerts | null = null;
  private partitions: DayPartitions;
  private queue: EventRow[] = [];
  /** Ingest workers' batches waiting for a lane, and their events. */
  private texts: TextBatch[] = [];
  private textRows = 0;
  /** Live events left out of the sampled live stream (each ingest batch sends at most a few). */
  private liveLeftOut = 0;
  private ruleRows: unknown[] = [];
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
  private sourceCache = new SourceCache();
  private counters: PipelineStats = { accepted: 0, dropped_queue_full: 0, dropped_disabled: 0, written: 0, write_failures: 0, dead_lettered: 0, queued: 0 };
  private live: ((rows: readonly EventRow[]) => void) | null = null;
  /** The events.received feed (the forwarding tee) for what the ingest workers copy when it is wanted. */
  private feed: ((m: Inbound) => void) | null = null;
  /** Per listener (`http` for the HTTP ingest): what the pipeline dropped, and what the ingest received. */
  private byListener = new Map<string, ListenerTally>();
  /** Events by the rules' outcome (rule_matches_total reads them at scrape time: a labelled inc per event costs more). */
  private matchCounts: Record<RuleAction, number> = { unmatched: 0, counted: 0, suppressed: 0, cleared: 0, fired: 0 };
  private metricsRegistered = false;
  /** The partition space `events` (ADR 0017): a (rule, node) window lives on the owner of the node's partition. */
  private space: PartitionSpace<ForwardedHits> | null = null;
  private deadLetters: MetricCounter<"target"> | undefined;
  /**
   * The journal of what the receivers on this thread take (traps, HTTP ingest, forwarded events): each accepted
   * event's COPY line is appended (once per turn, or at once by persist()) before it is queued for the store, and
   * read back in batches committed with their journal range, as the ingest workers' are. Null when it could not be
   * opened (the events then wait in memory, as before).
   */
  private qjournal: QueueJournal | null = null;
  // What accept() reads for every message, as plain fields: an @Inject property is a getter that resolves its
  // token again on each read (Ts.ED's metadata look-ups), a few per cent of the main thread at ten thousand events a second.
  private config: EventsContext["config"];
  private book: NodeAddresses;

  get isRunning(): boolean {
    return this.running;
  }

  stats(): PipelineStats {
    return { ...this.counters, queued: this.queue.length + this.textRows };
  }

  /** Loads rules and sources, restores the rules' open alerts, and starts the flush and TTL timers. */
  async start(alerts: EventAlerts | null, live: ((rows: readonly EventRow[]) => void) | null, feed: ((m: Inbound) => void) | null = null): Promise<void> {
    if (this.running) return;
    this.feed = feed;
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
    this.space = await this.ctx.store.partitions<ForwardedHits>(
      "events",
      {
        // The alerts space took the partition first (the alerts plugin starts before this one): its open incidents are there.
        acquired: async (parts, space) => {
          const taken = new Set(parts);
          const open = (this.alerts?.open() ?? []).filter((a) => taken.has(space.partitionOf(a.node_id.toLowerCase())));
          this.engine.restore(open.map((a) => ({ rule_id: a.check_id, node_id: a.node_id, last_ms: Date.now() })));
        },
        lost: async (parts, space) => {
          const gone = new Set(parts);
          this.engine.forgetNodes((node) => gone.has(space.partitionOf(node.toLowerCase())));
        },
        received: async (messages) => this.onForwarded(messages),
      },
      this.ctx.log,
    );
    this.qjournal = await QueueJournal.open(this.ctx, this.events, () => this.persist());
    this.running = true;
    this.pumpQueue();
    this.ticker = setInterval(() => this.tick(), 1000);
    this.ticker.unref();
  }

  /** Appends what was accepted since the last append (the HTTP ingest calls it before answering). */
  persist(): void {
    // Null: nothing was waiting; else the rows the journal could not take, which wait in memory instead (queueSize applies).
    const spilled = this.qjournal?.append();
    if (!spilled) return;
    for (const r of spilled) this.queue.push(r);
    this.pumpQueue();
  }

  /** Reads the queue journal into batches for the store while fewer than queueSize of its events are in flight. */
  private pumpQueue(all = false): void {
    const q = this.qjournal;
    if (!q?.readable || !this.running) return;
    const size = this.config.batchSize;
    for (const t of q.pump(all, this.config.queueSize, size, () => this.pumpQueue())) {
      this.texts.push(t);
      this.textRows += t.rows;
    }
    if (this.queue.length + this.textRows >= size) this.take(false);
    else if (this.textRows > 0 || this.queue.length > 0) this.flushSoon(this.config.flushMs);
  }

  /** The queue journal's stats (backlog: events appended and not yet stored). */
  queueJournalStats(): { id: string; backlog: number; bytes: number; dropped: number; checkpointed: number; lost: number } | null {
    return this.qjournal?.stats() ?? null;
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.space?.flush().catch((err) => this.ctx.log.warn("events: forwarded rule matches not written", { error: err }));
    this.space?.leave();
    this.space = null;
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    await this.flushQueue();
    // What was not stored (the store down) stays in the journal for the next start.
    this.qjournal?.close();
    this.qjournal = null;
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
    const rows: unknown[] = [];
    for (const r of await this.rules.all()) {
      if (!r.enabled) continue;
      const c = compileRule(r, r.id);
      if (c.ok) {
        compiled.push(c.rule);
        rows.push(r);
      } else this.ctx.log.warn("event rule skipped: it no longer compiles", { rule_id: r.id, field: c.field, reason: c.message });
    }
    this.ruleRows = rows;
    this.listeners.ingest?.setState({ rules: rows });
    // A rule deleted, disabled or changed in how it matches takes its open alerts with it.
    for (const a of this.engine.setRules(compiled)) this.clear(a.rule_id, a.node_id);
  }

  async reloadSources(): Promise<void> {
    this.sourceCache.load(await this.sources.all());
    this.listeners.ingest?.setState({ sources: this.sourceCache.syslog() });
  }

  /** What the ingest workers read to attribute and match: the rules, the embedded pool's addresses, the syslog sources. */
  ingestState(): IngestState {
    return { rules: this.ruleRows, book: this.bookEntries(), sources: this.sourceCache.syslog() };
  }

  /**
   * The node address book was read again: the parsers get the addresses whose node changed (nothing when none did),
   * or a whole new copy when most did.
   */
  bookReloaded(changed: readonly string[]): void {
    if (changed.length === 0 || !this.listeners.ingest) return;
    if (changed.length > BOOK_PATCH_MAX) {
      this.listeners.ingest.setState({ book: this.bookEntries() });
      return;
    }
    const patch = changed.map((address): [string, BookNode | null] => {
      const n = this.addresses.byIp(address, EMBEDDED_POOL);
      return [address, n && { id: n.id, folder_path: n.folder_path }];
    });
    this.listeners.ingest.setState({ bookPatch: patch });
  }

  private bookEntries(): IngestState["book"] {
    return this.addresses.entries(EMBEDDED_POOL).map(([address, n]) => [address, { id: n.id, folder_path: n.folder_path }]);
  }

  /**
   * Takes a batch an ingest worker made (its events parsed, attributed and matched there): the rules' hits are
   * applied to their windows here (one place for every worker), which may fire or clear alerts and changes those
   * events' action; the batch is then queued for a lane like any other. `ack` tells the worker once it is stored.
   * The journal holds it until then, so it is never dropped here.
   */
  acceptBatch(b: IngestBatch, ack: () => void): void {
    for (const [listener, n] of Object.entries(b.disabled)) {
      this.counters.dropped_disabled += n;
      this.tallyOf(listener).source_disabled += n;
    }
    let text = b.text;
    const verdicts = new Map<number, { action: string; rule_id: string | null }>();
    if (b.hits.count) {
      const parts: string[] = [];
      let at = 0;
      for (const h of unpackHits(b.hits)) {
        const v = this.applyHits(h.node_id, h.at_ms, h.hits);
        this.matchCounts[v.action]++;
        for (const a of v.alerts) this.alert(a);
        if (v.action === "unmatched") continue;
        parts.push(text.slice(at, h.pos), `${v.action}\t${v.rule_id ?? "\\N"}\n`);
        at = h.pos + UNMATCHED_TAIL.length;
        verdicts.set(h.row, v);
      }
      if (parts.length) {
        parts.push(text.slice(at));
        text = parts.join("");
      }
    }
    if (b.feed?.length) for (const m of b.feed) this.feed?.(m.bytes ? { ...m, bytes: Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength) } : m);
    if (b.rows === 0) {
      ack();
      return;
    }
    this.counters.accepted += b.rows;
    this.liveLeftOut += b.liveLeftOut ?? 0;
    const live = (b.live ?? []).map(({ row, view }) => ({
      ...view,
      action: verdicts.get(row)?.action ?? "unmatched",
      rule_id: verdicts.get(row)?.rule_id ?? null,
    }));
    this.texts.push({ text, rows: b.rows, minMs: b.minMs, maxMs: b.maxMs, range: { journalId: b.journalId, first: b.first, end: b.end }, ack, live });
    this.textRows += b.rows;
    if (this.queue.length + this.textRows >= this.config.batchSize) this.take(false);
    else this.flushSoon(this.config.flushMs);
  }

  /**
   * Takes one received message. Never waits and never throws: false when it was dropped (queue full,
   * or its source is disabled). `source` is given for the HTTP ingest (its own source and node).
   */
  accept(m: Inbound, source?: SourceEntry): boolean {
    if (!this.running) return false;
    const tally = this.tally(m);
    const node = this.attribute(m, source);
    const src = source ?? this.sourceCache.sourceFor(m.kind, node ? node.id : null);
    if (!src.enabled) {
      this.counters.dropped_disabled++;
      tally.source_disabled++;
      return false;
    }
    // Journaled events wait on disk (the journal's bounds apply); only those kept in memory count against queueSize.
    if (!this.qjournal && this.queue.length >= this.config.queueSize) {
      this.counters.dropped_queue_full++;
      tally.queue_full++;
      return false;
    }
    const sourceKind = m.transport === "http" ? "http" : m.kind;
    const hits = matchRules(this.engine.rules, {
      kind: m.kind,
      node_id: node?.id ?? null,
      source_id: src.id,
      source_kind: sourceKind,
      text: eventText(m),
      trap_oid: m.trap?.trap_oid ?? null,
      varbinds: m.trap?.varbinds ?? [],
    });
    const verdict = this.applyHits(node?.id ?? null, m.received_at_ms, hits);
    this.matchCounts[verdict.action]++;
    for (const a of verdict.alerts) this.alert(a);
    const row = toRow(m, node, src.id, verdict.action, verdict.rule_id);
    this.counters.accepted++;
    if (this.qjournal) {
      this.journalRow(row);
      return true;
    }
    this.queue.push(row);
    // A full batch goes at once when a lane is free (else the write finishing next takes it); a partial one waits flushMs.
    if (this.queue.length >= this.config.batchSize) this.take(false);
    else this.flushSoon(this.config.flushMs);
    return true;
  }

  /**
   * The rules' hits applied to the node's windows here, or sent to the owner of the node's partition when that is
   * another replica (one replica keeps every window: no message leaves it). A match sent away is `counted` in this
   * event's row; the owner's window decides whether it fires.
   */
  private applyHits(node: string | null, at_ms: number, hits: RuleHit[] | null): Evaluation {
    const space = this.space;
    if (hits === null || node === null || !space || space.solo) return this.engine.apply(node, at_ms, hits);
    const p = space.partitionOf(node.toLowerCase());
    if (space.owns(p)) return this.engine.apply(node, at_ms, hits);
    space.send(p, { node_id: node, at_ms, hits });
    return { action: "counted", rule_id: hits[0].rule_id, alerts: [] };
  }

  /** Matches other replicas saw for nodes whose partition this replica holds: into their windows, in sending order. */
  private async onForwarded(messages: readonly PartitionMessage<ForwardedHits>[]): Promise<void> {
    for (const { payload: f } of messages) {
      const v = this.applyHits(f.node_id, f.at_ms, f.hits);
      for (const a of v.alerts) this.alert(a);
    }
  }

  /** Queues a row's COPY line for the journal's next append (at the end of this turn). */
  private journalRow(row: EventRow): void {
    if (!this.qjournal!.add(row, Boolean(this.live), this.config.queueSize)) this.liveLeftOut++;
  }

  /** The per-listener tallies of a message (the HTTP ingest's sources all count as listener `http`). */
  private tally(m: Inbound): ListenerTally {
    const t = this.tallyOf(m.transport === "http" ? "http" : m.listener);
    if (m.transport === "http") t.http_received++;
    return t;
  }

  private tallyOf(key: string): ListenerTally {
    let t = this.byListener.get(key);
    if (!t) this.byListener.set(key, (t = { http_received: 0, queue_full: 0, source_disabled: 0 }));
    return t;
  }

  /** The events metrics (once per kernel; see pipelineMetrics.ts). */
  private registerMetrics(): void {
    if (this.metricsRegistered) return;
    this.metricsRegistered = true;
    this.deadLetters = registerPipelineMetrics(this.ctx.metrics, this.listeners, {
      matchCounts: this.matchCounts,
      byListener: this.byListener,
      written: () => this.counters.written,
      writeFailures: () => this.counters.write_failures,
      liveLeftOut: () => this.liveLeftOut,
      queueDepth: () => this.queue.length + this.textRows,
      queueJournalStats: () => this.queueJournalStats(),
    });
  }

  /**
   * Writes what is received now (the ingest workers hand over what they hold first); resolves when it is written (or
   * given up).
   */
  async flush(): Promise<void> {
    if (this.running) await this.listeners.ingest?.drain();
    return this.flushQueue();
  }

  private flushQueue(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.persist();
    this.pumpQueue(true);
    const through = this.taken + this.queue.length + this.textRows;
    const done = new Promise<void>((resolve) => this.waiters.push({ through, done: resolve }));
    this.take(true);
    this.settle();
    return done;
  }

  private attribute(m: Inbound, source?: SourceEntry): AttributedNode | null {
    if (source?.node_id) return this.book.node(source.node_id);
    return this.book.byIp(m.source_ip, m.pool === undefined ? EMBEDDED_POOL : (m.pool ?? undefined));
  }

  private alert(a: AlertAction): void {
    if (a.kind === "clear") return this.clear(a.rule_id, a.node_id);
    if (!this.alerts) return;
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
    for (const a of this.engine.expire(Date.now())) this.alert(a);
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
   * queued. A batch is queued events and ingest workers' batches together, up to batchSize events. When every lane is
   * busy they stay queued; each finished write takes the next batch.
   */
  private take(partial = true): void {
    const size = this.config.batchSize;
    while (this.writing.size < WRITE_LANES && (this.queue.length > 0 || this.texts.length > 0) && (partial || this.queue.length + this.textRows >= size)) {
      const rows = this.queue.splice(0, size);
      const texts: TextBatch[] = [];
      let n = rows.length;
      while (this.texts.length && (n === 0 || n + this.texts[0].rows <= size)) {
        const t = this.texts.shift()!;
        this.textRows -= t.rows;
        texts.push(t);
        n += t.rows;
      }
      const at = this.taken;
      this.taken += n;
      this.writing.add(at);
      void this.write(rows, texts)
        .catch((err: unknown) => this.ctx.log.error("events: batch write failed", { error: err, events: n }))
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

  /**
   * Stores a batch with COPY, the ingest batches' journal ranges in the same transaction (a row the store refuses is
   * dead-lettered, the rest stored). A failure otherwise is retried: while the batch holds ingest workers' events (the
   * journal keeps them) until the store takes it or the pipeline stops (they are then replayed at the next start);
   * queued events alone MAX_WRITE_ATTEMPTS times.
   */
  private async write(rows: EventRow[], texts: TextBatch[]): Promise<void> {
    let text = "";
    for (const r of rows) text += eventCopyLine(r);
    for (const t of texts) text += t.text;
    const times = rows.map((r) => r.received_at_ms);
    for (const t of texts) times.push(t.minMs, t.maxMs);
    const events = rows.length + texts.reduce((a, t) => a + t.rows, 0);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.partitions.ensure(times, attempt > 1);
        const out = await this.events.store(
          text,
          texts.map((t) => t.range),
          { counter: this.deadLetters },
        );
        this.counters.written += out.stored;
        this.counters.dead_lettered += out.deadLettered;
        if (out.deadLettered) this.ctx.log.warn("events: events the store refused were kept as dead letters", { events: out.deadLettered });
        for (const t of texts) t.ack();
        this.publish(texts.length ? [...rows, ...texts.flatMap((t) => t.live)] : rows);
        return;
      } catch (err) {
        this.counters.write_failures++;
        const journaled = texts.length > 0;
        if (!this.running || (!journaled && attempt >= MAX_WRITE_ATTEMPTS)) {
          this.ctx.log.error("events: batch not written, given up", {
            error: err,
            events,
            attempts: attempt,
            ...(journaled ? { replayed: "at the next start" } : {}),
          });
          return;
        }
        if (attempt === 1 || attempt % 10 === 0) this.ctx.log.warn("events: batch not written, will retry", { error: err, events, attempt });
        await new Promise((r) => setTimeout(r, Math.min(200 * attempt, MAX_RETRY_WAIT_MS)));
      }
    }
  }
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
