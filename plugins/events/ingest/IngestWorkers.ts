/**
 * The main thread's side of the syslog ingest workers (worker.ts: receive and journal) and their parser threads
 * (parser.ts: parse, attribute, match): starts one pair per core (or ingest.workers), gives each worker its journals,
 * binds the listeners on every worker (the first binds the configured ports, the others the same ports: a port 0
 * becomes the first's), keeps them fed with what attribution and the rules read, and hands the
 * batches they produce to the pipeline, acknowledging each once it is stored. To the rest of the plugin the workers
 * look like the listeners they replace (BoundListener, counters summed over the workers). A thread that dies is
 * started again after a delay (see exited()), its journal carrying on where PostgreSQL's commits say.
 */
import { mkdirSync } from "node:fs";
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { compiledModuleUrl, journalDirs, WakeableSleeps, type MirrorCount, type MirrorTarget } from "../../../core/index.js";
import type { BoundListener, ListenerCounters } from "../lib/types.js";
import type {
  BookNode,
  FromParser,
  FromWorker,
  IngestJournalConfig,
  IngestListenerConfig,
  IngestState,
  IngestWorkerData,
  ParserData,
  ToParser,
  ToWorker,
  WorkerListenerCounters,
} from "./protocol.js";

export type IngestBatch = Extract<FromParser, { t: "batch" }>;
type Message = FromWorker | FromParser;

export interface IngestJournalStats {
  journals: number;
  bytes: number;
  /** Records appended and not yet stored, over every journal. */
  backlog: number;
  /** Received messages lost unstored since start: dropped by the journal's bounds before they were read, or never written to it (a failed write). */
  dropped: number;
  /** Of those, the messages the journal could not take (a failed write: a full disk). */
  lost: number;
}

export interface IngestWorkersOptions {
  workers: number;
  /** The data directory's journal folder; each worker's journal is `syslog-<n>` in it. */
  journalRoot: string;
  journal: Omit<IngestJournalConfig, "dirs">;
  listeners: IngestListenerConfig;
  batchSize: number;
  maxInFlight: number;
  /** Niceness of the parser threads (0 = the process's; Linux only): receipt keeps the cores when they are short. */
  parserNice?: number;
  /** A batch to store; `ack` once PostgreSQL holds it (its journal range is then committed). */
  onBatch(batch: IngestBatch, ack: () => void): void;
  /** The journal ranges PostgreSQL holds at or past `from` for journal `id` (a replay skips them). */
  storedRanges(id: string, from: number): Promise<[number, number][]>;
  /** A listener the first worker could not bind (the others then do not try it; the rest run). */
  onBindError(name: string, port: number, err: NodeJS.ErrnoException): void;
  log: { info(msg: string, f?: object): void; warn(msg: string, f?: object): void; error(msg: string, f?: object): void };
}

/** A thread of a pair: the worker receives and journals, the parser parses what it journaled. */
type Thread = "worker" | "parser";

/** Restart delays of a thread that died: doubling from the first to the most, back to the first after it ran a while. */
const RESTART_FIRST_MS = 100;
const RESTART_MOST_MS = 5000;
const RESTART_RESET_AFTER_MS = 30_000;

/** What the parser posts to the main thread (the rest comes from the worker). */
const PARSER_SAYS: ReadonlySet<Message["t"]> = new Set(["ready", "batch", "drained", "parser-closed"] satisfies FromParser["t"][]);

interface Waiter {
  resolve(m: Message): void;
  reject(err: Error): void;
}

/** What the workers that died in a slot had counted (their last stats), so the sums never go back after a restart. */
interface DeadCounts {
  listeners: Record<string, WorkerListenerCounters>;
  lost: number;
  mirror: Map<string, MirrorCount>;
  journalDropped: number;
}

interface WorkerHandle {
  index: number;
  /** Receives and journals. */
  worker: Worker;
  /** Parses, attributes and matches what the worker journaled; its batches come from here. */
  parser: Worker;
  /** Whether each thread runs (false from its exit until its replacement starts). */
  up: Record<Thread, boolean>;
  /** The latest stats the worker posted. */
  stats: Extract<FromWorker, { t: "stats" }> | null;
  dead: DeadCounts;
  /** Who waits for the worker's next message of a type (all of them get it; rejected when a thread of the pair exits). */
  waiters: Map<string, Waiter[]>;
  /** Batches handed to onBatch and not yet acknowledged, and who waits for there to be none. */
  outstanding: number;
  idle: (() => void)[];
  /** The restart under way, if any. */
  recovering: Promise<void> | null;
  /** Why a thread failed (its 'error' event), told when it exits. */
  cause: Partial<Record<Thread, string>>;
  /** The next restart delay, and since when the pair runs whole. */
  backoffMs: number;
  /** The delay a death just logged, for the restart to wait (null: the next step of the backoff). */
  nextDelay: number | null;
  wholeSince: number;
}

type Protocol = "udp" | "tcp" | "tls";

export class IngestWorkers {
  private handles: WorkerHandle[] = [];
  private listeners: BoundListener[] = [];
  /** As the parser starts (it copies no feed, samples the live channel) until setFlags says otherwise. */
  private flags = { feed: false, live: true };
  /** The rules and sources setState gave last, and the book with every patch applied: what a restarted parser gets. */
  private state: Pick<IngestState, "rules" | "sources"> = {};
  private book = new Map<string, BookNode>();
  private mirrorTargets: { id: string; address: string; port: number }[] = [];
  private mirrorGen = 0;
  private dropsThisMinute = 0;
  private dropTimer: NodeJS.Timeout | null = null;
  private started = false;
  /** Set by close() and exit(): a thread that ends then is not restarted. */
  private closing = false;
  private readonly restartCounts: Record<Thread, number> = { worker: 0, parser: 0 };
  /** Threads ended on purpose (the parser of a worker that died): their exit restarts nothing. */
  private readonly retired = new WeakSet<Worker>();
  /** Restart delays under way, woken by close(). */
  private readonly sleeps = new WakeableSleeps();
  private readonly workerUrl = compiledModuleUrl("./worker.js", import.meta.url);
  private readonly parserUrl = compiledModuleUrl("./parser.js", import.meta.url);

  constructor(private readonly o: IngestWorkersOptions) {}

  /** Starts the workers, resumes their journals (skipping what is stored) and binds the listeners; returns the bound ones. */
  async start(state: IngestState): Promise<BoundListener[]> {
    const n = Math.max(1, this.o.workers);
    mkdirSync(this.o.journalRoot, { recursive: true, mode: 0o700 });
    this.state = { rules: state.rules, sources: state.sources };
    this.book = new Map(state.book);
    for (const [address, node] of state.bookPatch ?? []) this.patchBook(address, node);
    for (let i = 0; i < n; i++) this.handles.push(this.spawn(null, i));
    // Each worker reports its journals first; then it gets the state and what PostgreSQL already holds, and starts reading.
    await Promise.all(this.handles.map((h) => this.resume(h)));
    await this.bindAll();
    this.started = true;
    this.dropTimer = setInterval(() => this.reportDrops(), 60_000);
    this.dropTimer.unref();
    return this.listeners;
  }

  /** A worker and its parser for slot `index`: a new handle, or new threads in `h` (whose threads have ended). */
  private spawn(h: WorkerHandle | null, index: number): WorkerHandle {
    const n = Math.max(1, this.o.workers);
    const { port1, port2 } = new MessageChannel();
    const data: IngestWorkerData = {
      index,
      listeners: this.o.listeners,
      // Journals of a larger worker count before are read (not appended to) too, so nothing they hold is left behind.
      journal: { ...this.o.journal, dirs: journalDirs(this.o.journalRoot, "syslog", index, n) },
      batchSize: this.o.batchSize,
      maxInFlight: this.o.maxInFlight,
      port: port2,
    };
    const worker = new Worker(this.workerUrl, { workerData: data, transferList: [port2] });
    const parser = this.parserThread(index, port1);
    if (!h)
      h = {
        index,
        worker,
        parser,
        up: { worker: true, parser: true },
        stats: null,
        dead: { listeners: {}, lost: 0, mirror: new Map(), journalDropped: 0 },
        waiters: new Map(),
        outstanding: 0,
        idle: [],
        recovering: null,
        cause: {},
        backoffMs: RESTART_FIRST_MS,
        nextDelay: null,
        wholeSince: Date.now(),
      };
    else Object.assign(h, { worker, parser, up: { worker: true, parser: true } });
    this.wire(h, worker, "worker");
    this.wire(h, parser, "parser");
    return h;
  }

  private parserThread(index: number, port: MessagePort): Worker {
    const data: ParserData = { index, maxMessageBytes: this.o.listeners.maxMessageBytes, nice: this.o.parserNice ?? 0, port };
    return new Worker(this.parserUrl, { workerData: data, transferList: [port] });
  }

  /** The journals reported, the parser given the state, each journal resumed past what PostgreSQL holds. */
  private async resume(h: WorkerHandle): Promise<void> {
    const j = (await this.next(h, "journals")) as Extract<FromWorker, { t: "journals" }>;
    // The parser holds the state before the first record reaches it.
    await this.greet(h);
    for (const p of j.list) {
      const ranges = await this.o.storedRanges(p.id, p.committed);
      h.worker.postMessage({ t: "resume", partition: p.partition, ranges } satisfies ToWorker);
      if (p.next > p.committed) this.o.log.info("events: syslog journal replayed from its last commit", { journal: p.id, records: p.next - p.committed });
    }
  }

  /** Gives the parser what attribution and the rules read, and the flags; resolves once it holds them. */
  private async greet(h: WorkerHandle): Promise<void> {
    const ready = this.next(h, "ready");
    h.parser.postMessage({ t: "state", hello: true, ...this.state, book: [...this.book] } satisfies ToParser);
    h.parser.postMessage({ t: "flags", ...this.flags } satisfies ToParser);
    await ready;
  }

  private wire(h: WorkerHandle, w: Worker, thread: Thread): void {
    w.unref();
    w.on("message", (m: Message) => this.onMessage(h, m));
    w.on("error", (err) => {
      h.cause[thread] = String(err.stack ?? err);
    });
    w.on("exit", (code) => this.exited(h, w, thread, code));
  }

  private onMessage(h: WorkerHandle, m: Message): void {
    const waiting = h.waiters.get(m.t);
    if (waiting) {
      h.waiters.delete(m.t);
      for (const w of waiting) w.resolve(m);
    }
    switch (m.t) {
      case "batch": {
        // The ack goes to the worker that journaled the batch; a worker that died since has nobody to tell (PostgreSQL's
        // journal ranges say what is stored to the one that replaces it).
        const worker = h.worker;
        let acked = false;
        h.outstanding++;
        return this.o.onBatch(m, () => {
          if (acked) return;
          acked = true;
          if (worker === h.worker && h.up.worker) worker.postMessage({ t: "ack", partition: m.partition, first: m.first, end: m.end } satisfies ToWorker);
          if (--h.outstanding === 0) for (const w of h.idle.splice(0)) w();
        });
      }
      case "stats":
        h.stats = m;
        return;
      case "drop":
        if (this.dropsThisMinute === 0)
          this.o.log.warn("events: syslog journal full or too old: unprocessed messages dropped", { records: m.records, bound: m.why });
        this.dropsThisMinute += m.records;
        return;
      case "warn":
        return this.o.log.warn(m.message, m.fields);
    }
  }

  // ---- a thread that died: restarted ------------------------------------------------------------------------------

  /**
   * A thread of the pair ended. Unless the service is closing (or not started yet), it died: it is restarted after a
   * delay (RESTART_FIRST_MS doubling to RESTART_MOST_MS). A parser alone is replaced beside its worker, which hands the
   * new one again what the old one did not finish; a worker takes its parser with it, and the new pair opens the
   * journals and binds the listeners again as at start.
   */
  private exited(h: WorkerHandle, w: Worker, thread: Thread, code: number): void {
    if (w !== h[thread]) return;
    h.up[thread] = false;
    const failed = h.cause[thread] !== undefined;
    const cause = h.cause[thread] ?? `exit code ${code}`;
    delete h.cause[thread];
    const err = new Error(`syslog ingest ${thread} ${h.index} exited`);
    for (const list of h.waiters.values()) for (const x of list) x.reject(err);
    h.waiters.clear();
    if (this.retired.has(w)) return;
    if (!this.started || this.closing) {
      if (failed) this.o.log.error(`events: syslog ${thread === "worker" ? "ingest worker" : "parser thread"} failed`, { worker: h.index, error: cause });
      return;
    }
    if (thread === "worker") {
      this.keepCounts(h);
      // The parser goes with its worker (the channel between them is gone); the batches it posted still arrive.
      if (h.up.parser) this.retire(h);
    }
    this.restartCounts[thread]++;
    const delay = (h.nextDelay = this.backoff(h));
    this.o.log.error(`events: syslog ingest ${thread} thread died, restarting it`, { worker: h.index, thread, cause, restart_in_ms: delay });
    h.recovering ??= this.recover(h).finally(() => {
      h.recovering = null;
    });
  }

  /** Ends a thread of `h` on purpose (its exit restarts nothing by itself). */
  private retire(h: WorkerHandle, thread: Thread = "parser"): Promise<number> {
    this.retired.add(h[thread]);
    h.up[thread] = false;
    return h[thread].terminate();
  }

  /** The counters of a worker that died, kept for the sums. */
  private keepCounts(h: WorkerHandle): void {
    const s = h.stats;
    h.stats = null;
    if (!s) return;
    const d = h.dead;
    for (const [name, c] of Object.entries(s.listeners)) {
      const t = (d.listeners[name] ??= { received: 0, dropped: 0, malformed: 0 });
      t.received += c.received;
      t.dropped += c.dropped;
      t.malformed += c.malformed;
    }
    d.lost += s.lost;
    for (const [id, sent, errors] of s.mirror) {
      const t = d.mirror.get(id) ?? { sent: 0, errors: 0 };
      d.mirror.set(id, { sent: t.sent + sent, errors: t.errors + errors });
    }
    for (const j of s.journals) d.journalDropped += j.dropped;
  }

  private backoff(h: WorkerHandle): number {
    if (Date.now() - h.wholeSince > RESTART_RESET_AFTER_MS) h.backoffMs = RESTART_FIRST_MS;
    const delay = h.backoffMs;
    h.backoffMs = Math.min(h.backoffMs * 2, RESTART_MOST_MS);
    return delay;
  }

  /** Restarts what of `h` died until the pair runs whole again, or the service closes. */
  private async recover(h: WorkerHandle): Promise<void> {
    while (!this.closing && !(h.up.worker && h.up.parser)) {
      const delay = h.nextDelay ?? this.backoff(h);
      h.nextDelay = null;
      await this.sleeps.sleep(delay);
      if (this.closing) return;
      try {
        if (!h.up.worker) await this.respawnPair(h);
        else await this.respawnParser(h);
        if (h.up.worker && h.up.parser) h.wholeSince = Date.now();
      } catch (err) {
        // A thread that died meanwhile said so itself (exited()); anything else is told here.
        if (!this.closing && h.nextDelay === null)
          this.o.log.warn("events: syslog ingest thread restart failed, retrying", { worker: h.index, error: String(err) });
      }
    }
  }

  /**
   * A new parser beside a worker that runs. First what the old one handed the main thread is stored (its ranges then
   * done in the worker), so that the worker, handing over again from the journal what is not done, hands nothing over
   * twice; the new parser gets the state before its first record.
   */
  private async respawnParser(h: WorkerHandle): Promise<void> {
    await this.whenIdle(h);
    if (this.closing || !h.up.worker) return;
    const { port1, port2 } = new MessageChannel();
    h.parser = this.parserThread(h.index, port1);
    h.up.parser = true;
    this.wire(h, h.parser, "parser");
    await this.greet(h);
    h.worker.postMessage({ t: "parser", port: port2 } satisfies ToWorker, [port2]);
  }

  /**
   * A new worker and parser in place of a worker that died. Once what its parser handed the main thread is stored,
   * the new worker opens the journals (PostgreSQL's journal ranges say what is stored past their checkpoints, as
   * after a crash of the service) and binds the listeners again on the ports the others hold (SO_REUSEPORT).
   */
  private async respawnPair(h: WorkerHandle): Promise<void> {
    if (h.up.parser) await this.retire(h);
    else await h.parser.terminate();
    await this.whenIdle(h);
    if (this.closing) return;
    this.spawn(h, h.index);
    const errors: Extract<FromWorker, { t: "bind-error" }>[] = [];
    const onError = (m: Message) => m.t === "bind-error" && errors.push(m);
    h.worker.on("message", onError);
    try {
      await this.resume(h);
      if (this.mirrorTargets.length) h.worker.postMessage({ t: "mirror", targets: this.mirrorTargets, gen: this.mirrorGen } satisfies ToWorker);
      const ports: Record<Protocol, number | null> = { udp: null, tcp: null, tls: null };
      for (const l of this.listeners) ports[l.protocol] = l.port;
      await this.bindOne(h, ports);
    } catch (err) {
      // Half started (PostgreSQL did not answer which ranges it holds, say): ended, to be started again whole.
      await Promise.all([h.up.parser && this.retire(h, "parser"), h.up.worker && this.retire(h, "worker")]);
      throw err;
    } finally {
      h.worker.off("message", onError);
    }
    for (const e of errors)
      this.o.log.warn("events: a restarted syslog ingest worker could not bind a listener again (the other workers hold it)", {
        worker: h.index,
        listener: e.name,
        port: e.port,
        error: e.message,
      });
  }

  /** Resolves once every batch of `h` handed to onBatch is acknowledged (or the service closes). */
  private whenIdle(h: WorkerHandle): Promise<void> {
    if (h.outstanding === 0 || this.closing) return Promise.resolve();
    return new Promise((resolve) => h.idle.push(resolve));
  }

  /** Restarts per thread kind since start (the workers' and the parsers' that died). */
  restarts(): Readonly<Record<Thread, number>> {
    return { ...this.restartCounts };
  }

  /** The threads slot `index` runs now (diagnostics, and tests that end one). */
  threads(index: number): { worker: Worker; parser: Worker } {
    const h = this.handles[index];
    return { worker: h.worker, parser: h.parser };
  }

  /** Resolves with the next message of type `t` from the worker or its parser (rejects when either exits first). */
  private next(h: WorkerHandle, t: Message["t"]): Promise<Message> {
    return new Promise((resolve, reject) => {
      const from: Thread = PARSER_SAYS.has(t) ? "parser" : "worker";
      if (!h.up[from]) return reject(new Error(`syslog ingest ${from} ${h.index} is not running`));
      const list = h.waiters.get(t) ?? [];
      list.push({ resolve, reject });
      h.waiters.set(t, list);
    });
  }

  private async bindAll(): Promise<void> {
    const l = this.o.listeners;
    const ports: Record<Protocol, number | null> = { udp: l.udp, tcp: l.tcp, tls: l.tls };
    const first = this.handles[0];
    const errors: Extract<FromWorker, { t: "bind-error" }>[] = [];
    const onError = (m: Message) => m.t === "bind-error" && errors.push(m);
    first.worker.on("message", onError);
    const bound = (await this.bindOne(first, ports)) as Extract<FromWorker, { t: "bound" }>;
    first.worker.off("message", onError);
    for (const e of errors) this.o.onBindError(e.name, e.port, Object.assign(new Error(e.message), { code: e.code }));
    // The others bind what the first bound, on the ports it got.
    const same = { udp: null, tcp: null, tls: null } as Record<Protocol, number | null>;
    for (const b of bound.listeners) same[b.protocol] = b.port;
    await Promise.all(this.handles.slice(1).map((h) => this.bindOne(h, same)));
    this.listeners = bound.listeners.map((b) => this.facade(b.name, b.protocol, b.address, b.port));
  }

  private bindOne(h: WorkerHandle, ports: { udp: number | null; tcp: number | null; tls: number | null }): Promise<Message> {
    const done = this.next(h, "bound");
    h.worker.postMessage({ t: "bind", ...ports } satisfies ToWorker);
    return done;
  }

  /** A listener as the plugin sees it: counters summed over the workers' latest stats. */
  private facade(name: string, protocol: "udp" | "tcp" | "tls", address: string, port: number): BoundListener {
    const sum = (): ListenerCounters => {
      const c = { received: 0, dropped: 0, malformed: 0 };
      for (const h of this.handles)
        for (const s of [h.dead.listeners[name], h.stats?.listeners[name]]) {
          if (!s) continue;
          c.received += s.received;
          c.dropped += s.dropped;
          c.malformed += s.malformed;
        }
      return c;
    };
    const counters = {
      get received() {
        return sum().received;
      },
      get dropped() {
        return sum().dropped;
      },
      get malformed() {
        return sum().malformed;
      },
    } as ListenerCounters;
    const l: BoundListener = { name, stream: "syslog", protocol, address, port, counters, close: async () => undefined };
    if (protocol === "udp") {
      l.mirror = (targets, generation) => this.mirror(targets, generation ?? 0);
      l.mirrorCounts = () => this.mirrorCounts();
    }
    return l;
  }

  private mirror(targets: readonly MirrorTarget[], gen: number): void {
    const plain = targets.map((t) => ({ id: t.id, address: t.address, port: t.port }));
    this.mirrorTargets = plain;
    this.mirrorGen = gen;
    for (const h of this.handles) if (h.up.worker) h.worker.postMessage({ t: "mirror", targets: plain, gen } satisfies ToWorker);
  }

  /** Per mirror target id: what the workers relayed, summed. */
  private mirrorCounts(): Map<string, MirrorCount> {
    const out = new Map<string, MirrorCount>();
    const add = (id: string, sent: number, errors: number) => {
      const t = out.get(id) ?? { sent: 0, errors: 0 };
      out.set(id, { sent: t.sent + sent, errors: t.errors + errors });
    };
    for (const h of this.handles) {
      for (const [id, c] of h.dead.mirror) add(id, c.sent, c.errors);
      for (const [id, sent, errors] of h.stats?.mirror ?? []) add(id, sent, errors);
    }
    return out;
  }

  /** New rules, node addresses or sources for the workers (only the parts given). */
  setState(state: IngestState): void {
    if (state.rules) this.state.rules = state.rules;
    if (state.book) this.book = new Map(state.book);
    for (const [address, node] of state.bookPatch ?? []) this.patchBook(address, node);
    if (state.sources) this.state.sources = state.sources;
    for (const h of this.handles) if (h.up.parser) h.parser.postMessage({ t: "state", ...state } satisfies ToParser);
  }

  private patchBook(address: string, node: BookNode | null): void {
    if (node) this.book.set(address, node);
    else this.book.delete(address);
  }

  /** Whether the workers copy every message for the events.received feed, and a sample for the live channel. */
  setFlags(feed: boolean, live: boolean): void {
    if (feed === this.flags.feed && live === this.flags.live) return;
    this.flags = { feed, live };
    for (const h of this.handles) if (h.up.parser) h.parser.postMessage({ t: "flags", feed, live } satisfies ToParser);
  }

  journalStats(): IngestJournalStats {
    const out = { journals: 0, bytes: 0, backlog: 0, dropped: 0, lost: 0 };
    for (const h of this.handles) {
      out.lost += h.dead.lost + (h.stats?.lost ?? 0);
      out.dropped += h.dead.lost + h.dead.journalDropped + (h.stats?.lost ?? 0);
      for (const j of h.stats?.journals ?? []) {
        out.journals++;
        out.bytes += j.bytes;
        out.backlog += j.next - j.committed;
        out.dropped += j.dropped;
      }
    }
    return out;
  }

  /** Messages each worker received on a listener (its latest stats). */
  receivedPerWorker(name: string): number[] {
    return this.handles.map((h) => (h.dead.listeners[name]?.received ?? 0) + (h.stats?.listeners[name]?.received ?? 0));
  }

  /** Per journal id, the committed offset its checkpoint file holds (ranges below it need not be kept in PostgreSQL). */
  checkpoints(): Map<string, number> {
    const out = new Map<string, number>();
    for (const h of this.handles) for (const j of h.stats?.journals ?? []) out.set(j.id, j.checkpointed);
    return out;
  }

  private reportDrops(): void {
    if (this.dropsThisMinute > 0) this.o.log.warn("events: syslog journal dropped unprocessed messages in the last minute", { records: this.dropsThisMinute });
    this.dropsThisMinute = 0;
  }

  /**
   * Resolves once every worker journaled and handed over what it had received (as much as maxInFlight lets it). A
   * pair being restarted is drained once it runs again (a thread that dies meanwhile: after its restart).
   */
  async drain(): Promise<void> {
    await Promise.all(this.handles.map((h) => this.drainOne(h)));
  }

  private async drainOne(h: WorkerHandle): Promise<void> {
    while (!this.closing) {
      if (h.recovering) {
        await h.recovering;
        continue;
      }
      if (!h.up.worker || !h.up.parser) return;
      const done = Promise.all([this.next(h, "drained"), this.next(h, "worker-drained")]);
      h.worker.postMessage({ t: "drain" } satisfies ToWorker);
      try {
        await done;
        return;
      } catch {
        // a thread of the pair died: drained again once it is back
      }
    }
  }

  /**
   * Stops receiving and handing over (what is journaled and not stored waits for the next start). No thread is
   * restarted from here on; a restart under way finishes first, one waiting for its delay does not happen.
   */
  async close(): Promise<void> {
    this.stopRestarts();
    await Promise.all(this.handles.map((h) => h.recovering));
    await Promise.all(
      this.handles.map((h) => {
        if (!h.up.worker) return undefined;
        // The parser's reply only from a parser that runs (its worker then tells it to close).
        const replies: Message["t"][] = h.up.parser ? ["closed", "parser-closed"] : ["closed"];
        const done = Promise.all(replies.map((r) => this.next(h, r).catch(() => undefined)));
        h.worker.postMessage({ t: "close" } satisfies ToWorker);
        return done;
      }),
    );
  }

  private stopRestarts(): void {
    this.closing = true;
    this.sleeps.wakeAll();
    for (const h of this.handles) for (const w of h.idle.splice(0)) w();
  }

  /** After close() and the last acknowledgements: journals closed (checkpoints written), workers ended. */
  async exit(): Promise<void> {
    if (this.dropTimer) clearInterval(this.dropTimer);
    this.stopRestarts();
    await Promise.all(this.handles.map((h) => h.recovering));
    await Promise.all(
      this.handles.map(async (h) => {
        if (h.up.worker) {
          const done = this.next(h, "exited").catch(() => undefined);
          h.worker.postMessage({ t: "exit" } satisfies ToWorker);
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 2000)))]);
          clearTimeout(timer);
        }
        if (h.up.parser) h.parser.postMessage({ t: "exit" } satisfies ToParser);
        await Promise.all([h.worker.terminate(), h.parser.terminate()]);
      }),
    );
    this.handles = [];
  }
}
