/**
 * One journal as an ingest worker consumes it (ADR 0015): opened from its directory, read from its committed offset
 * once the main thread says which ranges PostgreSQL already holds (`resume`), and committed in order as the ranges
 * handed over are stored. A worker holds its own journal and, after its count was lowered, the journals of the
 * workers that are gone (read to their end, never appended to).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Journal, type JournalOptions, type JournalReader } from "./Journal.js";

/** A range [first, end) handed over; `done` once PostgreSQL holds it. */
interface Handed {
  first: number;
  end: number;
  done: boolean;
}

/** What the main thread is told of each journal (its stats, and where it stands). */
export interface JournalPartState {
  partition: number;
  id: string;
  committed: number;
  checkpointed: number;
  next: number;
  bytes: number;
  dropped: number;
  skipped: number;
}

export class JournalPart {
  readonly journal: Journal;
  /** Null until resume(). */
  reader: JournalReader | null = null;
  private skip: [number, number][] = [];
  private skipAt = 0;
  private handed: Handed[] = [];
  /** Records handed over and not yet stored. */
  inFlight = 0;

  constructor(
    readonly index: number,
    options: JournalOptions,
  ) {
    this.journal = Journal.open(options);
  }

  /** Starts reading at the committed offset; records in `stored` (ranges [first, end), in order) are already in PostgreSQL. */
  resume(stored: [number, number][]): void {
    this.skip = stored;
    this.skipAt = 0;
    this.reader = this.journal.reader(this.journal.committed);
  }

  /**
   * Reads again from the committed offset what was handed over and not stored (its reader thread died with it): the
   * ranges already done (stored, or with nothing to store) are skipped as PostgreSQL's are at resume, so nothing is
   * handed over twice. Call once nothing handed over is on its way to being stored any more.
   */
  rewind(): void {
    if (!this.reader) return;
    const skip = this.skip.slice(this.skipAt);
    for (const h of this.handed) if (h.done) skip.push([h.first, h.end]);
    skip.sort((a, b) => a[0] - b[0]);
    this.reader.close();
    this.handed = [];
    this.inFlight = 0;
    this.resume(skip);
  }

  /** Whether PostgreSQL already holds the record at `offset` (offsets asked in ascending order). */
  isStored(offset: number): boolean {
    const s = this.skip;
    if (s.length === 0) return false;
    while (this.skipAt < s.length && s[this.skipAt][1] <= offset) this.skipAt++;
    return this.skipAt < s.length && s[this.skipAt][0] <= offset;
  }

  /** A range handed over for storing (`done`: nothing to store, it commits with what precedes it). */
  handOver(first: number, end: number, done = false): void {
    this.handed.push({ first, end, done });
    if (!done) this.inFlight += end - first;
    this.settle();
  }

  /** PostgreSQL holds the range handed over from `first`: the journal commits every stored range in order. */
  stored(first: number): void {
    const h = this.handed.find((x) => x.first === first && !x.done);
    if (h) {
      h.done = true;
      this.inFlight -= h.end - h.first;
    }
    this.settle();
  }

  private settle(): void {
    let committed = -1;
    while (this.handed.length && this.handed[0].done) committed = this.handed.shift()!.end;
    if (committed >= 0) this.journal.commit(committed);
  }

  state(): JournalPartState {
    const s = this.journal.stats();
    return {
      partition: this.index,
      id: s.id,
      committed: s.committed,
      checkpointed: this.journal.checkpointed,
      next: s.nextOffset,
      bytes: s.bytes,
      dropped: s.dropped,
      skipped: this.reader?.skipped ?? 0,
    };
  }

  /** The bound by age applied and the checkpoint written (call about once a second). */
  housekeeping(): void {
    this.journal.enforceAge();
    this.journal.checkpoint();
  }

  close(): void {
    this.reader?.close();
    this.journal.close();
  }
}

/**
 * The journal directories worker `index` of `workers` reads: its own (`<prefix>-<index>`) first, then those of a
 * larger worker count before (`<prefix>-<k>`, k ≥ workers, k % workers = index), so nothing they hold is left behind.
 */
export function journalDirs(root: string, prefix: string, index: number, workers: number): string[] {
  const re = new RegExp(`^${prefix}-(\\d+)$`);
  const existing = existsSync(root)
    ? readdirSync(root)
        .map((f) => re.exec(f))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => Number(m[1]))
    : [];
  const orphans = existing.filter((k) => k >= workers && k % workers === index).sort((a, b) => a - b);
  return [index, ...orphans].map((k) => join(root, `${prefix}-${k}`));
}
