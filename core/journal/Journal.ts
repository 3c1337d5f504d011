/**
 * The ingest journal: an append-only log on disk in front of the passive streams' processing (ARCHITECTURE.md §6, ADR
 * 0019). A receiver appends every message before anything else is done with it; the processing reads the journal
 * behind it and commits an offset only once PostgreSQL holds the rows. A burst above the store's rate, a store outage
 * or a restart then costs disk, not messages, up to the bounds (size and age), past which the oldest segments go and
 * what they held unprocessed is counted.
 *
 * One journal is one directory (one partition: one writer, one thread). Records get consecutive offsets from 0. They
 * live in segment files named by the offset of their first record (`00000000000000000000.log`), each with a sparse
 * index (`.idx`: relative offset and file position, one entry every INDEX_EVERY bytes) so a reader can start at any
 * offset without reading the segment from its start. A record is a 16-byte header (payload length, CRC-32 of the
 * timestamp and payload, the timestamp in epoch milliseconds as a float64) and the payload. `meta.json` holds the
 * journal's id (a UUID made when the directory is first used: a consumer keys what it committed by it, so a journal
 * deleted and made again never matches the offsets of the old one) and `checkpoint` the committed offset.
 *
 * Durability: every append is one write(2) of the whole batch, so what was appended survives the process being
 * killed (it is in the page cache) whatever the fsync policy; the policy decides what survives the machine losing
 * power (docs/operations.md): `always` fsyncs every append, `interval` every `fsyncIntervalMs`, `never` leaves it to
 * the kernel's writeback (30 s by default on Linux). A torn record at the tail (a crash inside a write) fails its
 * CRC and is cut off when the journal is opened again.
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";

export type FsyncPolicy = "always" | "interval" | "never";

export interface JournalOptions {
  dir: string;
  /** A segment is closed and a new one begun past this size. Default 64 MiB (at most a quarter of maxBytes). */
  segmentBytes?: number;
  /** The most the segments may hold together; past it the oldest segment goes, processed or not. Default 2 GiB. */
  maxBytes?: number;
  /** A closed segment whose newest record is older than this goes, processed or not. Default 12 h. */
  maxAgeMs?: number;
  fsync?: FsyncPolicy;
  /** With fsync `interval`: how often written data is flushed to the disk. Default 1000 ms. */
  fsyncIntervalMs?: number;
  /** Called (on the writer's thread) with the number of unprocessed records a bound made the journal drop. */
  onDrop?(records: number, why: "size" | "age"): void;
}

/** One record read back. `payload` is a view into the reader's buffer: copy it to keep it past the next read. */
export interface JournalRecord {
  offset: number;
  ts: number;
  payload: Buffer;
}

export interface JournalStats {
  id: string;
  /** Offset of the oldest record still held. */
  firstOffset: number;
  /** Offset the next appended record gets. */
  nextOffset: number;
  /** Every record below this offset is processed. */
  committed: number;
  segments: number;
  bytes: number;
  /** Records the bounds dropped since the journal was opened (this process) before they were read or committed. */
  dropped: number;
}

export const RECORD_HEADER_BYTES = 16;
const INDEX_EVERY = 256 * 1024;
const INDEX_ENTRY_BYTES = 8;
const MIB = 1024 * 1024;
const DEFAULTS = { segmentBytes: 64 * MIB, maxBytes: 2048 * MIB, maxAgeMs: 12 * 3_600_000, fsyncIntervalMs: 1000 };

interface Segment {
  base: number;
  /** Records in the segment (the last one's grows as it is appended to). */
  count: number;
  bytes: number;
  /** Newest record's timestamp (closed segments found on open: the file's modification time). */
  lastTs: number;
  /** Sparse index: relative offsets and file positions, ascending. */
  index: number[];
}

const segmentName = (base: number) => String(base).padStart(20, "0");
const logPath = (dir: string, base: number) => join(dir, `${segmentName(base)}.log`);
const idxPath = (dir: string, base: number) => join(dir, `${segmentName(base)}.idx`);

function recordCrc(buf: Uint8Array, at: number, len: number): number {
  // The timestamp (8 bytes at at+8) and the payload that follows it, in one run.
  return crc32(buf.subarray(at + 8, at + RECORD_HEADER_BYTES + len));
}

/** Writes the header of a record whose payload already sits at `at + 16` in `buf`. */
function writeHeader(view: DataView, buf: Uint8Array, at: number, len: number, ts: number): void {
  view.setUint32(at, len);
  view.setFloat64(at + 8, ts);
  view.setUint32(at + 4, recordCrc(buf, at, len));
}

export class Journal {
  readonly id: string;
  readonly dir: string;
  private readonly o: Required<Omit<JournalOptions, "onDrop">> & Pick<JournalOptions, "onDrop">;
  private segments: Segment[] = [];
  private fd = -1;
  private idxFd = -1;
  private next = 0;
  private committedOffset = 0;
  private checkpointWritten = -1;
  /** Records below this were read by the consumer (handed on, to be committed): a bound dropping them loses nothing. */
  private readMark = 0;
  private dropped = 0;
  private dirty = false;
  private lastIndexedAt = -INDEX_EVERY;
  private timer: NodeJS.Timeout | null = null;
  private scratch = Buffer.allocUnsafe(1 << 20);
  private closed = false;

  private constructor(o: JournalOptions, id: string) {
    const maxBytes = o.maxBytes ?? DEFAULTS.maxBytes;
    this.o = {
      dir: o.dir,
      segmentBytes: Math.max(64 * 1024, Math.min(o.segmentBytes ?? DEFAULTS.segmentBytes, Math.floor(maxBytes / 4))),
      maxBytes,
      maxAgeMs: o.maxAgeMs ?? DEFAULTS.maxAgeMs,
      fsync: o.fsync ?? "interval",
      fsyncIntervalMs: o.fsyncIntervalMs ?? DEFAULTS.fsyncIntervalMs,
      onDrop: o.onDrop,
    };
    this.dir = o.dir;
    this.id = id;
  }

  /** Opens (or makes) the journal in `o.dir`: recovers its segments, cuts a torn tail, and readies the last segment for appends. */
  static open(o: JournalOptions): Journal {
    mkdirSync(o.dir, { recursive: true, mode: 0o700 });
    const j = new Journal(o, Journal.readOrMakeId(o.dir));
    j.recover();
    if (j.o.fsync === "interval") {
      j.timer = setInterval(() => j.sync(), j.o.fsyncIntervalMs);
      j.timer.unref();
    }
    return j;
  }

  private static readOrMakeId(dir: string): string {
    const path = join(dir, "meta.json");
    try {
      const id = (JSON.parse(readFileSync(path, "utf8")) as { id?: unknown }).id;
      if (typeof id === "string" && id.length > 0) return id;
    } catch {
      // new journal
    }
    const id = randomUUID();
    writeFileSync(`${path}.tmp`, JSON.stringify({ id, created: new Date().toISOString(), format: 1 }) + "\n", { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
    return id;
  }

  private recover(): void {
    const bases = readdirSync(this.dir)
      .filter((f) => /^\d{20}\.log$/.test(f))
      .map((f) => Number(f.slice(0, 20)))
      .sort((a, b) => a - b);
    try {
      this.committedOffset = Number(readFileSync(join(this.dir, "checkpoint"), "utf8").trim()) || 0;
    } catch {
      this.committedOffset = 0;
    }
    this.checkpointWritten = this.committedOffset;
    for (let i = 0; i < bases.length; i++) {
      const base = bases[i];
      const st = statSync(logPath(this.dir, base));
      const seg: Segment = { base, count: 0, bytes: st.size, lastTs: st.mtimeMs, index: this.readIndex(base) };
      if (i < bases.length - 1) seg.count = bases[i + 1] - base;
      this.segments.push(seg);
    }
    if (this.segments.length === 0) {
      // A journal whose segments all went (processed, or dropped by a bound) starts again at its checkpoint.
      this.startSegment(this.committedOffset);
      return;
    }
    const last = this.segments[this.segments.length - 1];
    this.scanTail(last);
    this.next = last.base + last.count;
    this.fd = openSync(logPath(this.dir, last.base), "r+");
    this.idxFd = openSync(idxPath(this.dir, last.base), "a");
    this.lastIndexedAt = last.index.length ? last.index[last.index.length - 1] : -INDEX_EVERY;
    if (this.committedOffset > this.next) this.committedOffset = this.next;
  }

  private readIndex(base: number): number[] {
    let raw: Buffer;
    try {
      raw = readFileSync(idxPath(this.dir, base));
    } catch {
      return [];
    }
    const out: number[] = [];
    for (let at = 0; at + INDEX_ENTRY_BYTES <= raw.length; at += INDEX_ENTRY_BYTES) out.push(raw.readUInt32BE(at), raw.readUInt32BE(at + 4));
    return out;
  }

  /** Counts the last segment's records, cutting the file (and its index) at the first record that is short or fails its CRC. */
  private scanTail(seg: Segment): void {
    const path = logPath(this.dir, seg.base);
    const fd = openSync(path, "r+");
    try {
      let pos = 0;
      let count = 0;
      let lastTs = seg.lastTs;
      const size = fstatSync(fd).size;
      let buf = this.scratch;
      let bufStart = 0;
      let bufLen = 0;
      for (;;) {
        if (pos + RECORD_HEADER_BYTES > bufStart + bufLen) {
          bufStart = pos;
          bufLen = readSync(fd, buf, 0, buf.length, pos);
          if (bufLen < RECORD_HEADER_BYTES) break;
        }
        const at = pos - bufStart;
        const len = buf.readUInt32BE(at);
        if (pos + RECORD_HEADER_BYTES + len > size) break;
        if (at + RECORD_HEADER_BYTES + len > bufLen) {
          if (RECORD_HEADER_BYTES + len > buf.length) buf = this.scratch = Buffer.allocUnsafe(RECORD_HEADER_BYTES + len);
          bufStart = pos;
          bufLen = readSync(fd, buf, 0, buf.length, pos);
          continue;
        }
        if (recordCrc(buf, at, len) !== buf.readUInt32BE(at + 4)) break;
        lastTs = buf.readDoubleBE(at + 8);
        pos += RECORD_HEADER_BYTES + len;
        count++;
      }
      if (pos < size) ftruncateSync(fd, pos);
      seg.count = count;
      seg.bytes = pos;
      seg.lastTs = lastTs;
      // Index entries past the cut (or past a record that is gone) would send a reader to the wrong place.
      const kept: number[] = [];
      for (let i = 0; i < seg.index.length; i += 2) if (seg.index[i] < count && seg.index[i + 1] < pos) kept.push(seg.index[i], seg.index[i + 1]);
      if (kept.length !== seg.index.length) {
        seg.index = kept;
        writeFileSync(idxPath(this.dir, seg.base), this.indexBytes(kept));
      }
    } finally {
      closeSync(fd);
    }
  }

  private indexBytes(entries: readonly number[]): Buffer {
    const b = Buffer.allocUnsafe(entries.length * 4);
    for (let i = 0; i < entries.length; i++) b.writeUInt32BE(entries[i], i * 4);
    return b;
  }

  private startSegment(base: number): void {
    if (this.fd >= 0) closeSync(this.fd);
    if (this.idxFd >= 0) closeSync(this.idxFd);
    this.fd = openSync(logPath(this.dir, base), "w+", 0o600);
    this.idxFd = openSync(idxPath(this.dir, base), "w", 0o600);
    this.segments.push({ base, count: 0, bytes: 0, lastTs: Date.now(), index: [] });
    this.next = base;
    this.lastIndexedAt = -INDEX_EVERY;
  }

  /**
   * Appends records in one write: `payloads[i]` with timestamp `ts[i]` (or one timestamp for all). Returns the offset of
   * the first one (the others follow in order). Applies the size bound (which may drop the oldest segment).
   */
  append(payloads: readonly Uint8Array[], ts: number | readonly number[]): number {
    if (this.closed) throw new Error("journal is closed");
    const first = this.next;
    if (payloads.length === 0) return first;
    let total = 0;
    for (const p of payloads) total += RECORD_HEADER_BYTES + p.length;
    let seg = this.segments[this.segments.length - 1];
    if (seg.bytes > 0 && seg.bytes + total > this.o.segmentBytes) {
      this.rollSegment();
      seg = this.segments[this.segments.length - 1];
    }
    if (total > this.scratch.length) this.scratch = Buffer.allocUnsafe(Math.max(total, this.scratch.length * 2));
    const buf = this.scratch;
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    let at = 0;
    let lastTs = 0;
    for (let i = 0; i < payloads.length; i++) {
      const p = payloads[i];
      const t = typeof ts === "number" ? ts : ts[i];
      buf.set(p, at + RECORD_HEADER_BYTES);
      writeHeader(view, buf, at, p.length, t);
      at += RECORD_HEADER_BYTES + p.length;
      lastTs = t;
    }
    this.writeRecords(seg, buf, total, payloads.length, lastTs);
    return first;
  }

  /**
   * Appends records already laid out as the journal stores them except for their headers' length, CRC and timestamp:
   * `buf` holds `count` records, each a 16-byte header (only its first 4 bytes, the payload length, filled) and its
   * payload; this fills in the timestamps (`ts`) and CRCs and writes them in one go. The zero-copy path of a receiver
   * that builds its batch in place. Returns the offset of the first record.
   */
  appendFramed(buf: Uint8Array, byteLength: number, count: number, ts: number): number {
    if (this.closed) throw new Error("journal is closed");
    const first = this.next;
    if (count === 0) return first;
    let seg = this.segments[this.segments.length - 1];
    if (seg.bytes > 0 && seg.bytes + byteLength > this.o.segmentBytes) {
      this.rollSegment();
      seg = this.segments[this.segments.length - 1];
    }
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    for (let at = 0, i = 0; i < count; i++) {
      const len = view.getUint32(at);
      writeHeader(view, buf, at, len, ts);
      at += RECORD_HEADER_BYTES + len;
    }
    this.writeRecords(seg, buf, byteLength, count, ts);
    return first;
  }

  private writeRecords(seg: Segment, buf: Uint8Array, byteLength: number, count: number, lastTs: number): void {
    const position = seg.bytes;
    let written = 0;
    while (written < byteLength) written += writeSync(this.fd, buf, written, byteLength - written, position + written);
    if (position - this.lastIndexedAt >= INDEX_EVERY) {
      const entry = Buffer.allocUnsafe(INDEX_ENTRY_BYTES);
      entry.writeUInt32BE(seg.count, 0);
      entry.writeUInt32BE(position, 4);
      writeSync(this.idxFd, entry);
      seg.index.push(seg.count, position);
      this.lastIndexedAt = position;
    }
    seg.bytes += byteLength;
    seg.count += count;
    seg.lastTs = lastTs;
    this.next += count;
    this.dirty = true;
    if (this.o.fsync === "always") this.sync();
    this.enforceSize();
  }

  private rollSegment(): void {
    // The closed segment's data reaches the disk before its successor holds any: a power loss never leaves a hole.
    if (this.o.fsync !== "never") this.sync();
    this.startSegment(this.next);
  }

  /** Flushes appended data to the disk (fdatasync) when any was written since the last flush. */
  sync(): void {
    if (!this.dirty || this.fd < 0) return;
    this.dirty = false;
    fdatasyncSync(this.fd);
  }

  /** Marks every record below `offset` as processed (the stored rows are in PostgreSQL); segments all below it go. */
  commit(offset: number): void {
    if (offset <= this.committedOffset) return;
    this.committedOffset = Math.min(offset, this.next);
    while (this.segments.length > 1) {
      const s = this.segments[0];
      if (s.base + s.count > this.committedOffset) break;
      this.removeOldest();
    }
  }

  /**
   * Writes the committed offset to `checkpoint` (when it moved): called by the owner now and then, and on close. Unless
   * the fsync policy is `never` the file reaches the disk before it replaces the last one, so a consumer may forget
   * what it kept about the records below it.
   */
  checkpoint(): void {
    if (this.checkpointWritten === this.committedOffset) return;
    const path = join(this.dir, "checkpoint");
    const fd = openSync(`${path}.tmp`, "w", 0o600);
    try {
      writeSync(fd, `${this.committedOffset}\n`);
      if (this.o.fsync !== "never") fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(`${path}.tmp`, path);
    this.checkpointWritten = this.committedOffset;
  }

  /** The committed offset last written to `checkpoint` (what survives a crash of the process). */
  get checkpointed(): number {
    return this.checkpointWritten;
  }

  /** Applies the age bound: closed segments whose newest record is older than maxAgeMs go. Called by the owner periodically. */
  enforceAge(now = Date.now()): void {
    while (this.segments.length > 1 && now - this.segments[0].lastTs > this.o.maxAgeMs) this.dropOldest("age");
  }

  private enforceSize(): void {
    let bytes = 0;
    for (const s of this.segments) bytes += s.bytes;
    while (this.segments.length > 1 && bytes > this.o.maxBytes) {
      bytes -= this.segments[0].bytes;
      this.dropOldest("size");
    }
  }

  private dropOldest(why: "size" | "age"): void {
    const s = this.segments[0];
    const end = s.base + s.count;
    const lost = Math.max(0, end - Math.max(s.base, this.committedOffset, this.readMark));
    this.removeOldest();
    if (this.committedOffset < end) this.committedOffset = end;
    if (lost > 0) {
      this.dropped += lost;
      this.o.onDrop?.(lost, why);
    }
  }

  private removeOldest(): void {
    const s = this.segments.shift()!;
    for (const p of [logPath(this.dir, s.base), idxPath(this.dir, s.base)]) {
      try {
        unlinkSync(p);
      } catch {
        // already gone
      }
    }
  }

  get nextOffset(): number {
    return this.next;
  }

  get committed(): number {
    return this.committedOffset;
  }

  /** Offset of the oldest record still held (a reader behind it lost what lies between: the bounds dropped it). */
  get firstOffset(): number {
    return this.segments[0]?.base ?? this.next;
  }

  stats(): JournalStats {
    let bytes = 0;
    for (const s of this.segments) bytes += s.bytes;
    return {
      id: this.id,
      firstOffset: this.firstOffset,
      nextOffset: this.next,
      committed: this.committedOffset,
      segments: this.segments.length,
      bytes,
      dropped: this.dropped,
    };
  }

  /** @internal A reader tells how far it read: what lies below was handed on, and a bound that drops it loses nothing unread. */
  noteRead(offset: number): void {
    if (offset > this.readMark) this.readMark = offset;
  }

  /** A reader that starts at `offset` (moved up to the oldest record held when that one is gone). */
  reader(offset = this.committedOffset): JournalReader {
    return new JournalReader(this, offset);
  }

  /** @internal The segment holding `offset`, with where a reader may start scanning for it. */
  locate(offset: number): { base: number; count: number; startOffset: number; position: number; bytes: number } | null {
    const segs = this.segments;
    let lo = 0;
    let hi = segs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (segs[mid].base <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return null;
    const s = segs[found];
    if (offset >= s.base + s.count && found < segs.length - 1) return null;
    let startRel = 0;
    let position = 0;
    const rel = offset - s.base;
    for (let i = 0; i < s.index.length && s.index[i] <= rel; i += 2) {
      startRel = s.index[i];
      position = s.index[i + 1];
    }
    return { base: s.base, count: s.count, startOffset: s.base + startRel, position, bytes: s.bytes };
  }

  /** The newest segment's first offset and size in bytes. */
  tail(): { base: number; bytes: number } {
    const s = this.segments[this.segments.length - 1];
    return { base: s.base, bytes: s.bytes };
  }

  /** Flushes, writes the checkpoint and closes the files. */
  close(): void {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.o.fsync !== "never") this.sync();
    this.checkpoint();
    closeSync(this.fd);
    closeSync(this.idxFd);
    this.fd = this.idxFd = -1;
    this.closed = true;
  }
}

/**
 * Reads a journal in order from an offset, on the journal's own thread. It reads ahead in chunks of about a MiB from
 * the segment files (the page cache, as a rule), and follows the writer: at the end of what was appended, next()
 * returns nothing until more is. When the bounds dropped the segment it was in, it goes on at the oldest record held
 * (`skipped` counts what it jumped over).
 */
export class JournalReader {
  private offset: number;
  private segBase = -1;
  private fd = -1;
  /** File position of the next record. */
  private position = 0;
  /** The chunk last read: its bytes from file position chunkStart, chunkLen of them valid. */
  private chunk: Buffer = Buffer.alloc(0);
  private chunkStart = 0;
  private chunkLen = 0;
  /** Records jumped over because the bounds dropped them before they were read. */
  skipped = 0;

  constructor(
    private readonly journal: Journal,
    from: number,
  ) {
    this.offset = from;
  }

  /** Offset of the next record next() returns. */
  get nextOffset(): number {
    return this.offset;
  }

  /**
   * Moves past records the caller just appended and processes from its own copy: `count` records of `bytes` in all,
   * the first at offset `first`. Only when the reader was caught up (at `first`); answers false otherwise (read them).
   * Spares a writer that keeps up the read back of what it wrote.
   */
  skipAppended(first: number, count: number, bytes: number): boolean {
    if (this.offset !== first || count === 0) return false;
    const tail = this.journal.tail();
    if (tail.base === this.segBase && this.position + bytes === tail.bytes) this.position += bytes;
    else this.closeSegment(); // the batch began a segment (or the reader had none open): found again at the next read
    this.offset += count;
    this.journal.noteRead(this.offset);
    return true;
  }

  /** Up to `max` records (fewer at the end of what is appended); [] when the reader is caught up. */
  next(max: number): JournalRecord[] {
    const out: JournalRecord[] = [];
    if (this.offset < this.journal.firstOffset) {
      this.skipped += this.journal.firstOffset - this.offset;
      this.offset = this.journal.firstOffset;
      this.closeSegment();
    }
    if (this.offset >= this.journal.nextOffset) return out;
    const where = this.journal.locate(this.offset);
    if (!where) return out;
    if (where.base !== this.segBase) this.openAt(where);
    while (out.length < max && this.position < where.bytes) {
      let at = this.position - this.chunkStart;
      if (at < 0 || at + RECORD_HEADER_BYTES > this.chunkLen || at + RECORD_HEADER_BYTES + this.chunk.readUInt32BE(at) > this.chunkLen) {
        this.readChunk(where.bytes);
        at = 0;
        if (RECORD_HEADER_BYTES > this.chunkLen) break;
      }
      const len = this.chunk.readUInt32BE(at);
      if (at + RECORD_HEADER_BYTES + len > this.chunkLen) break;
      out.push({
        offset: this.offset,
        ts: this.chunk.readDoubleBE(at + 8),
        payload: this.chunk.subarray(at + RECORD_HEADER_BYTES, at + RECORD_HEADER_BYTES + len),
      });
      this.position += RECORD_HEADER_BYTES + len;
      this.offset++;
    }
    this.journal.noteRead(this.offset);
    return out;
  }

  /** Opens the segment and scans from its index entry to the reader's offset. */
  private openAt(where: NonNullable<ReturnType<Journal["locate"]>>): void {
    this.closeSegment();
    this.fd = openSync(logPath(this.journal.dir, where.base), "r");
    this.segBase = where.base;
    this.position = where.position;
    this.chunkLen = 0;
    for (let at = where.startOffset; at < this.offset; at++) {
      let rel = this.position - this.chunkStart;
      if (rel < 0 || rel + RECORD_HEADER_BYTES > this.chunkLen) {
        this.readChunk(where.bytes);
        rel = 0;
        if (RECORD_HEADER_BYTES > this.chunkLen) return;
      }
      this.position += RECORD_HEADER_BYTES + this.chunk.readUInt32BE(rel);
    }
  }

  /**
   * Reads the next chunk from the position, in a new buffer (the payload views handed out from the last one stay
   * valid while their holders keep them), at least one whole record long.
   */
  private readChunk(end: number): void {
    const want = Math.min(1 << 20, end - this.position);
    let buf = Buffer.allocUnsafe(Math.max(want, RECORD_HEADER_BYTES));
    let got = want > 0 ? readSync(this.fd, buf, 0, want, this.position) : 0;
    if (got >= RECORD_HEADER_BYTES) {
      const need = RECORD_HEADER_BYTES + buf.readUInt32BE(0);
      if (need > got && need <= end - this.position) {
        buf = Buffer.allocUnsafe(need);
        got = readSync(this.fd, buf, 0, need, this.position);
      }
    }
    this.chunk = buf;
    this.chunkStart = this.position;
    this.chunkLen = got;
  }

  private closeSegment(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    this.segBase = -1;
    this.chunkLen = 0;
  }

  close(): void {
    this.closeSegment();
  }
}
