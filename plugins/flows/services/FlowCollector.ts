import { Inject, Injectable } from "@tsed/di";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import {
  ApiError,
  canonicalIp,
  DayPartitions,
  isIpAddress,
  TurnBatcher,
  workerJournalOptions,
  type ListenerCounters,
  type MetricCounter,
} from "../../../core/index.js";
import { NodeAddresses } from "../../inventory/contract.js";
import { EMBEDDED_POOL } from "../../polling/contract.js";
import { FLOWS_CONTEXT, type FlowsContext } from "../context.js";
import type { ReceivedDatagram } from "../contract.js";
import { copyRecord, FlowDecoder } from "../decode/decoder.js";
import { TemplateCache } from "../decode/templates.js";
import type { FlowRecord, RecordSink, TemplateJson, TemplateKey } from "../decode/types.js";
import { FlowIngest, type Taken } from "../ingest/FlowIngest.js";
import { MinuteAggregator } from "../lib/aggregate.js";
import type { ForwardedDatagrams } from "../models/FlowModels.js";
import { FlowRepository, type ExporterAttribution, type ExporterDelta } from "../repositories/FlowRepository.js";
import type { RollupRow } from "../repositories/rollupCopy.js";

/** Counters of the collector beyond the listener's (benchmarks, GET /flow/exporters). */
export interface CollectorStats {
  records: number;
  /** Records refused: no room for another aggregation key, or no addresses. */
  dropped_records: number;
  flushes: number;
  flush_failures: number;
}

const DAYS_AHEAD = 2;
/** Journal ranges below a checkpoint are pruned from journal_commits every this many stored flushes. */
const PRUNE_EVERY = 60;
const NONE: readonly FlowRecord[] = Object.freeze([]);
/** How often one exporter's templates may be looked up in the store when its data arrives before them. */
const TEMPLATE_LOOKUP_MS = 1000;
/** A receive buffer large enough for bursts of export datagrams (the kernel may grant less). */
const RECV_BUFFER = 8 * 1024 * 1024;
/** What the readers hand the decoders and they have not journaled yet, at most. */
const READER_BACKLOG = 64 * 1024 * 1024;

/** What one flush stores: the decoders' takes and this thread's own aggregates (forwarded datagrams). */
interface Flush {
  takes: Taken[];
  rollups: RollupRow[];
  exporters: ExporterDelta[];
  learned: TemplateJson[];
  withdrawn: TemplateKey[];
}

/**
 * The NetFlow v5 / v9 / IPFIX collector: one UDP port, our own decoder, templates kept in PostgreSQL (a restarted
 * collector or another replica decodes at once: it loads them at start, and looks again when data arrives for a
 * template it lacks), exporters attributed to inventory nodes, records aggregated per minute in memory and added to
 * the minute rollups every flushMs.
 *
 * The port is read by the ingest threads (FlowIngest: readers on every core spread each exporter over decoders that
 * journal every datagram first); every flushMs their aggregates are stored, with the journal ranges they cover, in
 * one transaction (COPY into a staging table, merged), so a store outage or a crash costs journal space, not flows,
 * and a replay counts each datagram once. Datagrams forwarded by remote pollers are decoded on this thread and go
 * into the same transaction; they have no journal (a flush that fails is retried while the collector runs).
 */
@Injectable()
export class FlowCollector {
  @Inject(FLOWS_CONTEXT)
  private ctx: FlowsContext;

  @Inject(FlowRepository)
  private repo: FlowRepository;

  @Inject(NodeAddresses)
  private addresses: NodeAddresses;

  private ingest: FlowIngest | null = null;

  /** The ingest threads, while they run (diagnostics and tests). */
  get ingestThreads(): FlowIngest | null {
    return this.ingest;
  }

  /** A flush the store refused: retried before anything new is taken (the decoders meanwhile fill up to maxKeys, then their journals hold). */
  private unstored: Flush | null = null;
  private storedFlushes = 0;
  private deadLetters: MetricCounter<"target"> | undefined;
  private unwatchFeed: (() => void) | null = null;
  private templates = new TemplateCache();
  private decoder: FlowDecoder;
  private aggregator: MinuteAggregator;
  private partitions: DayPartitions;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private learned = new Map<string, TemplateKey>();
  private withdrawn: TemplateKey[] = [];
  private lookedUp = new Map<string, number>();
  /** This thread's counts (forwarded datagrams); counters and stats() add the ingest threads'. */
  private local: ListenerCounters = { received: 0, dropped: 0, malformed: 0 };
  private stat: CollectorStats = { records: 0, dropped_records: 0, flushes: 0, flush_failures: 0 };

  /** The listener's counters: received on the port or forwarded, over every ingest thread. */
  readonly counters: ListenerCounters = (() => {
    const total = (k: keyof ListenerCounters) => this.local[k] + (this.ingest?.totals()[k] ?? 0);
    return {
      get received() {
        return total("received");
      },
      get dropped() {
        return total("dropped");
      },
      get malformed() {
        return total("malformed");
      },
    } as ListenerCounters;
  })();

  /** Per-exporter sampling overrides from the configuration. */
  private get overrides(): Record<string, number> {
    // Keys as the collector writes exporter addresses (an IPv6 override may be written in any form).
    this.canonicalOverrides ??= Object.fromEntries(Object.entries(this.ctx.config.sampling as Record<string, number>).map(([k, v]) => [canonicalIp(k), v]));
    return this.canonicalOverrides;
  }

  private canonicalOverrides: Record<string, number> | null = null;
  private metricsRegistered = false;

  /** Records each ingest decoder aggregated ([] without a listener). */
  recordsPerDecoder(): number[] {
    return this.ingest?.recordsPerDecoder() ?? [];
  }

  stats(): CollectorStats {
    const t = this.ingest?.totals();
    return { ...this.stat, records: this.stat.records + (t?.records ?? 0), dropped_records: this.stat.dropped_records + (t?.droppedRecords ?? 0) };
  }

  /** Loads the stored templates, binds the port (null = no listener: forwarded records only), starts flushing. */
  async start(): Promise<void> {
    this.registerMetrics();
    // Injected properties are getters (a lookup each read): the sink reads the address book as a plain field.
    this.book = this.addresses;
    const cfg = this.ctx.config;
    this.partitions = new DayPartitions(this.ctx.store, "rollup_1m");
    await this.maintainPartitions();
    this.templates = new TemplateCache();
    this.templates.import(await this.repo.templates());
    this.decoder = new FlowDecoder({ templates: this.templates, pendingMaxMs: cfg.pendingMaxMs, samplingOverride: (e) => this.overrides[e] ?? null });
    this.aggregator = new MinuteAggregator(cfg.maxKeys);
    this.timer = setInterval(() => void this.flush(), cfg.flushMs);
    this.timer.unref();
    if (cfg.udp === null) return;
    // "0.0.0.0" listens on every IPv4 and IPv6 address (dual stack); v4-mapped senders are read as IPv4.
    const any = cfg.bindAddress === "0.0.0.0";
    // Datagrams and their records go to the forwarding tee (flows.received) as well as to the rollups, while it listens.
    const bus = this.ctx.bus;
    const received = new TurnBatcher(bus, "flows.received", (datagrams: ReceivedDatagram[]) => ({ datagrams }));
    const workers = cfg.ingest.workers ?? availableParallelism();
    const ingest = new FlowIngest({
      workers,
      journalRoot: join(this.ctx.kernelConfig.dataDir, "journal"),
      journal: workerJournalOptions(cfg.ingest.journal, workers),
      listen: {
        type: any || cfg.bindAddress.includes(":") ? "udp6" : "udp4",
        host: any ? "::" : cfg.bindAddress,
        port: cfg.udp,
        ipv6Only: false,
        recvBufferSize: RECV_BUFFER,
        maxBacklogBytes: READER_BACKLOG,
      },
      maxKeys: cfg.maxKeys,
      pendingMaxMs: cfg.pendingMaxMs,
      overrides: this.overrides,
      templates: this.templates.export(),
      storedRanges: (id, from) => this.repo.storedRanges(id, from),
      currentTemplates: () => this.repo.templates(),
      onLookup: (exporter) => this.lookForTemplates(exporter, Date.now()),
      onFeed: (items) => {
        for (const i of items) received.push({ exporter: i.exporter, received_at_ms: i.received_at_ms, bytes: Buffer.from(i.bytes), records: i.records });
      },
      log: this.ctx.log,
    });
    let bound: { address: string; port: number };
    try {
      bound = await ingest.start();
    } catch (err) {
      // Like the events plugin's listeners: a port that cannot be bound is logged, and the service runs without it.
      const e = err as NodeJS.ErrnoException;
      this.ctx.log.error(`flows: listener flows.udp not bound: ${e.code === "EADDRINUSE" ? `port ${cfg.udp} is in use` : e.message}`, { port: cfg.udp });
      return;
    }
    this.ingest = ingest;
    this.unwatchFeed = bus.watchListeners("flows.received", (n) => ingest.setFeed(n > 0));
    this.ctx.reportListener("flows.udp", { bound: true, port: bound.port, address: cfg.bindAddress, counters: this.counters });
  }

  /**
   * Stops receiving, decodes and stores what was journaled (one last flush; what the store does not take then waits
   * in the journals for the next start), and ends the ingest threads.
   */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unwatchFeed?.();
    this.unwatchFeed = null;
    const ingest = this.ingest;
    if (ingest) {
      await ingest.stopReceiving();
      this.ctx.reportListener("flows.udp", { bound: false, port: null });
    }
    await this.flush();
    if (ingest) {
      // Totals kept past the threads' end (the counters and metrics read them).
      const t = ingest.totals();
      this.local = { received: this.local.received + t.received, dropped: this.local.dropped + t.dropped, malformed: this.local.malformed + t.malformed };
      this.stat.records += t.records;
      this.stat.dropped_records += t.droppedRecords;
      this.ingest = null;
      await ingest.exit();
    }
    this.unstored = null;
  }

  /** Datagrams a remote poller's listener received: decoded here as if they had arrived on this socket. */
  forwarded(body: ForwardedDatagrams): { accepted: number; dropped: number } {
    if (!this.ctx.config.enabled || !this.decoder) throw new ApiError(503, "flows_disabled", "Flow monitoring is not enabled (pluginConfig.flows.enabled).");
    let accepted = 0;
    const now = Date.now();
    for (const d of body.datagrams) {
      if (!isIpAddress(d.exporter) || !/^[A-Za-z0-9+/]+=*$/.test(d.data)) continue;
      this.receive(Buffer.from(d.data, "base64"), canonicalIp(d.exporter), now, false, body.pool ?? null);
      accepted++;
    }
    return { accepted, dropped: body.datagrams.length - accepted };
  }

  /** The collector's metrics (once per kernel), read on scrape from the totals it keeps anyway. */
  private registerMetrics(): void {
    if (this.metricsRegistered) return;
    this.metricsRegistered = true;
    const m = this.ctx.metrics;
    m.counter({
      name: "datagrams_received_total",
      help: "Export datagrams received (on the port, or forwarded by remote pollers), malformed ones included.",
      collect: (r) => r({}, this.counters.received),
    });
    m.counter({
      name: "decode_errors_total",
      help: "Datagrams that did not decode (malformed, unknown version, a broken template or record).",
      collect: (r) => r({}, this.counters.malformed),
    });
    m.counter({
      name: "datagrams_dropped_total",
      help: "Datagrams lost: the socket's buffer overflowed, or data held too long for a template that never came.",
      collect: (r) => r({}, this.counters.dropped),
    });
    m.counter({ name: "records_total", help: "Flow records aggregated into the per-minute rollups.", collect: (r) => r({}, this.stats().records) });
    m.counter({
      name: "records_dropped_total",
      help: "Flow records refused: no room for another aggregation key between two flushes (maxKeys), or no addresses.",
      collect: (r) => r({}, this.stats().dropped_records),
    });
    m.counter({ name: "flush_failures_total", help: "Rollup writes that failed.", collect: (r) => r({}, this.stat.flush_failures) });
    m.gauge({
      name: "templates_known",
      help: "NetFlow v9 / IPFIX templates this collector knows (all exporters).",
      collect: (g) => g.set({}, Math.max(this.templates.size, this.ingest?.totals().templates ?? 0)),
    });
    const journals = () => this.ingest?.journals() ?? [];
    m.gauge({
      name: "journal_backlog",
      help: "Datagrams in the flows ingest journals not yet stored (decoded or not).",
      collect: (g) =>
        g.set(
          {},
          journals().reduce((n, j) => n + j.next - j.committed, 0),
        ),
    });
    m.counter({
      name: "journal_dropped_total",
      help: "Datagrams the flows ingest journals dropped undecoded or unstored, past their size or age bound.",
      collect: (r) => r({}, this.ingest?.journalDropped() ?? 0),
    });
    m.counter({
      name: "ingest_restarts_total",
      help: "Flows ingest threads restarted after they died, by thread: reader or decoder.",
      labelNames: ["thread"],
      collect: (r) => {
        if (!this.ingest) return;
        const n = this.ingest.restarts();
        r({ thread: "reader" }, n.reader);
        r({ thread: "decoder" }, n.decoder);
      },
    });
    m.gauge({
      name: "journal_bytes",
      help: "Bytes the flows ingest journals hold on disk.",
      collect: (g) =>
        g.set(
          {},
          journals().reduce((n, j) => n + j.bytes, 0),
        ),
    });
    this.deadLetters = m.counter({
      name: "dead_letters_total",
      help: "Rollup rows PostgreSQL refused (kept in core.dead_letters with the reason).",
      labelNames: ["target"],
    });
  }

  /**
   * One export datagram (from the socket, or forwarded by a remote poller), aggregated: each record goes from the
   * decoder's scratch record straight into the aggregator. With `keep`, answers copies of them (for the tee); without,
   * an empty list (no object per record).
   */
  receive(buf: Buffer, exporter: string, nowMs = Date.now(), keep = false, pool: string | null = EMBEDDED_POOL): readonly FlowRecord[] {
    this.local.received++;
    this.aggExporter = "";
    this.aggPool = pool;
    this.aggNowMs = nowMs;
    const kept: FlowRecord[] | null = keep ? [] : null;
    this.kept = kept;
    const r = this.decoder.decode(buf, exporter, nowMs, this.aggregateOne);
    this.kept = null;
    if (r.malformed) this.local.malformed++;
    if (r.dropped) this.local.dropped += r.dropped;
    for (const k of r.templatesLearned) this.learned.set(`${k.exporter}|${k.version}|${k.domain}|${k.id}`, k);
    this.withdrawn.push(...r.templatesWithdrawn);
    if (r.pending) this.lookForTemplates(exporter, nowMs);
    return kept ?? NONE;
  }

  // The record sink's state: the exporter of the records last aggregated, its node and override, the arrival time.
  // Reset per datagram (the node of an address may change between two), read per record.
  private aggExporter = "";
  private aggNode: { id: string; folder_path: string[] } | null = null;
  private aggOverridden = false;
  /** The pool of the poller (or the core) that received the datagram: attribution prefers a node of that pool (null: none said). */
  private aggPool: string | null = EMBEDDED_POOL;
  private aggNowMs = 0;
  private book: NodeAddresses | null = null;
  /** Where copies of the records go while the tee takes them (null: not kept). */
  private kept: FlowRecord[] | null = null;

  /** Adds one record to the minute aggregates (the decoder's sink: the record is its scratch object). */
  private readonly aggregateOne: RecordSink = (rec, src4, dst4) => {
    if (rec.exporter !== this.aggExporter) {
      this.aggNode = (this.book ??= this.addresses).byIp(rec.exporter, this.aggPool ?? undefined) ?? null;
      this.aggOverridden = !!this.overrides[rec.exporter];
      this.aggExporter = rec.exporter;
    }
    const source = this.aggOverridden ? "override" : rec.sampling > 1 ? "exporter" : "none";
    if (this.aggregator.add(rec, this.aggNode, this.aggNowMs, source, src4, dst4)) this.stat.records++;
    else this.stat.dropped_records++;
    if (this.kept !== null) this.kept.push(copyRecord(rec, src4, dst4));
  };

  /**
   * Data for a template this collector lacks: another replica (or this one before a restart) may have stored it.
   * Looked up at most once per exporter a second; the held data of the templates it brings is decoded at once.
   */
  private lookForTemplates(exporter: string, nowMs: number): void {
    if ((this.lookedUp.get(exporter) ?? 0) > nowMs - TEMPLATE_LOOKUP_MS) return;
    this.lookedUp.set(exporter, nowMs);
    this.repo
      .templates(exporter)
      .then((list) => {
        this.ingest?.templates(list);
        if (!this.templates.import(list)) return;
        this.aggExporter = "";
        this.aggNowMs = Date.now();
        this.decoder.releaseKnown(this.aggregateOne);
      })
      .catch((err: unknown) => this.ctx.log.warn("flows: templates not read", { error: err, exporter }));
  }

  /** Adds what was aggregated to the rollups, saves learned templates. Resolves when written (or given up, logged). */
  flush(): Promise<void> {
    this.chain = this.chain.then(() => this.flushOnce());
    return this.chain;
  }

  private async flushOnce(): Promise<void> {
    // A flush the store refused goes again first; nothing new is taken until it is stored.
    let f: Flush;
    try {
      f = this.unstored ?? (await this.takeAll());
    } catch (err) {
      // A decoder thread that ended: what it journaled waits for the next start.
      this.stat.flush_failures++;
      this.ctx.log.error("flows: aggregates not taken from the ingest threads", { error: err });
      return;
    }
    this.unstored = null;
    try {
      await this.storeFlush(f);
      this.stat.flushes++;
      this.ingest?.stored(f.takes.map((t) => t.seq));
      if (++this.storedFlushes % PRUNE_EVERY === 0) await this.pruneRanges();
    } catch (err) {
      this.stat.flush_failures++;
      this.unstored = f;
      this.ctx.log.error("flows: aggregates not written, will retry (the ingest journals hold what follows)", {
        error: err,
        rows: f.rollups.length + f.takes.reduce((n, t) => n + t.rows, 0),
      });
    }
  }

  /** The decoders' aggregates and this thread's, with the templates learned and withdrawn since the last take. */
  private async takeAll(): Promise<Flush> {
    if (this.decoder) this.local.dropped += this.decoder.expire(Date.now());
    // What the decoders journaled is decoded first: a flush covers every datagram received before it.
    await this.ingest?.drain();
    const takes = this.ingest ? await this.ingest.take() : [];
    const { rollups, exporters } = this.aggregator?.take() ?? { rollups: [], exporters: [] };
    // Every decoder learns every template: one of each is stored.
    const learned = new Map<string, TemplateJson>();
    const key = (k: TemplateKey) => `${k.exporter}|${k.version}|${k.domain}|${k.id}`;
    for (const k of this.learned.values()) {
      const t = this.templates.exportOne(k);
      if (t) learned.set(key(t), t);
    }
    for (const t of takes) for (const j of t.learned) learned.set(key(j), j);
    const withdrawn = new Map<string, TemplateKey>();
    for (const k of [...this.withdrawn, ...takes.flatMap((t) => t.withdrawn)]) withdrawn.set(key(k), k);
    this.learned = new Map();
    this.withdrawn = [];
    return {
      takes,
      rollups,
      exporters: mergeExporters([...exporters, ...takes.flatMap((t) => t.exporters)]),
      learned: [...learned.values()],
      withdrawn: [...withdrawn.values()],
    };
  }

  /** One transaction: the rollups (COPY and merge, and this thread's), the exporters, the templates, the journal ranges. */
  private async storeFlush(f: Flush): Promise<void> {
    const days = [...f.rollups.map((r) => r.at_ms), ...f.takes.flatMap((t) => t.days)];
    if (days.length) await this.partitions.ensure(days);
    const book = (this.book ??= this.addresses);
    const nodes: ExporterAttribution[] = [];
    for (const e of new Set(f.exporters.map((x) => x.address))) {
      const n = book.byIp(e, EMBEDDED_POOL);
      if (n) nodes.push({ exporter: e, node_id: n.id, folder_path: n.folder_path });
    }
    const out = await this.ctx.store.tx(async (db) => {
      await this.repo.saveTemplates(f.learned, db);
      await this.repo.deleteTemplates(f.withdrawn, db);
      const text = f.takes.map((t) => t.copy).join("");
      const ranges = f.takes.flatMap((t) => t.ranges);
      const stored = await this.repo.storeTaken(db, text, nodes, ranges, { counter: this.deadLetters });
      await this.repo.addRollups(f.rollups, db);
      await this.repo.addExporters(f.exporters, db);
      return stored;
    });
    if (out.deadLettered) this.ctx.log.warn("flows: rollup rows the store refused were kept as dead letters", { rows: out.deadLettered });
  }

  /** Forgets the journal ranges below each journal's checkpoint (its own file holds that much). */
  private async pruneRanges(): Promise<void> {
    for (const j of this.ingest?.journals() ?? []) {
      await this.repo.pruneRanges(j.id, j.checkpointed).catch((err: unknown) => this.ctx.log.warn("flows: journal ranges not pruned", { error: err }));
    }
  }

  /** Day partitions of both rollups ahead of today; whole days past their retention dropped. */
  async maintainPartitions(now = Date.now()): Promise<number[]> {
    const hours = new DayPartitions(this.ctx.store, "rollup_1h");
    await hours.maintain(this.ctx.config.hourRetentionDays, DAYS_AHEAD, now);
    return this.partitions.maintain(this.ctx.config.minuteRetentionDays, DAYS_AHEAD, now);
  }

  /**
   * The rollups job: recomputes the hour rollups of the last two hours, and of every hour since the newest one already
   * rolled up, so that hours missed while no replica ran the job (downtime) are caught up. Never further back than
   * `hourRetentionDays`. Returns the hour rows written.
   */
  async catchUpHours(now = Date.now()): Promise<number> {
    const recent = now - 2 * 3600_000;
    const resume = await this.repo.rollupResumeMs();
    const since = Math.max(now - this.ctx.config.hourRetentionDays * 86400_000, Math.min(recent, resume ?? recent));
    return this.rollHours(since);
  }

  /** Recomputes the hour rollups of the hours since `sinceMs` (idempotent). */
  async rollHours(sinceMs: number): Promise<number> {
    // Every day of the range (a catch-up after days of downtime spans days no partition was made for).
    const now = Date.now();
    const days: number[] = [now];
    for (let t = sinceMs; t < now; t += 86400_000) days.push(t);
    await new DayPartitions(this.ctx.store, "rollup_1h").ensure(days);
    return this.repo.rollHours(sinceMs);
  }
}

/** Exporter deltas summed per address (one statement may not add to a row twice); the latest version and sampling win. */
function mergeExporters(list: readonly ExporterDelta[]): ExporterDelta[] {
  const out = new Map<string, ExporterDelta>();
  for (const d of list) {
    const e = out.get(d.address);
    if (!e) out.set(d.address, { ...d });
    else {
      e.records += d.records;
      e.bytes += d.bytes;
      e.packets += d.packets;
      e.version = d.version;
      e.sampling = d.sampling;
      e.sampling_source = d.sampling_source;
    }
  }
  return [...out.values()];
}
