/**
 * The main thread's side of the syslog ingest workers (worker.ts: receive and journal) and their parser threads
 * (parser.ts: parse, attribute, match): starts one pair per core (or ingest.workers), gives each worker its journals, binds the listeners on every worker (the first binds the configured ports, the others the same
 * ports: a port 0 becomes the first's), keeps them fed with what attribution and the rules read, and hands the
 * batches they produce to the pipeline, acknowledging each once it is stored. To the rest of the plugin the workers
 * look like the listeners they replace (BoundListener, counters summed over the workers).
 */
import { mkdirSync } from "node:fs";
import { MessageChannel, Worker } from "node:worker_threads";
import { compiledModuleUrl, journalDirs, type MirrorCount, type MirrorTarget } from "../../../core/index.js";
import type { BoundListener, ListenerCounters } from "../lib/types.js";
import type {
  FromParser,
  FromWorker,
  IngestJournalConfig,
  IngestListenerConfig,
  IngestState,
  IngestWorkerData,
  ParserData,
  ToParser,
  ToWorker,
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

interface WorkerHandle {
  index: number;
  /** Receives and journals. */
  worker: Worker;
  /** Parses, attributes and matches what the worker journaled; its batches come from here. */
  parser: Worker;
  /** The latest stats the worker posted. */
  stats: Extract<FromWorker, { t: "stats" }> | null;
  /** Who waits for the worker's next message of a type (all of them get it). */
  waiters: Map<string, ((m: Message) => void)[]>;
}

type Protocol = "udp" | "tcp" | "tls";

export class IngestWorkers {
  private handles: WorkerHandle[] = [];
  private listeners: BoundListener[] = [];
  private flags = { feed: false, live: false };
  private dropsThisMinute = 0;
  private dropTimer: NodeJS.Timeout | null = null;

  constructor(private readonly o: IngestWorkersOptions) {}

  /** Starts the workers, resumes their journals (skipping what is stored) and binds the listeners; returns the bound ones. */
  async start(state: IngestState): Promise<BoundListener[]> {
    const n = Math.max(1, this.o.workers);
    mkdirSync(this.o.journalRoot, { recursive: true, mode: 0o700 });
    const url = compiledModuleUrl("./worker.js", import.meta.url);
    const parserUrl = compiledModuleUrl("./parser.js", import.meta.url);
    for (let i = 0; i < n; i++) {
      const { port1, port2 } = new MessageChannel();
      const parserData: ParserData = { index: i, maxMessageBytes: this.o.listeners.maxMessageBytes, nice: this.o.parserNice ?? 0, port: port1 };
      const data: IngestWorkerData = {
        index: i,
        listeners: this.o.listeners,
        // Journals of a larger worker count before are read (not appended to) too, so nothing they hold is left behind.
        journal: { ...this.o.journal, dirs: journalDirs(this.o.journalRoot, "syslog", i, n) },
        batchSize: this.o.batchSize,
        maxInFlight: this.o.maxInFlight,
        port: port2,
      };
      const h: WorkerHandle = {
        index: i,
        worker: new Worker(url, { workerData: data, transferList: [port2] }),
        parser: new Worker(parserUrl, { workerData: parserData, transferList: [port1] }),
        stats: null,
        waiters: new Map(),
      };
      h.worker.unref();
      h.parser.unref();
      this.wire(h);
      this.handles.push(h);
    }
    // Each worker reports its journals first; then it gets the state and what PostgreSQL already holds, and starts reading.
    await Promise.all(
      this.handles.map(async (h) => {
        const j = (await this.next(h, "journals")) as Extract<FromWorker, { t: "journals" }>;
        // The parser holds the state before the first record reaches it.
        const ready = this.next(h, "ready");
        h.parser.postMessage({ t: "state", hello: true, ...state } satisfies ToParser);
        await ready;
        for (const p of j.list) {
          const ranges = await this.o.storedRanges(p.id, p.committed);
          h.worker.postMessage({ t: "resume", partition: p.partition, ranges } satisfies ToWorker);
          if (p.next > p.committed) this.o.log.info("events: syslog journal replayed from its last commit", { journal: p.id, records: p.next - p.committed });
        }
      }),
    );
    await this.bindAll();
    this.dropTimer = setInterval(() => this.reportDrops(), 60_000);
    this.dropTimer.unref();
    return this.listeners;
  }

  private wire(h: WorkerHandle): void {
    const onMessage = (m: Message) => {
      const waiting = h.waiters.get(m.t);
      if (waiting) {
        h.waiters.delete(m.t);
        for (const w of waiting) w(m);
      }
      switch (m.t) {
        case "batch":
          return this.o.onBatch(m, () => h.worker.postMessage({ t: "ack", partition: m.partition, first: m.first, end: m.end } satisfies ToWorker));
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
    };
    h.worker.on("message", onMessage);
    h.parser.on("message", onMessage);
    h.worker.on("error", (err) => this.o.log.error("events: syslog ingest worker failed", { worker: h.index, error: String(err.stack ?? err) }));
    h.parser.on("error", (err) => this.o.log.error("events: syslog parser thread failed", { worker: h.index, error: String(err.stack ?? err) }));
  }

  /** Resolves with the next message of type `t` from the worker or its parser. */
  private next(h: WorkerHandle, t: Message["t"]): Promise<Message> {
    return new Promise((resolve, reject) => {
      const onExit = () => reject(new Error(`syslog ingest worker ${h.index} exited`));
      h.worker.once("exit", onExit);
      h.parser.once("exit", onExit);
      const list = h.waiters.get(t) ?? [];
      list.push((m) => {
        h.worker.off("exit", onExit);
        h.parser.off("exit", onExit);
        resolve(m);
      });
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
      for (const h of this.handles) {
        const s = h.stats?.listeners[name];
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
      l.mirror = (targets) => this.mirror(targets);
      l.mirrorCounts = () => this.mirrorCounts();
    }
    return l;
  }

  private mirror(targets: readonly MirrorTarget[]): void {
    const plain = targets.map((t) => ({ id: t.id, address: t.address, port: t.port }));
    for (const h of this.handles) h.worker.postMessage({ t: "mirror", targets: plain } satisfies ToWorker);
  }

  /** Per mirror target id: what the workers relayed, summed. */
  private mirrorCounts(): Map<string, MirrorCount> {
    const out = new Map<string, MirrorCount>();
    for (const h of this.handles)
      for (const [id, sent, errors] of h.stats?.mirror ?? []) {
        const t = out.get(id) ?? { sent: 0, errors: 0 };
        out.set(id, { sent: t.sent + sent, errors: t.errors + errors });
      }
    return out;
  }

  /** New rules, node addresses or sources for the workers (only the parts given). */
  setState(state: IngestState): void {
    for (const h of this.handles) h.parser.postMessage({ t: "state", ...state } satisfies ToParser);
  }

  /** Whether the workers copy every message for the events.received feed, and a sample for the live channel. */
  setFlags(feed: boolean, live: boolean): void {
    if (feed === this.flags.feed && live === this.flags.live) return;
    this.flags = { feed, live };
    for (const h of this.handles) h.parser.postMessage({ t: "flags", feed, live } satisfies ToParser);
  }

  journalStats(): IngestJournalStats {
    const out = { journals: 0, bytes: 0, backlog: 0, dropped: 0, lost: 0 };
    for (const h of this.handles) {
      out.lost += h.stats?.lost ?? 0;
      out.dropped += h.stats?.lost ?? 0;
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
    return this.handles.map((h) => h.stats?.listeners[name]?.received ?? 0);
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

  /** Resolves once every worker journaled and handed over what it had received (as much as maxInFlight lets it). */
  drain(): Promise<void> {
    return this.askAll({ t: "drain" }, ["drained", "worker-drained"]);
  }

  /** Stops receiving and handing over (what is journaled and not stored waits for the next start). */
  close(): Promise<void> {
    return this.askAll({ t: "close" }, ["closed", "parser-closed"]);
  }

  /** Sends `m` to every worker and resolves once each (or its parser) sent every reply (or exited). */
  private async askAll(m: ToWorker, replies: Message["t"][]): Promise<void> {
    await Promise.all(
      this.handles.map((h) => {
        const done = Promise.all(replies.map((r) => this.next(h, r).catch(() => undefined)));
        h.worker.postMessage(m);
        return done;
      }),
    );
  }

  /** After close() and the last acknowledgements: journals closed (checkpoints written), workers ended. */
  async exit(): Promise<void> {
    if (this.dropTimer) clearInterval(this.dropTimer);
    await Promise.all(
      this.handles.map(async (h) => {
        const done = this.next(h, "exited").catch(() => undefined);
        h.worker.postMessage({ t: "exit" } satisfies ToWorker);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 2000)))]);
        clearTimeout(timer);
        h.parser.postMessage({ t: "exit" } satisfies ToParser);
        await Promise.all([h.worker.terminate(), h.parser.terminate()]);
      }),
    );
    this.handles = [];
  }
}
