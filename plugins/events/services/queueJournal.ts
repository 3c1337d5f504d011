import { availableParallelism } from "node:os";
import { join } from "node:path";
import { JournalPart, workerJournalOptions } from "../../../core/index.js";
import type { EventsContext } from "../context.js";
import type { EventRepository, EventRow, JournalRange } from "../repositories/EventRepository.js";
import { eventCopyLine } from "../repositories/eventCopy.js";

/** A batch of COPY lines (an ingest worker's, or read back from the queue journal) with its journal range, acknowledged once stored. */
export interface TextBatch {
  text: string;
  rows: number;
  minMs: number;
  maxMs: number;
  range: JournalRange;
  ack: () => void;
  live: EventRow[];
}

/** Journal records the pump reads at a time. */
const QUEUE_READ_CHUNK = 1000;

/**
 * The journal of what the receivers on the main thread take (traps, HTTP ingest, forwarded events): each accepted
 * event's COPY line is appended (once per turn, or at once by append()) before it is queued for the store, and read
 * back in batches committed with their journal range, as the ingest workers' are. The pipeline owns it and drives it.
 */
export class QueueJournal {
  private payloads: Buffer[] = [];
  private times: number[] = [];
  private rows: EventRow[] = [];
  /** Rows appended and not yet read back, by journal offset, for the live channel (at most queueSize). */
  private live = new Map<number, EventRow>();
  private appendScheduled = false;
  private lost = 0;

  private constructor(
    private readonly part: JournalPart,
    private readonly log: EventsContext["log"],
    /** Called at the end of a turn in which rows were added (the pipeline appends them and pumps). */
    private readonly onTurnEnd: () => void,
  ) {}

  /**
   * Opens the queue journal and resumes it past what PostgreSQL holds (what it holds unstored is stored once running);
   * null (logged) when it cannot be opened: the events then wait in memory.
   */
  static async open(ctx: EventsContext, events: EventRepository, onTurnEnd: () => void): Promise<QueueJournal | null> {
    const cfg = ctx.config.ingest;
    try {
      const part = new JournalPart(0, {
        ...workerJournalOptions(cfg.journal, cfg.workers ?? availableParallelism()),
        dir: join(ctx.kernelConfig.dataDir, "journal", "events-queue"),
        onDrop: (records) => ctx.log.warn("events: queue journal full or too old: unstored events dropped", { events: records }),
      });
      part.resume(await events.storedRanges(part.journal.id, part.journal.committed));
      const backlog = part.journal.nextOffset - part.journal.committed;
      if (backlog > 0) ctx.log.info("events: queue journal replayed from its last commit", { journal: part.journal.id, events: backlog });
      return new QueueJournal(part, ctx.log, onTurnEnd);
    } catch (err) {
      ctx.log.error("events: queue journal not opened: traps and ingested events wait in memory", { error: err });
      return null;
    }
  }

  /** Whether its records can be read back (pump() reads nothing otherwise). */
  get readable(): boolean {
    return this.part.reader !== null;
  }

  /**
   * Adds a row's COPY line for the next append (at the end of this turn). The row is kept for the live channel when
   * `live` and fewer than `liveMax` are kept; false when it was left out.
   */
  add(row: EventRow, live: boolean, liveMax: number): boolean {
    const offset = this.part.journal.nextOffset + this.payloads.length;
    this.payloads.push(Buffer.from(eventCopyLine(row), "utf8"));
    this.times.push(row.received_at_ms);
    this.rows.push(row);
    let kept = false;
    if (live && this.live.size < liveMax) {
      this.live.set(offset, row);
      kept = true;
    }
    if (!this.appendScheduled) {
      this.appendScheduled = true;
      setImmediate(this.onTurnEnd);
    }
    return kept;
  }

  /**
   * Appends what was added since the last append. Null when nothing was waiting; else the rows the journal could not
   * take (a full disk: they are to wait in memory instead), empty when it took them all.
   */
  append(): EventRow[] | null {
    this.appendScheduled = false;
    if (this.payloads.length === 0) return null;
    const part = this.part;
    const payloads = this.payloads;
    const times = this.times;
    const rows = this.rows;
    this.payloads = [];
    this.times = [];
    this.rows = [];
    try {
      part.journal.append(payloads, times);
      return [];
    } catch (err) {
      this.lost += payloads.length;
      this.log.warn("events: queue journal append failed: events kept in memory", { error: err, events: payloads.length });
      for (let i = 0; i < rows.length; i++) this.live.delete(part.journal.nextOffset + i);
      return rows;
    }
  }

  /**
   * Reads the journal into batches while fewer than `inFlightMax` of its events are in flight (`all`: to the end), at
   * most `batchSize` records a batch; `onStored` is called after a batch's ack().
   */
  pump(all: boolean, inFlightMax: number, batchSize: number, onStored: () => void): TextBatch[] {
    const part = this.part;
    const reader = part.reader;
    const batches: TextBatch[] = [];
    if (!reader) return batches;
    while (all || part.inFlight < inFlightMax) {
      const recs = reader.next(Math.min(batchSize, QUEUE_READ_CHUNK));
      if (recs.length === 0) break;
      let text = "";
      let rows = 0;
      let minMs = Infinity;
      let maxMs = -Infinity;
      const live: EventRow[] = [];
      for (const r of recs) {
        const row = this.live.get(r.offset);
        if (row) {
          this.live.delete(r.offset);
          live.push(row);
        }
        if (part.isStored(r.offset)) continue;
        text += r.payload.toString("utf8");
        rows++;
        if (r.ts < minMs) minMs = r.ts;
        if (r.ts > maxMs) maxMs = r.ts;
      }
      const first = recs[0].offset;
      const end = recs[recs.length - 1].offset + 1;
      if (rows === 0) {
        part.handOver(first, end, true);
        continue;
      }
      part.handOver(first, end);
      batches.push({
        text,
        rows,
        minMs,
        maxMs,
        range: { journalId: part.journal.id, first, end },
        ack: () => {
          part.stored(first);
          onStored();
        },
        live,
      });
    }
    return batches;
  }

  /** Backlog: events appended and not yet stored; lost: events an append failed for (kept in memory). */
  stats(): { id: string; backlog: number; bytes: number; dropped: number; checkpointed: number; lost: number } {
    const st = this.part.state();
    return { id: st.id, backlog: st.next - st.committed, bytes: st.bytes, dropped: st.dropped, checkpointed: st.checkpointed, lost: this.lost };
  }

  /** Closes the journal: what was not stored stays in it for the next start. */
  close(): void {
    this.part.close();
    this.live.clear();
  }
}
