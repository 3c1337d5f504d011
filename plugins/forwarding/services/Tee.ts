/**
 * The tee: takes what this process's listeners received (`events.received` and `flows.received`, the events and flows
 * plugins' contracts) — on the core, or on a remote poller —, for the destinations without a pool and those of the
 * pool it receives for, filters it per destination, rate-limits it and hands it to the destination's sender. It runs
 * after the receivers have handed the record on (the feed is batched per event-loop turn and not awaited), so a slow
 * or dead destination never slows a receiver: its sender queues (bounded) or drops, and counts.
 */
import { MIRROR_GENERATIONS, type Inbound } from "../../events/contract.js";
import type { FlowRecord, ReceivedDatagram } from "../../flows/contract.js";
import { EMBEDDED_POOL } from "../../polling/contract.js";
import { isIP } from "node:net";
import type { EventBus, MirrorCount, MirrorTarget } from "../../../core/index.js";
import type { ForwardingConfig } from "../context.js";
import { V9Exporter } from "../lib/flowExport.js";
import { eventRow, flowRow } from "../lib/warehouseRows.js";
import { carriesTemplates } from "../lib/flowSets.js";
import { syslogPayload } from "../lib/render.js";
import type { DestinationCounters, FilterSubject, RuntimeDestination } from "../lib/types.js";
import { StreamSender, UdpSender, failed, type Sender } from "../senders/senders.js";
import { TrapReencoder } from "../senders/trapSender.js";
import { WarehouseSender } from "../senders/warehouseSender.js";

/** Where the tee reads its destinations (the destination service). */
export interface DestinationSource {
  runtimeDestinations(): Promise<RuntimeDestination[]>;
  onChange(listener: () => void): void;
}

/** A destination's counters before anything happened. */
export const zeroCounters = (): DestinationCounters => ({
  forwarded: 0,
  dropped_filter: 0,
  dropped_rate_limit: 0,
  dropped_queue: 0,
  send_errors: 0,
  connection_errors: 0,
  last_error_class: null,
  last_error_at: null,
  connection: "idle",
  queued: 0,
});

/** A token bucket: `rate` tokens a second, holding at most one second's worth. */
export class TokenBucket {
  private tokens: number;

  /** `last` is the clock reading the bucket starts full at (milliseconds, performance.now() by default). */
  constructor(
    private readonly rate: number,
    private last = performance.now(),
  ) {
    this.tokens = rate;
  }

  take(now = performance.now()): boolean {
    this.tokens = Math.min(this.rate, this.tokens + (Math.max(0, now - this.last) * this.rate) / 1000);
    this.last = Math.max(this.last, now);
    // A hair of slack: fractional clock readings can refill a whole token to 0.999….
    if (this.tokens < 1 - 1e-9) return false;
    this.tokens -= 1;
    return true;
  }
}

/** A flow record that passed a destination's filter and rate limit, with the datagram it came in. */
interface PassedRecord {
  datagram: ReceivedDatagram;
  record: FlowRecord;
}

/** How one destination takes a record: framed, rendered or re-encoded for its kind (flow destinations take datagrams). */
interface Delivery {
  deliver(r: Inbound): void;
  /** A verbatim flow relay: whole datagrams. */
  deliverDatagram?(d: ReceivedDatagram): void;
  /** A flow re-export or a warehouse stream: each record that passed the filter and the rate limit. */
  deliverRecords?(records: readonly PassedRecord[]): void;
  close(): Promise<void>;
}

export interface Running {
  dest: RuntimeDestination;
  sender: Delivery | null;
  bucket: TokenBucket | null;
  counters: DestinationCounters;
}

/** The filter's view of a received syslog message or trap (flows fields are null), received in `pool`. */
export function subjectOf(r: Inbound, pool: string): FilterSubject {
  const s = r.syslog;
  const t = r.trap;
  return {
    kind: r.kind,
    source_ip: r.source_ip,
    pool,
    facility: s?.facility ?? null,
    severity: s?.severity ?? null,
    hostname: s?.hostname ?? null,
    app_name: s?.app_name ?? null,
    message: s ? s.message : r.kind === "syslog" ? r.raw : null,
    trap_oid: t?.trap_oid ?? null,
    varbinds: t ? t.varbinds.map((v) => `${v.oid}=${v.value ?? ""}`) : null,
    src_addr: null,
    dst_addr: null,
    proto: null,
    src_port: null,
    dst_port: null,
    src_as: null,
    dst_as: null,
  };
}

/** The filter's view of one flow record of a datagram (syslog and trap fields are null), received in `pool`. */
export function flowSubjectOf(d: ReceivedDatagram, rec: FlowRecord, pool: string): FilterSubject {
  return {
    kind: "flow",
    source_ip: d.exporter,
    pool,
    facility: null,
    severity: null,
    hostname: null,
    app_name: null,
    message: null,
    trap_oid: null,
    varbinds: null,
    src_addr: rec.src || null,
    dst_addr: rec.dst || null,
    proto: rec.proto,
    src_port: rec.src_port,
    dst_port: rec.dst_port,
    src_as: rec.src_as,
    dst_as: rec.dst_as,
  };
}

/** Strips the brackets of an IPv6 literal target. */
const bare = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);

/**
 * Whether a destination can ride the UDP syslog fast path: a verbatim syslog_udp relay of the whole stream, without a
 * rate limit, to an address (a host name is resolved by the tee's own sender).
 */
export function onFastPath(d: RuntimeDestination): boolean {
  return d.dest_kind === "syslog_udp" && d.source_kind === "syslog" && d.verbatim && d.unfiltered && d.rate_limit_per_sec === null && isIP(bare(d.host)) !== 0;
}

/** A destination this tee has no sender for: a kind it does not know (`not_built`), or another pool's (`idle`). */
function noSender(counters: DestinationCounters, connection: "not_built" | "idle" = "not_built"): null {
  counters.connection = connection;
  return null;
}

/** A datagram passes when any of its records does; one that carries templates always does (the far end needs them). */
function datagramPasses(d: ReceivedDatagram, filter: RuntimeDestination["filter"], pool: string): boolean {
  return d.records.some((rec) => filter(flowSubjectOf(d, rec, pool))) || carriesTemplates(d.bytes);
}

/**
 * Whether two versions of a destination send alike (kind, stream, target, rendering, TLS trust, secrets, pool): when
 * only its name, filter or rate limit changed, the running sender is kept, with its connection and its queue.
 */
export function sameTransport(a: RuntimeDestination, b: RuntimeDestination): boolean {
  return (
    a.dest_kind === b.dest_kind &&
    a.source_kind === b.source_kind &&
    a.host === b.host &&
    a.port === b.port &&
    a.pool === b.pool &&
    a.verbatim === b.verbatim &&
    a.ca_cert === b.ca_cert &&
    a.community === b.community &&
    a.service_account_json === b.service_account_json
  );
}

/** Reader threads that relay what their sockets receive to targets, counting per target id. */
export interface Mirror {
  set(targets: readonly MirrorTarget[], generation: number): void;
  counts(): ReadonlyMap<string, MirrorCount>;
}

/** What a tee runs with: the plugin's config, a log, and the bus its receivers publish on (the core's, or a poller's). */
export interface TeeEnv {
  config: ForwardingConfig;
  log: { warn(msg: string, fields?: Record<string, unknown>): void };
  bus: EventBus;
  /**
   * The events plugin's UDP syslog fast path (on the core): verbatim, unfiltered, unlimited syslog_udp destinations to an
   * address are relayed from the UDP listener's reader thread, and the tee only sends them what other listeners received.
   */
  mirror?: Mirror;
  /**
   * The relay port (config `relay`, UdpRelay): its reader threads relay what it receives to the same destinations. What
   * it receives never reaches the tee, so nothing is skipped for it.
   */
  relayPort?: Mirror;
  /**
   * The pool whose receivers feed this tee: a remote poller's own pool, or on the core the pool of its embedded poller
   * (CORE_POOL). What it receives carries this pool (the filter's `pool` field), and it tees the destinations without a
   * pool and those of this pool; another pool's destinations are teed by that pool's pollers.
   */
  pool: string;
}

/** The pool the core's own listeners receive for: the core runs the embedded poller of that pool. */
export const CORE_POOL = EMBEDDED_POOL;

export class Tee {
  /** The destinations running, with their counters (read by the status route and the metrics). */
  readonly running = new Map<string, Running>();
  private source: DestinationSource | null = null;

  constructor(private readonly env: TeeEnv) {}
  /** The received streams listened to now: only those some running destination takes (see listen()). */
  private offEvents: (() => void) | null = null;
  private offFlows: (() => void) | null = null;
  private started = false;
  private timer: NodeJS.Timeout | null = null;
  private reloading: Promise<void> | null = null;
  private again = false;
  /** Destinations on the UDP fast path, and what of its counts is already in their counters. */
  private readonly mirrored = new Set<string>();
  /**
   * The fast path's generations (1 to MIRROR_GENERATIONS, reused in turn): the destinations handed to the listener's
   * readers under each, and when. A UDP record carries the generation its reader had (Inbound.mirror_gen), so the tee
   * skips exactly the destinations the reader relayed it to, however late the record reaches the tee.
   */
  private readonly generations = new Map<number, { ids: ReadonlySet<string>; since: number }>();
  private generation = 0;
  private readonly mirrorFolded = new Map<string, MirrorCount>();
  private foldTimer: NodeJS.Timeout | null = null;

  /** Every running destination's counters, by id (what a poller reports to the core). */
  allCounters(): Record<string, DestinationCounters> {
    this.foldMirror();
    return Object.fromEntries([...this.running].map(([id, r]) => [id, { ...r.counters }]));
  }

  /** This replica's counters for a destination (zeros when it has sent nothing yet). */
  status(id: string): DestinationCounters {
    this.foldMirror();
    return { ...(this.running.get(id)?.counters ?? zeroCounters()) };
  }

  async start(source: DestinationSource): Promise<void> {
    this.source = source;
    source.onChange(() => void this.reload());
    this.started = true;
    await this.reload();
    this.listen();
    this.timer = setInterval(() => void this.reload(), this.env.config.reloadMs);
    this.timer.unref();
    if (this.env.mirror || this.env.relayPort) {
      this.foldTimer = setInterval(() => this.foldMirror(), 1000);
      this.foldTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.started = false;
    this.listen();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.foldTimer) clearInterval(this.foldTimer);
    this.foldTimer = null;
    await this.reloading;
    this.env.mirror?.set([], 0);
    this.env.relayPort?.set([], 0);
    await Promise.all([...this.running.values()].map((r) => r.sender?.close()));
    this.running.clear();
  }

  /**
   * Re-reads the destinations: new ones start, removed ones stop, changed ones keep their counters and get a new
   * sender only when how they send changed (sameTransport): a rename, a new filter or rate limit keeps the sender.
   */
  reload(): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        do {
          this.again = false;
          await this.apply(await this.source!.runtimeDestinations());
        } while (this.again);
      } catch (err) {
        this.env.log.warn("could not read the forwarding destinations; keeping the current ones", { error: String(err) });
      } finally {
        this.reloading = null;
      }
    })();
    return this.reloading;
  }

  private async apply(destinations: RuntimeDestination[]): Promise<void> {
    const seen = new Set<string>();
    const closing: Promise<void>[] = [];
    for (const dest of destinations) {
      seen.add(dest.id);
      const current = this.running.get(dest.id);
      if (current && current.dest.version === dest.version) continue;
      const keep = current !== undefined && sameTransport(current.dest, dest);
      if (current?.sender && !keep) closing.push(current.sender.close());
      const counters = current?.counters ?? zeroCounters();
      // The same rate keeps its bucket: a rename must not hand out a fresh second's worth.
      const sameRate = current !== undefined && current.dest.rate_limit_per_sec === dest.rate_limit_per_sec;
      this.running.set(dest.id, {
        dest,
        sender: keep ? current.sender : this.senderFor(dest, counters),
        bucket: sameRate ? current.bucket : dest.rate_limit_per_sec ? new TokenBucket(dest.rate_limit_per_sec) : null,
        counters,
      });
    }
    for (const [id, r] of this.running) {
      if (seen.has(id)) continue;
      this.running.delete(id);
      if (r.sender) closing.push(r.sender.close());
    }
    this.setMirror();
    this.listen();
    await Promise.all(closing);
  }

  /**
   * Listens to a received stream only while a running destination takes it. The listeners batch what they publish
   * only when somebody listens (TurnBatcher): a collector at a million flow records a second keeps every record of a
   * batch alive until the batch is published, which costs it a third of its time in garbage collection, for nothing
   * when no destination forwards flows.
   */
  private listen(): void {
    let events = false;
    let flows = false;
    if (this.started)
      for (const r of this.running.values()) {
        if (r.dest.source_kind === "flow") flows = true;
        else events = true;
      }
    if (events && !this.offEvents) this.offEvents = this.env.bus.on("events.received", ({ events: list }) => this.tee(list));
    if (!events && this.offEvents) {
      this.offEvents();
      this.offEvents = null;
    }
    if (flows && !this.offFlows) this.offFlows = this.env.bus.on("flows.received", ({ datagrams }) => this.teeFlows(datagrams));
    if (!flows && this.offFlows) {
      this.offFlows();
      this.offFlows = null;
    }
  }

  /** Hands the fast-path destinations to the UDP listener and the relay port (what they relayed before a change stays counted). */
  private setMirror(): void {
    const { mirror, relayPort } = this.env;
    if (!mirror && !relayPort) return;
    this.foldMirror();
    this.mirrored.clear();
    const targets: MirrorTarget[] = [];
    for (const [id, r] of this.running) {
      if (!r.sender || !onFastPath(r.dest)) continue;
      if (mirror) this.mirrored.add(id);
      targets.push({ id, address: bare(r.dest.host), port: r.dest.port });
    }
    this.generation = (this.generation % MIRROR_GENERATIONS) + 1;
    this.generations.set(this.generation, { ids: new Set(this.mirrored), since: Date.now() });
    mirror?.set(targets, this.generation);
    relayPort?.set(targets, this.generation);
  }

  /**
   * Whether the UDP listener's reader relayed this record to the destination: the destinations of the generation it
   * was read under. Generation 0: relayed nowhere. A generation this process did not hand out by the record's receipt
   * (a record journaled before a restart and replayed, or one older than MIRROR_GENERATIONS changes): the destinations
   * on the fast path now.
   */
  private relayedByReader(r: Inbound, id: string): boolean {
    if (!r.mirror_gen) return false;
    const g = this.generations.get(r.mirror_gen);
    if (g && g.since <= r.received_at_ms) return g.ids.has(id);
    return this.mirrored.has(id);
  }

  /** Adds what the fast path and the relay port relayed since the last fold to the destinations' counters. */
  private foldMirror(): void {
    this.foldCounts("listener", this.env.mirror);
    this.foldCounts("relay", this.env.relayPort);
  }

  private foldCounts(source: string, mirror: Mirror | undefined): void {
    if (!mirror) return;
    for (const [id, c] of mirror.counts()) {
      const run = this.running.get(id);
      const key = `${source} ${id}`;
      const before = this.mirrorFolded.get(key) ?? { sent: 0, errors: 0 };
      if (!run) continue;
      run.counters.forwarded += c.sent - before.sent;
      if (c.errors > before.errors) {
        run.counters.send_errors += c.errors - before.errors;
        run.counters.last_error_class = "send";
        run.counters.last_error_at = new Date().toISOString();
      }
      if (run.counters.connection === "idle") run.counters.connection = "ready";
      this.mirrorFolded.set(key, c);
    }
  }

  private senderFor(dest: RuntimeDestination, counters: DestinationCounters): Delivery | null {
    // Another pool's destination is teed by that pool's pollers, from what they receive.
    if (dest.pool !== null && dest.pool !== this.env.pool) return noSender(counters, "idle");
    const target = { host: dest.host, port: dest.port, caCert: dest.ca_cert };
    const c = this.env.config;
    const stream = { queueSize: c.queueSize, reconnectMinMs: c.reconnectMinMs, reconnectMaxMs: c.reconnectMaxMs };
    const syslog = (sender: Sender): Delivery => ({ deliver: (r) => sender.send(syslogPayload(r, dest.verbatim)), close: () => sender.close() });
    switch (dest.dest_kind) {
      case "syslog_udp":
        return syslog(new UdpSender(target, counters));
      case "syslog_tcp":
        return syslog(new StreamSender(false, target, counters, stream));
      case "syslog_tls":
        return syslog(new StreamSender(true, target, counters, stream));
      case "snmp_trap_udp": {
        if (dest.verbatim) {
          // The datagram as received (its own community); a record without bytes (none here) cannot be relayed.
          const udp = new UdpSender(target, counters);
          return { deliver: (r) => (r.bytes ? udp.send(r.bytes) : undefined), close: () => udp.close() };
        }
        const trap = new TrapReencoder(target, dest.community ?? "public", counters);
        return { deliver: (r) => trap.send(r), close: () => trap.close() };
      }
      case "flow_udp": {
        const udp = new UdpSender(target, counters);
        if (dest.verbatim) return { deliver: () => undefined, deliverDatagram: (d) => udp.send(d.bytes), close: () => udp.close() };
        const v9 = new V9Exporter();
        const deliverRecords = (passed: readonly PassedRecord[]) => {
          const { datagrams, skipped } = v9.encode(passed.map((p) => p.record));
          // A record with no addresses of one family cannot go out in either template: counted, never silent.
          for (let i = 0; i < skipped; i++) failed(counters, { code: "unencodable" });
          for (const d of datagrams) udp.send(d);
        };
        return { deliver: () => undefined, deliverRecords, close: () => udp.close() };
      }
      case "warehouse": {
        const w = c.warehouse;
        const table = dest.source_kind === "flow" ? w.flowTable : dest.source_kind === "trap" ? w.trapTable : w.syslogTable;
        const sender = new WarehouseSender(
          {
            host: dest.host,
            port: dest.port,
            caCert: dest.ca_cert,
            serviceAccountJson: dest.service_account_json,
            projectId: w.projectId,
            dataset: w.dataset,
            table,
            batchRows: w.batchRows,
            flushMs: w.flushMs,
            queueSize: c.queueSize,
            retryMinMs: c.reconnectMinMs,
            retryMaxMs: c.reconnectMaxMs,
            metadataTokenUrl: w.metadataTokenUrl,
            scope: w.scope,
          },
          counters,
        );
        return {
          deliver: (r) => sender.send(eventRow(r)),
          deliverRecords: (records) => records.forEach((rec) => sender.send(flowRow(rec.datagram, rec.record))),
          close: () => sender.close(),
        };
      }
      default:
        return noSender(counters);
    }
  }

  /**
   * Flow datagrams, relayed whole: one passes a destination's filter when any of its records does, or when it
   * carries templates. The rate limit counts datagrams.
   */
  private teeFlows(datagrams: readonly ReceivedDatagram[]): void {
    if (this.running.size === 0) return;
    for (const run of this.running.values()) {
      const d = run.dest;
      if (d.source_kind !== "flow" || !run.sender) continue;
      if (run.sender.deliverRecords) {
        this.reexport(run, run.sender.deliverRecords, datagrams);
        continue;
      }
      if (!run.sender.deliverDatagram) continue;
      for (const dg of datagrams) {
        if (!datagramPasses(dg, d.filter, this.env.pool)) {
          run.counters.dropped_filter++;
          continue;
        }
        if (run.bucket && !run.bucket.take()) {
          run.counters.dropped_rate_limit++;
          continue;
        }
        run.sender.deliverDatagram(dg);
      }
    }
  }

  /** Re-export: each record through the filter and the rate limit (which counts records), the passing ones encoded together. */
  private reexport(run: Running, deliver: (records: readonly PassedRecord[]) => void, datagrams: readonly ReceivedDatagram[]): void {
    const passing: PassedRecord[] = [];
    for (const dg of datagrams) {
      for (const rec of dg.records) {
        if (!run.dest.filter(flowSubjectOf(dg, rec, this.env.pool))) run.counters.dropped_filter++;
        else if (run.bucket && !run.bucket.take()) run.counters.dropped_rate_limit++;
        else passing.push({ datagram: dg, record: rec });
      }
    }
    if (passing.length > 0) deliver(passing);
  }

  /** One batch of received records through every destination of their stream. */
  private tee(events: readonly Inbound[]): void {
    if (this.running.size === 0) return;
    for (const r of events) {
      let subject: FilterSubject | null = null;
      for (const run of this.running.values()) {
        const d = run.dest;
        if (d.source_kind !== r.kind || !run.sender) continue;
        // Already relayed from the UDP listener's reader thread (the fast path).
        if (r.listener === "syslog.udp" && this.relayedByReader(r, d.id)) continue;
        subject ??= subjectOf(r, this.env.pool);
        if (!d.filter(subject)) {
          run.counters.dropped_filter++;
          continue;
        }
        if (run.bucket && !run.bucket.take()) {
          run.counters.dropped_rate_limit++;
          continue;
        }
        run.sender.deliver(r);
      }
    }
  }
}
