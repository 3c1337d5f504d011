import { open, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { request } from "undici";
import { PollLoop, type LoopLogger, type Probes } from "./PollLoop.js";
import { SampleBuffer, type BufferedRecord } from "./SampleBuffer.js";
import { HostSampler } from "./telemetry.js";
import type { PollTarget } from "./types.js";
import { MAX_SAMPLES_PER_POST, emptyBatch, type PollBatch } from "./wire.js";

export interface RemotePollerOptions {
  pollerId: string;
  pool: string;
  /** Base URL of the core (http://host:port, with or without /api/v1). */
  coreUrl: string;
  /** API token of an admin account (ManageSystem). Never logged. */
  token: string;
  version: string;
  bufferDir: string;
  bufferMaxBytes: number;
  concurrency: number;
  /** How often the assignment is fetched again (s). */
  refreshSecs: number;
  probes: Probes;
  log: LoopLogger;
  requestTimeoutMs?: number;
  /** Passive listeners this poller has bound (reported at registration, recorded with a gap). */
  listeners?: string[];
  /** What its passive receivers lost so far (host counters, sent with each heartbeat's telemetry). */
  counters?: () => Record<string, number>;
}

interface Reply {
  status: number;
  body: unknown;
}

/** A POST body: the part of the buffer it carries and the records it acknowledges. */
interface Shipment {
  body: PollBatch;
  records: BufferedRecord[];
}

/** Bytes of buffer read per POST (the core's default body limit is 1 MiB). */
const POST_BYTES = 700 * 1024;
/** A live record sent later than this counts as backfill (alerts must not fire on old news). */
const STALE_MS = 20000;
/** Longest wait between attempts to reach a core that does not answer. */
const MAX_BACKOFF_MS = 5000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Talks to the core's /api/v1 routes with the poller's bearer token. */
export class CoreClient {
  private readonly base: string;

  constructor(
    coreUrl: string,
    private readonly token: string,
    private readonly timeoutMs: number,
  ) {
    const trimmed = coreUrl.replace(/\/+$/, "");
    this.base = trimmed.endsWith("/api/v1") ? trimmed : `${trimmed}/api/v1`;
  }

  async call(method: "GET" | "POST", path: string, body?: unknown): Promise<Reply> {
    const res = await request(`${this.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    const text = await res.body.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: res.statusCode, body: parsed };
  }
}

function errorCode(reply: Reply): string | undefined {
  return (reply.body as { error?: { code?: string } } | null)?.error?.code;
}

/**
 * A remote poller: registers with the core, polls its pool's assignment with the same PollLoop
 * as the embedded poller, heartbeats with its host telemetry, and ships every batch through an
 * on-disk buffer: appended (fsync'd) first, POSTed in order, acknowledged after a 2xx. While the
 * core is unreachable the buffer grows (bounded) and is backfilled, in order, when it returns.
 */
export class RemotePoller {
  private readonly client: CoreClient;
  private readonly buffer: SampleBuffer;
  private readonly sampler: HostSampler;
  private loop: PollLoop | null = null;
  private registered = false;
  private linkUp = false;
  /** A contact with the core failed and none succeeded since. */
  private cutOff = false;
  private heartbeatSecs = 15;
  private stopped = false;
  private tasks: Promise<void>[] = [];
  private wake: (() => void) | null = null;
  private targetCount = 0;
  private savedAssignment: string | null = null;
  private lastDownLog = 0;

  constructor(private readonly opts: RemotePollerOptions) {
    this.client = new CoreClient(opts.coreUrl, opts.token, opts.requestTimeoutMs ?? 10000);
    this.buffer = new SampleBuffer({ dir: opts.bufferDir, maxBytes: opts.bufferMaxBytes, log: opts.log });
    this.sampler = new HostSampler([
      { label: "/", path: "/" },
      { label: "buffer", path: opts.bufferDir },
    ]);
  }

  async start(): Promise<void> {
    await this.buffer.open();
    const left = this.buffer.stats();
    if (this.buffer.hasUnsent()) this.opts.log.info("buffered samples from an earlier run will be backfilled", { bytes: left.bytes, segments: left.segments });
    const cached = await this.loadAssignment();
    this.loop = new PollLoop({
      pollerId: this.opts.pollerId,
      pool: this.opts.pool,
      concurrency: this.opts.concurrency,
      probes: this.opts.probes,
      log: this.opts.log,
      // Marked backfill when appended while the core is known to be unreachable (records sent late count as backfill anyway).
      sink: { write: (batch) => this.buffer.append(batch, this.cutOff) },
    });
    if (cached) {
      // Restarted while the core is away: keep polling what it last assigned (into the buffer).
      this.targetCount = cached.length;
      this.loop.setTargets(cached);
      this.opts.log.info("polling the cached assignment until the core answers", { targets: cached.length });
    }
    this.loop.start();
    this.tasks = [this.control(), this.forward()];
  }

  /** Stops polling, gives the sender a moment to ship what is buffered, and closes the buffer (the rest waits on disk). */
  async stop(graceMs = 3000): Promise<void> {
    await this.loop?.stop(graceMs);
    const deadline = Date.now() + graceMs;
    while (this.linkUp && this.buffer.hasUnsent() && Date.now() < deadline) await sleep(50);
    this.stopped = true;
    this.wake?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(this.tasks), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    await this.buffer.close();
  }

  status(): { registered: boolean; linkUp: boolean; targets: number; buffer: ReturnType<SampleBuffer["stats"]> } {
    return { registered: this.registered, linkUp: this.linkUp, targets: this.targetCount, buffer: this.buffer.stats() };
  }

  private async nap(ms: number): Promise<void> {
    if (this.stopped) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private linkLost(why: string): void {
    // Said when the link drops, and again every minute while it stays down.
    if (this.linkUp || Date.now() - this.lastDownLog > 60_000) {
      this.opts.log.warn("core unreachable: buffering samples", { core: this.opts.coreUrl, why, buffered_bytes: this.buffer.stats().bytes });
      this.lastDownLog = Date.now();
    }
    this.linkUp = false;
    this.cutOff = true;
  }

  private linkRestored(): void {
    if (!this.linkUp) this.opts.log.info("core reachable", { core: this.opts.coreUrl });
    this.linkUp = true;
    this.cutOff = false;
  }

  /** Registration, heartbeats with telemetry, and assignment refreshes. */
  private async control(): Promise<void> {
    let backoff = 1000;
    let nextRefresh = 0;
    while (!this.stopped) {
      try {
        if (!this.registered) {
          await this.register();
          nextRefresh = 0;
        }
        if (this.registered && Date.now() >= nextRefresh) {
          await this.refreshAssignment();
          nextRefresh = Date.now() + this.opts.refreshSecs * 1000;
        }
        if (this.registered) await this.heartbeat();
        backoff = 1000;
        await this.nap(this.registered ? this.heartbeatSecs * 1000 : backoff);
      } catch (err) {
        this.linkLost((err as Error).message);
        await this.nap(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private async register(): Promise<void> {
    const reply = await this.client.call("POST", "/pollers/register", {
      poller_id: this.opts.pollerId,
      pool: this.opts.pool,
      version: this.opts.version,
      listeners: this.opts.listeners ?? [],
    });
    if (reply.status !== 200) return this.refused("register", reply);
    this.heartbeatSecs = Math.max(1, Number((reply.body as { heartbeat_secs?: number }).heartbeat_secs) || 15);
    this.registered = true;
    this.linkRestored();
    this.opts.log.info("registered with the core", { poller_id: this.opts.pollerId, pool: this.opts.pool, heartbeat_secs: this.heartbeatSecs });
  }

  private async refreshAssignment(): Promise<void> {
    const reply = await this.client.call("GET", `/pollers/${encodeURIComponent(this.opts.pollerId)}/assignment`);
    if (reply.status !== 200 || !Array.isArray(reply.body)) return this.refused("assignment", reply);
    const targets = reply.body as PollTarget[];
    if (targets.length !== this.targetCount) this.opts.log.info("assignment", { targets: targets.length });
    this.targetCount = targets.length;
    this.loop?.setTargets(targets);
    await this.saveAssignment(targets);
  }

  private get assignmentFile(): string {
    return join(this.opts.bufferDir, "assignment.json");
  }

  /**
   * The last assignment, kept beside the buffer (mode 0600: it holds the credentials' secrets, like
   * the core's own store) so a poller restarted while the core is unreachable still polls.
   */
  private async saveAssignment(targets: PollTarget[]): Promise<void> {
    const text = JSON.stringify(targets);
    if (text === this.savedAssignment) return;
    try {
      const tmp = `${this.assignmentFile}.tmp`;
      const fh = await open(tmp, "w", 0o600);
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.assignmentFile);
      this.savedAssignment = text;
    } catch (err) {
      this.opts.log.warn("assignment not cached on disk", { error: (err as Error).message });
    }
  }

  private async loadAssignment(): Promise<PollTarget[] | null> {
    try {
      const text = await readFile(this.assignmentFile, "utf8");
      const targets = JSON.parse(text) as unknown;
      if (!Array.isArray(targets)) return null;
      this.savedAssignment = text;
      return targets as PollTarget[];
    } catch {
      return null;
    }
  }

  private async heartbeat(): Promise<void> {
    const telemetry = { ...(await this.sampler.sample()), counters: this.opts.counters?.() ?? {} };
    const reply = await this.client.call("POST", `/pollers/${encodeURIComponent(this.opts.pollerId)}/heartbeat`, { telemetry });
    if (reply.status !== 200) return this.refused("heartbeat", reply);
    this.linkRestored();
  }

  /** A non-2xx answer: 404 means the core forgot this poller (register again); others are logged and retried later. */
  private refused(what: string, reply: Reply): void {
    if (reply.status === 404) {
      this.registered = false;
      return;
    }
    if (reply.status >= 500) throw new Error(`${what}: core answered ${reply.status}`);
    this.opts.log.error(`core refused ${what}`, { status: reply.status, code: errorCode(reply) });
    throw new Error(`${what} refused (${reply.status})`);
  }

  /** Ships the buffer in order; acknowledges a record only once the core stored all of it. */
  private async forward(): Promise<void> {
    let backoff = 500;
    while (!this.stopped) {
      if (!this.registered) {
        await sleep(200);
        continue;
      }
      let records: BufferedRecord[];
      try {
        records = await this.buffer.read(POST_BYTES);
      } catch (err) {
        this.opts.log.error("buffer read failed", { error: (err as Error).message });
        await sleep(1000);
        continue;
      }
      if (!records.length) {
        await this.buffer.waitForData(1000);
        continue;
      }
      try {
        if (await this.ship(records)) {
          backoff = 500;
        } else {
          await sleep(backoff);
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
      } catch (err) {
        this.linkLost((err as Error).message);
        await sleep(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /**
   * POSTs the records (grouped by their backfill flag, split to the core's size cap), acknowledging
   * each group after its 2xx; false when the core refused (the rest stays buffered).
   */
  private async ship(records: BufferedRecord[]): Promise<boolean> {
    for (const shipment of shipments(records, Date.now())) {
      const reply = await this.client.call("POST", `/pollers/${encodeURIComponent(this.opts.pollerId)}/samples`, shipment.body);
      if (reply.status >= 200 && reply.status < 300) {
        this.linkRestored();
        if (shipment.records.length) await this.buffer.acknowledge(shipment.records[shipment.records.length - 1].end);
        continue;
      }
      if (reply.status === 404) {
        this.registered = false;
        return false;
      }
      if (reply.status === 400 || reply.status === 413) {
        // The core will never take this batch: skipping it is the only way the rest gets through. Loud, counted.
        this.opts.log.error("core refused a sample batch; it is dropped", {
          status: reply.status,
          code: errorCode(reply),
          samples: shipment.body.samples.length,
        });
        if (shipment.records.length) await this.buffer.acknowledge(shipment.records[shipment.records.length - 1].end);
        continue;
      }
      if (reply.status >= 500) throw new Error(`samples: core answered ${reply.status}`);
      this.opts.log.error("core refused samples", { status: reply.status, code: errorCode(reply) });
      return false;
    }
    return true;
  }
}

/** Groups consecutive records with the same backfill flag into POST bodies within the core's caps. */
export function shipments(records: BufferedRecord[], now: number): Shipment[] {
  const out: Shipment[] = [];
  let cur: Shipment | null = null;
  for (const rec of records) {
    const backfill = rec.backfill || now - rec.appended_at > STALE_MS;
    const b = rec.batch;
    const size = Math.max(b.samples.length, b.interfaces.length);
    if (size > MAX_SAMPLES_PER_POST) {
      // One huge poll (a big chassis): its parts go in several POSTs; stores are idempotent, so a resend is harmless.
      if (cur) out.push(cur);
      cur = null;
      for (let i = 0; i < size; i += MAX_SAMPLES_PER_POST) {
        const part = emptyBatch(backfill);
        part.samples = b.samples.slice(i, i + MAX_SAMPLES_PER_POST);
        part.interfaces = b.interfaces.slice(i, i + MAX_SAMPLES_PER_POST);
        if (i === 0) {
          part.facts = b.facts;
          part.reachability = b.reachability;
        }
        out.push({ body: part, records: [] });
      }
      out[out.length - 1].records.push(rec);
      continue;
    }
    if (
      !cur ||
      cur.body.backfill !== backfill ||
      cur.body.samples.length + b.samples.length > MAX_SAMPLES_PER_POST ||
      cur.body.interfaces.length + b.interfaces.length > MAX_SAMPLES_PER_POST
    ) {
      if (cur) out.push(cur);
      cur = { body: emptyBatch(backfill), records: [] };
    }
    cur.body.samples.push(...b.samples);
    cur.body.facts.push(...b.facts);
    cur.body.interfaces.push(...b.interfaces);
    cur.body.reachability.push(...b.reachability);
    cur.records.push(rec);
  }
  if (cur) out.push(cur);
  return out;
}
