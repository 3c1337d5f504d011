import { mkdir, open, readdir, readFile, rename, stat, truncate, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { LoopLogger } from "./PollLoop.js";
import type { PollBatch } from "./wire.js";

/** Where the sender stands: the byte offset in a segment up to which everything was acknowledged. */
export interface BufferPosition {
  segment: number;
  offset: number;
}

export interface BufferedRecord {
  batch: PollBatch;
  /** When it was appended (Unix ms). */
  appended_at: number;
  /** Appended while the core was unreachable, or left over from an earlier run of the process. */
  backfill: boolean;
  /** Position just after this record (acknowledge it to consume the record). */
  end: BufferPosition;
}

export interface SampleBufferOptions {
  dir: string;
  /** Bound on the segment files together; the oldest segments are dropped beyond it. */
  maxBytes: number;
  log: LoopLogger;
}

export interface BufferStats {
  bytes: number;
  segments: number;
  droppedRecords: number;
  ack: BufferPosition;
}

const SEGMENT = /^seg-(\d{16})\.log$/;
const segName = (n: number) => `seg-${String(n).padStart(16, "0")}.log`;
const READ_CHUNK = 4 * 1024 * 1024;

interface Line {
  t: number;
  b: boolean;
  d: PollBatch;
}

/**
 * The store-and-forward buffer of a remote poller: append-only segment files of JSON lines
 * (one poll batch each), fsync'd before append() resolves, read in order from the acknowledged
 * position, acknowledged by (segment, offset) only after the core answered 2xx. Beyond maxBytes
 * the oldest segments are dropped (and counted). A torn last line after a crash is cut off at
 * the next start; records found at start are sent as backfill.
 */
export class SampleBuffer {
  private ack: BufferPosition = { segment: 0, offset: 0 };
  private active = 0;
  private activeSize = 0;
  private fh: FileHandle | null = null;
  /** Segments that existed when the buffer was opened: their records are from an earlier run. */
  private firstLiveSegment = 0;
  private readonly sizes = new Map<number, number>();
  private pending: { line: string; resolve: () => void; reject: (e: Error) => void }[] = [];
  private flushing: Promise<void> | null = null;
  private droppedRecords = 0;
  private readonly segmentBytes: number;
  private waiters: (() => void)[] = [];

  constructor(private readonly opts: SampleBufferOptions) {
    this.segmentBytes = Math.min(16 * 1024 * 1024, Math.max(64 * 1024, Math.floor(opts.maxBytes / 8)));
  }

  async open(): Promise<void> {
    await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
    try {
      const saved = JSON.parse(await readFile(join(this.opts.dir, "ack.json"), "utf8")) as BufferPosition;
      if (Number.isSafeInteger(saved.segment) && Number.isSafeInteger(saved.offset)) this.ack = saved;
    } catch {
      // No acknowledgement yet: everything on disk is unsent.
    }
    const segments = (await readdir(this.opts.dir))
      .map((n) => SEGMENT.exec(n))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    for (const seg of segments) {
      if (seg < this.ack.segment) {
        await unlink(this.path(seg)).catch(() => undefined);
        continue;
      }
      this.sizes.set(seg, await this.repair(seg));
    }
    const last = segments.length ? segments[segments.length - 1] : 0;
    if (!this.sizes.has(this.ack.segment))
      this.ack = { segment: Math.max(this.ack.segment, this.sizes.size ? Math.min(...this.sizes.keys()) : last + 1), offset: 0 };
    // Never append to a segment written by an earlier run: a fresh one marks where live records start.
    this.active = Math.max(last, this.ack.segment - 1) + 1;
    this.firstLiveSegment = this.active;
    await this.openActive();
  }

  /** Appends a batch durably (written and fsync'd when the promise resolves). */
  append(batch: PollBatch, backfill: boolean): Promise<void> {
    const line = JSON.stringify({ t: Date.now(), b: backfill, d: batch } satisfies Line) + "\n";
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ line, resolve, reject });
      void this.flush();
    });
  }

  /** Records after the acknowledged position, in order: at least one if any, then up to maxBytes of lines. */
  async read(maxBytes: number): Promise<BufferedRecord[]> {
    if (this.flushing) await this.flushing;
    const out: BufferedRecord[] = [];
    let pos = { ...this.ack };
    let budget = maxBytes;
    while (budget > 0) {
      const size = this.sizes.get(pos.segment);
      if (size === undefined) break;
      if (pos.offset >= size) {
        if (pos.segment >= this.active) break;
        pos = { segment: this.nextSegment(pos.segment), offset: 0 };
        if (pos.segment < 0) break;
        continue;
      }
      const length = Math.min(size - pos.offset, Math.max(READ_CHUNK, budget));
      const buf = Buffer.alloc(length);
      const fh = await open(this.path(pos.segment), "r");
      try {
        await fh.read(buf, 0, length, pos.offset);
      } finally {
        await fh.close();
      }
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(10, start);
        if (nl < 0) break;
        const text = buf.subarray(start, nl).toString("utf8");
        const lineBytes = nl + 1 - start;
        if (out.length && lineBytes > budget) return out;
        start = nl + 1;
        budget -= lineBytes;
        const end = { segment: pos.segment, offset: pos.offset + start };
        try {
          const rec = JSON.parse(text) as Line;
          out.push({ batch: rec.d, appended_at: rec.t, backfill: rec.b || pos.segment < this.firstLiveSegment, end });
        } catch {
          // Unreadable line (cannot happen after repair): skip it rather than block the buffer.
          this.opts.log.warn("unreadable buffer line skipped", { segment: pos.segment, offset: end.offset - lineBytes });
        }
        if (budget <= 0) return out;
      }
      if (start === 0) break; // a line longer than the chunk: not expected (a batch is far smaller)
      pos = { segment: pos.segment, offset: pos.offset + start };
    }
    return out;
  }

  /** Consumes everything up to `pos` (after the core stored it); fully consumed segments are deleted. */
  async acknowledge(pos: BufferPosition): Promise<void> {
    if (pos.segment < this.ack.segment || (pos.segment === this.ack.segment && pos.offset <= this.ack.offset)) return;
    this.ack = { ...pos };
    const tmp = join(this.opts.dir, "ack.json.tmp");
    const fh = await open(tmp, "w", 0o600);
    try {
      await fh.writeFile(JSON.stringify(this.ack));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(this.opts.dir, "ack.json"));
    await this.syncDir();
    for (const seg of [...this.sizes.keys()]) {
      const consumed = seg < pos.segment || (seg === pos.segment && pos.offset >= this.sizes.get(seg)! && seg !== this.active);
      if (consumed) await this.removeSegment(seg);
    }
  }

  /** Resolves when something was appended (or after ms). */
  waitForData(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const waiters = this.waiters;
      function done() {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
    });
  }

  hasUnsent(): boolean {
    for (const [seg, size] of this.sizes) {
      if (seg > this.ack.segment && size > 0) return true;
      if (seg === this.ack.segment && size > this.ack.offset) return true;
    }
    return false;
  }

  stats(): BufferStats {
    return { bytes: [...this.sizes.values()].reduce((a, b) => a + b, 0), segments: this.sizes.size, droppedRecords: this.droppedRecords, ack: { ...this.ack } };
  }

  async close(): Promise<void> {
    if (this.flushing) await this.flushing;
    if (this.pending.length) await this.flush();
    await this.fh?.close();
    this.fh = null;
  }

  private path(seg: number): string {
    return join(this.opts.dir, segName(seg));
  }

  private nextSegment(seg: number): number {
    const later = [...this.sizes.keys()].filter((s) => s > seg);
    return later.length ? Math.min(...later) : -1;
  }

  /** Cuts a torn tail (a crash mid-write) back to the last complete, readable line; returns the size. */
  private async repair(seg: number): Promise<number> {
    const data = await readFile(this.path(seg));
    let good = data.lastIndexOf(10) + 1;
    // The last complete line may itself be damaged (a crash between write and fsync can leave zeros).
    while (good > 0) {
      const prev = data.lastIndexOf(10, good - 2) + 1;
      try {
        JSON.parse(data.subarray(prev, good - 1).toString("utf8"));
        break;
      } catch {
        good = prev;
      }
    }
    if (good !== data.length) {
      this.opts.log.warn("buffer segment had a torn tail; cut back to the last complete record", { segment: seg, bytes_cut: data.length - good });
      await truncate(this.path(seg), good);
    }
    return good;
  }

  private async openActive(): Promise<void> {
    this.fh = await open(this.path(this.active), "a", 0o600);
    this.activeSize = (await stat(this.path(this.active))).size;
    this.sizes.set(this.active, this.activeSize);
    await this.syncDir();
  }

  private flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.pending.length ? this.flush() : undefined));
    const run = async () => {
      while (this.pending.length) {
        const group = this.pending;
        this.pending = [];
        try {
          if (this.activeSize >= this.segmentBytes) await this.roll();
          const data = Buffer.from(group.map((g) => g.line).join(""), "utf8");
          await this.fh!.write(data);
          await this.fh!.datasync();
          this.activeSize += data.length;
          this.sizes.set(this.active, this.activeSize);
          await this.enforceBound();
          for (const g of group) g.resolve();
        } catch (err) {
          for (const g of group) g.reject(err as Error);
        }
      }
      for (const w of [...this.waiters]) w();
    };
    this.flushing = run().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async roll(): Promise<void> {
    await this.fh?.close();
    this.active += 1;
    await this.openActive();
  }

  /** Beyond the bound, the oldest segments go (never the one being written), counted as lost records. */
  private async enforceBound(): Promise<void> {
    let total = [...this.sizes.values()].reduce((a, b) => a + b, 0);
    while (total > this.opts.maxBytes) {
      const oldest = Math.min(...this.sizes.keys());
      if (oldest === this.active) {
        if (this.activeSize === 0) break;
        await this.roll();
        continue;
      }
      const data = await readFile(this.path(oldest));
      const from = oldest === this.ack.segment ? this.ack.offset : 0;
      let lines = 0;
      for (let i = data.indexOf(10, from); i >= 0; i = data.indexOf(10, i + 1)) lines++;
      total -= this.sizes.get(oldest)!;
      await this.removeSegment(oldest);
      if (lines) {
        this.droppedRecords += lines;
        this.opts.log.warn("store-and-forward buffer full: oldest samples dropped", { records: lines, max_bytes: this.opts.maxBytes });
      }
      if (this.ack.segment <= oldest) this.ack = { segment: this.nextSegment(oldest), offset: 0 };
    }
  }

  private async removeSegment(seg: number): Promise<void> {
    if (seg === this.active) return;
    this.sizes.delete(seg);
    await unlink(this.path(seg)).catch(() => undefined);
  }

  private async syncDir(): Promise<void> {
    try {
      const dh = await open(this.opts.dir, "r");
      try {
        await dh.sync();
      } finally {
        await dh.close();
      }
    } catch {
      // Some filesystems refuse fsync on a directory; the data files themselves are synced.
    }
  }
}
