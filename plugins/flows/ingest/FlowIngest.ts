/**
 * The main thread's side of the flows ingest (protocol.ts): starts a decoder thread per core (or ingest.workers) and
 * as many reader threads, each reader on its own SO_REUSEPORT socket of the flows port with a MessagePort to every
 * decoder; resumes the decoders' journals past what PostgreSQL holds; and every flush takes the decoders' aggregates
 * for the collector to store. To the collector it is one listener (counters summed over the threads).
 */
import { mkdirSync } from "node:fs";
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { compiledModuleUrl, journalDirs, WakeableSleeps } from "../../../core/index.js";
import type { TemplateJson } from "../decode/types.js";
import type { DecoderCounters, DecoderData, FromDecoder, FromReader, JournalConfig, JournalState, ReaderData, ToDecoder, ToReader } from "./protocol.js";

export type Taken = Extract<FromDecoder, { t: "taken" }>;
export type FeedItem = Extract<FromDecoder, { t: "feed" }>["items"][number];

export interface FlowIngestOptions {
  workers: number;
  /** The data directory's journal folder; decoder n's journal is `flows-<n>` in it. */
  journalRoot: string;
  journal: JournalConfig;
  listen: { type: "udp4" | "udp6"; host: string; port: number; ipv6Only: boolean; recvBufferSize: number; maxBacklogBytes: number };
  maxKeys: number;
  pendingMaxMs: number;
  overrides: Record<string, number>;
  templates: TemplateJson[];
  storedRanges(id: string, from: number): Promise<[number, number][]>;
  /** The templates the store holds now (a decoder started again gets them; o.templates when it fails or is not given). */
  currentTemplates?(): Promise<TemplateJson[]>;
  /** A decoder holds data for a template it lacks from this exporter. */
  onLookup(exporter: string): void;
  /** Datagrams and their records, while the feed is on. */
  onFeed(items: FeedItem[]): void;
  log: { info(msg: string, f?: object): void; warn(msg: string, f?: object): void; error(msg: string, f?: object): void };
}

interface Thread<S> {
  index: number;
  worker: Worker;
  /** False from its exit until a replacement runs. */
  up: boolean;
  stats: S | null;
  waiters: Map<string, ((m: { t: string }) => void)[]>;
  /** Why it failed (its 'error' event), told when it exits. */
  cause?: string;
}

/** Restart delays of a thread that died: doubling from the first to the most, back to the first after it ran a while. */
const RESTART_FIRST_MS = 100;
const RESTART_MOST_MS = 5000;
const RESTART_RESET_AFTER_MS = 30_000;

export interface IngestTotals {
  received: number;
  /** Dropped by the readers (decoders behind), held too long for a template, lost by the journal (a failed write or its bounds). */
  dropped: number;
  malformed: number;
  records: number;
  droppedRecords: number;
  templates: number;
}

export class FlowIngest {
  private decoders: Thread<Extract<FromDecoder, { t: "stats" }>>[] = [];
  private readers: Thread<Extract<FromReader, { t: "stats" }>>[] = [];
  private seq = 0;
  private journalDrops = 0;
  private dropsThisMinute = 0;
  private dropTimer: NodeJS.Timeout | null = null;
  private feedOn = false;
  private started = false;
  /** Set by stopReceiving() and exit(): a thread that ends then is not restarted. */
  private closing = false;
  private readonly restartCounts = { reader: 0, decoder: 0 };
  /** What readers and decoders that died had counted (their last stats), so the totals never go back. */
  private deadReaders = { received: 0, dropped: 0 };
  private deadDecoders: DecoderCounters = { datagrams: 0, malformed: 0, dropped: 0, records: 0, droppedRecords: 0, templates: 0, lost: 0 };
  private deadRecords: number[] = [];
  /** Per decoder: the takes it handed over that are not stored yet (a decoder started again waits for them). */
  private readonly pendingTakes = new Map<number, Set<number>>();
  private readonly takesStored = new Map<number, (() => void)[]>();
  private readonly decoderUrl = compiledModuleUrl("./worker.js", import.meta.url);
  private readonly recovering = new Set<Promise<void>>();
  private readonly sleeps = new WakeableSleeps();
  private readonly backoff = new Map<string, { ms: number; since: number }>();
  private readonly readerUrl = compiledModuleUrl("./reader.js", import.meta.url);
  private listen = { port: 0 };

  constructor(private readonly o: FlowIngestOptions) {}

  /** Starts the threads and binds the port; rejects (errno `code` kept) when the port cannot be bound. */
  async start(): Promise<{ address: string; port: number }> {
    try {
      return await this.startThreads();
    } catch (err) {
      await this.exit();
      throw err;
    }
  }

  private async startThreads(): Promise<{ address: string; port: number }> {
    const n = Math.max(1, this.o.workers);
    mkdirSync(this.o.journalRoot, { recursive: true, mode: 0o700 });
    for (let i = 0; i < n; i++)
      this.decoders.push(
        this.thread<Extract<FromDecoder, { t: "stats" }>>(i, new Worker(this.decoderUrl, { workerData: this.decoderData(i, this.o.templates) }), "decoder"),
      );
    await Promise.all(
      this.decoders.map(async (d) => {
        const j = (await this.next(d, "journals")) as Extract<FromDecoder, { t: "journals" }>;
        for (const p of j.list) {
          const ranges = await this.o.storedRanges(p.id, p.committed);
          d.worker.postMessage({ t: "resume", partition: p.partition, ranges } satisfies ToDecoder);
          if (p.next > p.committed) this.o.log.info("flows: journal replayed from its last commit", { journal: p.id, datagrams: p.next - p.committed });
        }
      }),
    );
    // A channel from every reader to every decoder.
    const toDecoder: MessagePort[][] = this.decoders.map(() => []);
    const readerUrl = compiledModuleUrl("./reader.js", import.meta.url);
    let port = this.o.listen.port;
    let address = "";
    for (let j = 0; j < n; j++) {
      const ends: MessagePort[] = [];
      for (let i = 0; i < n; i++) {
        const ch = new MessageChannel();
        ends.push(ch.port1);
        toDecoder[i].push(ch.port2);
      }
      const data: ReaderData = { ...this.o.listen, index: j, port, decoders: ends };
      const r = this.thread<Extract<FromReader, { t: "stats" }>>(j, new Worker(readerUrl, { workerData: data, transferList: ends }), "reader");
      this.readers.push(r);
      const bound = await new Promise<Extract<FromReader, { t: "bound" }>>((resolve, reject) => {
        r.worker.on("message", (m: FromReader) => {
          if (m.t === "bound") resolve(m);
          else if (m.t === "bind-error") reject(Object.assign(new Error(m.message), { code: m.code }));
        });
        r.worker.once("error", reject);
      });
      // The others bind the port the first got (port 0: any free one).
      port = bound.port;
      address = bound.address;
    }
    this.decoders.forEach((d, i) => d.worker.postMessage({ t: "ports", ports: toDecoder[i] } satisfies ToDecoder, toDecoder[i]));
    this.listen = { port };
    this.started = true;
    this.dropTimer = setInterval(() => this.reportDrops(), 60_000);
    this.dropTimer.unref();
    return { address, port };
  }

  private decoderData(index: number, templates: TemplateJson[]): DecoderData {
    const n = Math.max(1, this.o.workers);
    return {
      index,
      // Journals of a larger decoder count before are read too, so nothing they hold is left behind.
      dirs: journalDirs(this.o.journalRoot, "flows", index, n),
      journal: this.o.journal,
      maxKeys: Math.max(4096, Math.floor(this.o.maxKeys / n)),
      pendingMaxMs: this.o.pendingMaxMs,
      overrides: this.o.overrides,
      templates,
    };
  }

  private thread<S>(index: number, worker: Worker, kind: "decoder" | "reader", into?: Thread<S>): Thread<S> {
    const t: Thread<S> = into ?? { index, worker, up: true, stats: null, waiters: new Map() };
    Object.assign(t, { worker, up: true });
    worker.unref();
    worker.on("message", (m: { t: string }) => {
      const waiting = t.waiters.get(m.t);
      if (waiting) {
        t.waiters.delete(m.t);
        for (const w of waiting) w(m);
      }
      if (m.t === "stats") t.stats = m as S;
      else if (kind === "decoder") this.fromDecoder(m as FromDecoder);
      else if (m.t === "error") this.o.log.warn("flows: socket error", { error: (m as unknown as { message: string }).message });
    });
    worker.on("error", (err) => {
      t.cause = String(err.stack ?? err);
    });
    worker.on("exit", (code) => this.exited(t, worker, kind, code));
    return t;
  }

  /**
   * A thread ended. Unless the ingest is stopping (or not started), it died and is started again after a delay: a
   * reader (it holds nothing but its socket) on the same port (SO_REUSEPORT) with new channels to the decoders; a
   * decoder once its takes are stored, replaying its journal (restartDecoder). The readers skip a decoder while it is down.
   */
  private exited<S>(t: Thread<S>, w: Worker, kind: "decoder" | "reader", code: number): void {
    if (w !== t.worker) return;
    t.up = false;
    const failed = t.cause !== undefined;
    const cause = t.cause ?? `exit code ${code}`;
    delete t.cause;
    if (!this.started || this.closing) {
      if (failed) this.o.log.error(`flows: ingest ${kind} thread failed`, { thread: t.index, error: cause });
      return;
    }
    this.restartCounts[kind]++;
    const b = this.backoff.get(`${kind}-${t.index}`) ?? { ms: RESTART_FIRST_MS, since: 0 };
    if (Date.now() - b.since > RESTART_RESET_AFTER_MS) b.ms = RESTART_FIRST_MS;
    const delay = b.ms;
    b.ms = Math.min(b.ms * 2, RESTART_MOST_MS);
    this.backoff.set(`${kind}-${t.index}`, b);
    this.o.log.error(`flows: ingest ${kind} thread died, restarting it`, { thread: t.index, cause, restart_in_ms: delay });
    let p: Promise<void>;
    if (kind === "reader") {
      const r = t as unknown as Thread<Extract<FromReader, { t: "stats" }>>;
      this.deadReaders.received += r.stats?.received ?? 0;
      this.deadReaders.dropped += r.stats?.dropped ?? 0;
      r.stats = null;
      p = this.restartReader(r, delay);
    } else {
      const d = t as unknown as Thread<Extract<FromDecoder, { t: "stats" }>>;
      const c = d.stats?.counters;
      if (c) {
        const k = this.deadDecoders;
        k.datagrams += c.datagrams;
        k.malformed += c.malformed;
        k.dropped += c.dropped;
        k.records += c.records;
        k.droppedRecords += c.droppedRecords;
        k.lost += c.lost;
        this.deadRecords[d.index] = (this.deadRecords[d.index] ?? 0) + c.records;
      }
      d.stats = null;
      // The readers give it nothing more until it is back (the others take its share).
      for (const r of this.readers) if (r.up) r.worker.postMessage({ t: "decoder", index: d.index, port: null } satisfies ToReader);
      p = this.restartDecoder(d, delay);
    }
    p = p.finally(() => this.recovering.delete(p));
    this.recovering.add(p);
  }

  /**
   * A new decoder in place of `d` (which died). First the takes it handed over are stored (their journal ranges then in
   * PostgreSQL); then it opens its journals and replays them past what PostgreSQL holds, as after a crash of the
   * service (exactly once), with the templates the store holds, and every reader gets a channel to it.
   */
  private async restartDecoder(d: Thread<Extract<FromDecoder, { t: "stats" }>>, delay: number): Promise<void> {
    await this.sleeps.sleep(delay);
    if (this.closing) return;
    const pending = this.pendingTakes.get(d.index);
    if (pending?.size) await new Promise<void>((resolve) => this.takesStored.set(d.index, [...(this.takesStored.get(d.index) ?? []), resolve]));
    if (this.closing) return;
    const templates = this.o.currentTemplates ? await this.o.currentTemplates().catch(() => this.o.templates) : this.o.templates;
    if (this.closing) return;
    const worker = new Worker(this.decoderUrl, { workerData: this.decoderData(d.index, templates) });
    this.thread(d.index, worker, "decoder", d);
    try {
      const j = (await this.next(d, "journals")) as Extract<FromDecoder, { t: "journals" }>;
      for (const p of j.list) {
        const ranges = await this.o.storedRanges(p.id, p.committed);
        worker.postMessage({ t: "resume", partition: p.partition, ranges } satisfies ToDecoder);
        if (p.next > p.committed) this.o.log.info("flows: journal replayed from its last commit", { journal: p.id, datagrams: p.next - p.committed });
      }
    } catch (err) {
      // It died starting (its exit restarts it again), or PostgreSQL did not answer: ended, to start again after a delay.
      if (d.up && d.worker === worker) {
        d.cause = `restart failed: ${String(err)}`;
        await worker.terminate();
      }
      return;
    }
    if (this.feedOn) worker.postMessage({ t: "feed", on: true } satisfies ToDecoder);
    const ports: MessagePort[] = [];
    for (const r of this.readers) {
      if (!r.up) continue;
      const ch = new MessageChannel();
      r.worker.postMessage({ t: "decoder", index: d.index, port: ch.port1 } satisfies ToReader, [ch.port1]);
      ports.push(ch.port2);
    }
    worker.postMessage({ t: "ports", ports } satisfies ToDecoder, ports);
    const b = this.backoff.get(`decoder-${d.index}`);
    if (b) b.since = Date.now();
  }

  /** A new reader in place of `r` (which died): its socket on the port the others hold, a channel to every decoder. */
  private async restartReader(r: Thread<Extract<FromReader, { t: "stats" }>>, delay: number): Promise<void> {
    await this.sleeps.sleep(delay);
    if (this.closing) return;
    const ends: MessagePort[] = [];
    const others: MessagePort[] = [];
    for (let i = 0; i < this.decoders.length; i++) {
      const ch = new MessageChannel();
      ends.push(ch.port1);
      others.push(ch.port2);
    }
    const data: ReaderData = { ...this.o.listen, index: r.index, port: this.listen.port, decoders: ends };
    const worker = new Worker(this.readerUrl, { workerData: data, transferList: ends });
    this.thread(r.index, worker, "reader", r);
    // Its batches go to the decoders that run (one that died reads nothing more).
    this.decoders.forEach((d, i) => {
      if (d.up) d.worker.postMessage({ t: "ports", ports: [others[i]] } satisfies ToDecoder, [others[i]]);
      else {
        others[i].close();
        worker.postMessage({ t: "decoder", index: i, port: null } satisfies ToReader);
      }
    });
    if (this.feedOn) worker.postMessage({ t: "feed", on: true } satisfies ToReader);
    const bound = await new Promise<FromReader>((resolve) => {
      const on = (m: FromReader) => {
        if (m.t !== "bound" && m.t !== "bind-error") return;
        worker.off("message", on);
        resolve(m);
      };
      worker.on("message", on);
      worker.once("exit", () => resolve({ t: "bind-error", message: "exited" } as FromReader));
    });
    if (bound.t === "bind-error") this.o.log.warn("flows: a restarted ingest reader could not bind the port again", { thread: r.index, error: bound.message });
    else {
      const b = this.backoff.get(`reader-${r.index}`);
      if (b) b.since = Date.now();
    }
  }

  /** Threads restarted after they died, since start. */
  restarts(): { reader: number; decoder: number } {
    return { ...this.restartCounts };
  }

  /** The decoder threads running now (diagnostics, and tests that end one). */
  decoderThreads(): Worker[] {
    return this.decoders.map((d) => d.worker);
  }

  /** The reader threads running now (diagnostics, and tests that end one). */
  readerThreads(): Worker[] {
    return this.readers.map((r) => r.worker);
  }

  private stopRestarts(): void {
    this.closing = true;
    this.sleeps.wakeAll();
    for (const list of this.takesStored.values()) for (const w of list) w();
    this.takesStored.clear();
  }

  private fromDecoder(m: FromDecoder): void {
    switch (m.t) {
      case "lookup":
        return this.o.onLookup(m.exporter);
      case "feed":
        return this.o.onFeed(m.items);
      case "drop":
        if (this.dropsThisMinute === 0) this.o.log.warn("flows: journal full or too old: undecoded datagrams dropped", { datagrams: m.records, bound: m.why });
        this.dropsThisMinute += m.records;
        this.journalDrops += m.records;
        return;
      case "warn":
        return this.o.log.warn(m.message, m.fields);
    }
  }

  private reportDrops(): void {
    if (this.dropsThisMinute > 0) this.o.log.warn("flows: journal dropped undecoded datagrams in the last minute", { datagrams: this.dropsThisMinute });
    this.dropsThisMinute = 0;
  }

  /** Resolves with the thread's next message of type `t`. */
  private next<S>(t: Thread<S>, type: string): Promise<{ t: string }> {
    return new Promise((resolve, reject) => {
      const onExit = () => reject(new Error(`flows ingest thread ${t.index} exited`));
      t.worker.once("exit", onExit);
      const list = t.waiters.get(type) ?? [];
      list.push((m) => {
        t.worker.off("exit", onExit);
        resolve(m);
      });
      t.waiters.set(type, list);
    });
  }

  /**
   * Sends `m` to every decoder that runs and resolves with each one's `reply`, and which decoder it came from; a
   * decoder that dies first answers nothing (what it had not handed over is in its journal, for its replacement).
   */
  private async askAll(m: ToDecoder, reply: FromDecoder["t"]): Promise<{ index: number; m: FromDecoder }[]> {
    const live = this.decoders.filter((d) => d.up);
    const out = await Promise.all(
      live.map((d) => {
        const done = (this.next(d, reply) as Promise<FromDecoder>).catch(() => null);
        d.worker.postMessage(m);
        return done;
      }),
    );
    return out.flatMap((x, i) => (x ? [{ index: live[i].index, m: x }] : []));
  }

  /** Every decoder's aggregates since its last take, with the journal ranges they cover. */
  async take(): Promise<Taken[]> {
    const seq = ++this.seq;
    const out = await this.askAll({ t: "take", seq }, "taken");
    for (const { index } of out) {
      const set = this.pendingTakes.get(index) ?? new Set<number>();
      set.add(seq);
      this.pendingTakes.set(index, set);
    }
    return out.map((x) => x.m as Taken);
  }

  /** PostgreSQL holds the takes of these sequence numbers: their journal ranges are committed. */
  stored(seqs: readonly number[]): void {
    for (const seq of seqs) for (const d of this.decoders) if (d.up) d.worker.postMessage({ t: "stored", seq } satisfies ToDecoder);
    for (const [index, set] of this.pendingTakes) {
      for (const seq of seqs) set.delete(seq);
      if (set.size === 0) {
        for (const w of this.takesStored.get(index) ?? []) w();
        this.takesStored.delete(index);
      }
    }
  }

  /** Templates read from the store: to every decoder (their held data is decoded at once). */
  templates(list: TemplateJson[]): void {
    for (const d of this.decoders) d.worker.postMessage({ t: "templates", list } satisfies ToDecoder);
  }

  /** Whether the decoders copy every datagram and its records for flows.received (the forwarding tee). */
  setFeed(on: boolean): void {
    if (on === this.feedOn) return;
    this.feedOn = on;
    for (const d of this.decoders) d.worker.postMessage({ t: "feed", on } satisfies ToDecoder);
    // In order for the tee: each reader keeps to one decoder while it takes flows (reader.ts).
    for (const r of this.readers) r.worker.postMessage({ t: "feed", on });
  }

  /** Resolves once every decoder decoded what it had journaled (stats updated). */
  async drain(): Promise<void> {
    await this.askAll({ t: "drain" }, "drained");
  }

  totals(): IngestTotals {
    const k = this.deadDecoders;
    const t: IngestTotals = {
      received: this.deadReaders.received,
      dropped: this.journalDrops + this.deadReaders.dropped + k.dropped + k.lost,
      malformed: k.malformed,
      records: k.records,
      droppedRecords: k.droppedRecords,
      templates: 0,
    };
    for (const r of this.readers) {
      t.received += r.stats?.received ?? 0;
      t.dropped += r.stats?.dropped ?? 0;
    }
    for (const d of this.decoders) {
      const c: DecoderCounters | undefined = d.stats?.counters;
      if (!c) continue;
      t.dropped += c.dropped + c.lost;
      t.malformed += c.malformed;
      t.records += c.records;
      t.droppedRecords += c.droppedRecords;
      t.templates = Math.max(t.templates, c.templates);
    }
    return t;
  }

  /** Datagrams the journals' bounds dropped before they were stored. */
  journalDropped(): number {
    return this.journalDrops;
  }

  /** Records each decoder aggregated (its latest stats). */
  recordsPerDecoder(): number[] {
    return this.decoders.map((d) => (this.deadRecords[d.index] ?? 0) + (d.stats?.counters.records ?? 0));
  }

  journals(): JournalState[] {
    return this.decoders.flatMap((d) => d.stats?.journals ?? []);
  }

  /** Stops receiving: the readers close their sockets (what they held goes to the decoders first). */
  async stopReceiving(): Promise<void> {
    this.stopRestarts();
    await Promise.all(this.recovering);
    await Promise.all(
      this.readers.map(async (r) => {
        if (!r.up) return;
        const done = this.next(r, "closed").catch(() => undefined);
        r.worker.postMessage({ t: "close" });
        await done;
        await r.worker.terminate();
      }),
    );
    this.readers = [];
  }

  /** After the last take is stored: journals closed (checkpoints written), threads ended. */
  async exit(): Promise<void> {
    if (this.dropTimer) clearInterval(this.dropTimer);
    this.stopRestarts();
    await Promise.all(this.recovering);
    for (const r of this.readers) await r.worker.terminate();
    this.readers = [];
    await Promise.all(
      this.decoders.map(async (d) => {
        if (!d.up) return;
        const done = this.next(d, "closed").catch(() => undefined);
        d.worker.postMessage({ t: "close" } satisfies ToDecoder);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 2000)))]);
        clearTimeout(timer);
        await d.worker.terminate();
      }),
    );
    this.decoders = [];
  }
}
