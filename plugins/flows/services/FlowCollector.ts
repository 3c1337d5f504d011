import { Inject, Injectable } from "@tsed/di";
import { ApiError, DayPartitions, isIpAddress, startUdpReader, TurnBatcher, type ListenerCounters, type UdpReader } from "../../../core/index.js";
import { canonicalIp, NodeAddressBook } from "../../inventory/contract.js";
import { EMBEDDED_POOL } from "../../polling/contract.js";
import { FLOWS_CONTEXT, type FlowsContext } from "../context.js";
import type { ReceivedDatagram } from "../contract.js";
import { copyRecord, FlowDecoder } from "../decode/decoder.js";
import { TemplateCache } from "../decode/templates.js";
import type { FlowRecord, RecordSink, TemplateKey } from "../decode/types.js";
import { MinuteAggregator } from "../lib/aggregate.js";
import type { ForwardedDatagrams } from "../models/FlowModels.js";
import { FlowRepository } from "../repositories/FlowRepository.js";

/** Counters of the collector beyond the listener's (benchmarks, GET /flow/exporters). */
export interface CollectorStats {
  records: number;
  /** Records refused: no room for another aggregation key, or no addresses. */
  dropped_records: number;
  flushes: number;
  flush_failures: number;
}

const DAYS_AHEAD = 2;
const NONE: readonly FlowRecord[] = Object.freeze([]);
/** How often one exporter's templates may be looked up in the store when its data arrives before them. */
const TEMPLATE_LOOKUP_MS = 1000;
/** A receive buffer large enough for bursts of export datagrams (the kernel may grant less). */
const RECV_BUFFER = 8 * 1024 * 1024;

/**
 * The NetFlow v5 / v9 / IPFIX collector: one UDP port, our own decoder, templates kept in PostgreSQL (a restarted
 * collector or another replica decodes at once: it loads them at start, and looks again when data arrives for a
 * template it lacks), exporters attributed to inventory nodes, records aggregated per minute in memory and added to
 * the minute rollups every flushMs. Fire-and-forget: a flush the store refuses is lost (logged and counted), and
 * past maxKeys aggregation keys between two flushes records are dropped (counted).
 */
@Injectable()
export class FlowCollector {
  @Inject(FLOWS_CONTEXT)
  private ctx: FlowsContext;

  @Inject(FlowRepository)
  private repo: FlowRepository;

  @Inject(NodeAddressBook)
  private addresses: NodeAddressBook;

  private socket: UdpReader | null = null;
  private templates = new TemplateCache();
  private decoder: FlowDecoder;
  private aggregator: MinuteAggregator;
  private partitions: DayPartitions;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private learned = new Map<string, TemplateKey>();
  private withdrawn: TemplateKey[] = [];
  private lookedUp = new Map<string, number>();
  readonly counters: ListenerCounters = { received: 0, dropped: 0, malformed: 0 };
  private stat: CollectorStats = { records: 0, dropped_records: 0, flushes: 0, flush_failures: 0 };

  /** Per-exporter sampling overrides from the configuration. */
  private get overrides(): Record<string, number> {
    // Keys as the collector writes exporter addresses (an IPv6 override may be written in any form).
    this.canonicalOverrides ??= Object.fromEntries(Object.entries(this.ctx.config.sampling as Record<string, number>).map(([k, v]) => [canonicalIp(k), v]));
    return this.canonicalOverrides;
  }

  private canonicalOverrides: Record<string, number> | null = null;
  private metricsRegistered = false;

  stats(): CollectorStats {
    return { ...this.stat };
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
    // Datagrams and their records go to the forwarding tee (flows.received) as well as to the rollups.
    const bus = this.ctx.bus;
    const received = new TurnBatcher(bus, "flows.received", (datagrams: ReceivedDatagram[]) => ({ datagrams }));
    try {
      // Read in a worker thread (the core's UdpReader): flushes and garbage collections on this thread do not
      // overflow the socket's buffer; what the worker drops past its backlog is counted as dropped.
      this.socket = await startUdpReader({
        type: any || cfg.bindAddress.includes(":") ? "udp6" : "udp4",
        host: any ? "::" : cfg.bindAddress,
        port: cfg.udp,
        ipv6Only: false,
        recvBufferSize: RECV_BUFFER,
        onDatagram: (buf, address) => {
          const exporter = this.canonical(address);
          const now = Date.now();
          // Records are kept (copied out of the decoder) only while the tee takes them.
          if (!bus.listenerCount("flows.received")) this.receive(buf, exporter, now, false);
          else received.push({ exporter, received_at_ms: now, bytes: buf, records: this.receive(buf, exporter, now, true) });
        },
        onError: (err) => this.ctx.log.warn("flows: socket error", { error: err.message }),
        onBacklogDrops: (n) => {
          this.counters.received += n;
          this.counters.dropped += n;
        },
      });
    } catch (err) {
      // Like the events plugin's listeners: a port that cannot be bound is logged, and the service runs without it.
      const e = err as NodeJS.ErrnoException;
      this.ctx.log.error(`flows: listener flows.udp not bound: ${e.code === "EADDRINUSE" ? `port ${cfg.udp} is in use` : e.message}`, { port: cfg.udp });
      return;
    }
    this.ctx.reportListener("flows.udp", { bound: true, port: this.socket.port, address: cfg.bindAddress, counters: this.counters });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const socket = this.socket;
    this.socket = null;
    await socket?.close();
    this.ctx.reportListener("flows.udp", { bound: false, port: null });
    await this.flush();
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
    m.counter({ name: "records_total", help: "Flow records aggregated into the per-minute rollups.", collect: (r) => r({}, this.stat.records) });
    m.counter({
      name: "records_dropped_total",
      help: "Flow records refused: no room for another aggregation key between two flushes (maxKeys), or no addresses.",
      collect: (r) => r({}, this.stat.dropped_records),
    });
    m.counter({ name: "flush_failures_total", help: "Rollup writes that failed.", collect: (r) => r({}, this.stat.flush_failures) });
    m.gauge({
      name: "templates_known",
      help: "NetFlow v9 / IPFIX templates this collector knows (all exporters).",
      collect: (g) => g.set({}, this.templates.size),
    });
  }

  /**
   * One export datagram (from the socket, or forwarded by a remote poller), aggregated: each record goes from the
   * decoder's scratch record straight into the aggregator. With `keep`, answers copies of them (for the tee); without,
   * an empty list (no object per record).
   */
  receive(buf: Buffer, exporter: string, nowMs = Date.now(), keep = false, pool: string | null = EMBEDDED_POOL): readonly FlowRecord[] {
    this.counters.received++;
    this.aggExporter = "";
    this.aggPool = pool;
    this.aggNowMs = nowMs;
    const kept: FlowRecord[] | null = keep ? [] : null;
    this.kept = kept;
    const r = this.decoder.decode(buf, exporter, nowMs, this.aggregateOne);
    this.kept = null;
    if (r.malformed) this.counters.malformed++;
    if (r.dropped) this.counters.dropped += r.dropped;
    for (const k of r.templatesLearned) this.learned.set(`${k.exporter}|${k.version}|${k.domain}|${k.id}`, k);
    this.withdrawn.push(...r.templatesWithdrawn);
    if (r.pending) this.lookForTemplates(exporter, nowMs);
    return kept ?? NONE;
  }

  /** canonicalIp of a datagram's source, remembered: an exporter sends thousands a second from one address. */
  private canonical(address: string): string {
    let text = this.canonicalTexts.get(address);
    if (text === undefined) {
      if (this.canonicalTexts.size >= 10_000) this.canonicalTexts.clear();
      this.canonicalTexts.set(address, (text = canonicalIp(address)));
    }
    return text;
  }

  private canonicalTexts = new Map<string, string>();

  // The record sink's state: the exporter of the records last aggregated, its node and override, the arrival time.
  // Reset per datagram (the node of an address may change between two), read per record.
  private aggExporter = "";
  private aggNode: { id: string; folder_path: string[] } | null = null;
  private aggOverridden = false;
  /** The pool of the poller (or the core) that received the datagram: attribution prefers a node of that pool (null: none said). */
  private aggPool: string | null = EMBEDDED_POOL;
  private aggNowMs = 0;
  private book: NodeAddressBook | null = null;
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
    if (this.decoder) this.counters.dropped += this.decoder.expire(Date.now());
    const learned = [...this.learned.values()];
    const withdrawn = this.withdrawn;
    this.learned = new Map();
    this.withdrawn = [];
    const { rollups, exporters } = this.aggregator?.take() ?? { rollups: [], exporters: [] };
    try {
      const templates = learned.map((k) => this.templates.exportOne(k)).filter((t) => t !== null);
      await this.repo.saveTemplates(templates);
      await this.repo.deleteTemplates(withdrawn);
    } catch (err) {
      // Kept for the next flush: the other collectors need them.
      for (const k of learned) this.learned.set(`${k.exporter}|${k.version}|${k.domain}|${k.id}`, k);
      this.withdrawn.push(...withdrawn);
      this.ctx.log.warn("flows: templates not stored, will retry", { error: err });
    }
    try {
      if (rollups.length) {
        await this.partitions.ensure(rollups.map((r) => r.at_ms));
        await this.ctx.store.tx(async (db) => {
          await this.repo.addRollups(rollups, db);
          await this.repo.addExporters(exporters, db);
        });
      }
      this.stat.flushes++;
    } catch (err) {
      this.stat.flush_failures++;
      this.ctx.log.error("flows: aggregates not written (lost)", { error: err, rows: rollups.length });
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
