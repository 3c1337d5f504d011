/**
 * A flows decoder thread (FlowIngest starts one per core). It appends every batch the reader threads hand it to its
 * own journal (one write per batch), then reads the journal back and decodes: templates into its cache, flow records
 * into per-minute aggregates (MinuteAggregator). Every flushMs the main thread takes the aggregates (as COPY text)
 * with the journal ranges they cover, stores both in one transaction and says so; the decoder then commits those
 * ranges. While a take is not stored the decoder goes on aggregating into the next one, up to maxKeys keys; past
 * that it stops reading its journal (which holds the rest) rather than drop records. At start it skips the ranges
 * PostgreSQL already holds (still reading their templates), so a replay after a crash counts each datagram once.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { JournalPart, RECORD_HEADER_BYTES } from "../../../core/worker.js";
import { copyRecord, FlowDecoder } from "../decode/decoder.js";
import { TemplateCache } from "../decode/templates.js";
import type { FlowRecord, RecordSink, TemplateKey } from "../decode/types.js";
import { MinuteAggregator } from "../lib/aggregate.js";
import { rollupCopyLines } from "../repositories/rollupCopy.js";
import {
  FLAG_LEARN_ONLY,
  readMeta,
  type DecoderCounters,
  type DecoderData,
  type FromDecoder,
  type JournalState,
  type ReaderBatch,
  type ToDecoder,
} from "./protocol.js";

const o = workerData as DecoderData;
const parent = parentPort!;
const post = (m: FromDecoder) => parent.postMessage(m);

/** The longest a decoder decodes before it goes back to its ports (ms). */
const SLICE_MS = 2;
const READ_CHUNK = 512;
const DAY_MS = 86_400_000;
/** Keys kept free below maxKeys when the decoder stops reading (a datagram's records may each need one). */
const KEY_MARGIN = 2048;

const templates = new TemplateCache();
templates.import(o.templates);
const decoder = new FlowDecoder({ templates, pendingMaxMs: o.pendingMaxMs, samplingOverride: (e) => o.overrides[e] ?? null });
let aggregator = new MinuteAggregator(o.maxKeys);
const counters: DecoderCounters = { datagrams: 0, malformed: 0, dropped: 0, records: 0, droppedRecords: 0, templates: 0, lost: 0 };
let learned = new Map<string, TemplateKey>();
let withdrawn: TemplateKey[] = [];
let feed = false;
let fed: { exporter: string; received_at_ms: number; bytes: Uint8Array; records: FlowRecord[] }[] = [];

// ---- journals ----------------------------------------------------------------------------------------------------
const parts: JournalPart[] = o.dirs.map(
  (dir, index) => new JournalPart(index, { ...o.journal, dir, onDrop: (records, why) => post({ t: "drop", records, why }) }),
);
/** Per journal: where the records aggregated since the last take begin. */
const takeFrom = parts.map((p) => p.journal.committed);
/** Per take handed over: the journal ranges it covers (partition, first offset), committed once it is stored. */
const takes = new Map<number, [number, number][]>();
const own = parts[0];
const journalStates = (): JournalState[] => parts.map((p) => p.state());
post({ t: "journals", list: journalStates() });

// ---- receiving: each batch appended as it comes ------------------------------------------------------------------
let receiving = true;
let lastLostWarn = 0;

function onBatch(port: MessagePort, m: ReaderBatch): void {
  if (receiving) {
    const ts = Date.now();
    let first = -1;
    try {
      first = own.journal.appendFramed(new Uint8Array(m.buf), m.bytes, m.count, ts);
    } catch (err) {
      counters.lost += m.count;
      if (Date.now() - lastLostWarn > 10_000) {
        lastLostWarn = Date.now();
        post({ t: "warn", message: "flows journal append failed: datagrams lost", fields: { error: String(err), lost_so_far: counters.lost } });
      }
    }
    // Caught up: the batch is decoded from the copy in hand, not read back from the journal.
    if (first >= 0 && processing && !full() && own.reader?.skipAppended(first, m.count, m.bytes))
      decodeInPlace(Buffer.from(m.buf, 0, m.bytes), first, m.count, ts);
  }
  port.postMessage({ t: "ack", bytes: m.bytes });
  pump();
}

// ---- decoding ----------------------------------------------------------------------------------------------------
let pumpScheduled = false;
let processing = false;
let recordNowMs = 0;
let keepRecords: FlowRecord[] | null = null;
let sinkExporter = "";
let sinkSource = "none";

const sink: RecordSink = (rec, src4, dst4) => {
  if (rec.exporter !== sinkExporter) {
    sinkExporter = rec.exporter;
    sinkSource = o.overrides[rec.exporter] ? "override" : "";
  }
  const source = sinkSource || (rec.sampling > 1 ? "exporter" : "none");
  if (aggregator.add(rec, null, recordNowMs, source, src4, dst4)) counters.records++;
  else counters.droppedRecords++;
  if (keepRecords !== null) keepRecords.push(copyRecord(rec, src4, dst4));
};

function pump(): void {
  if (pumpScheduled || !processing) return;
  pumpScheduled = true;
  setImmediate(decodeSome);
}

const full = () => aggregator.size + KEY_MARGIN >= o.maxKeys;

function decodeSome(all = false): void {
  pumpScheduled = false;
  if (!processing) return;
  const until = all ? Infinity : performance.now() + SLICE_MS;
  let more = false;
  for (const p of parts) {
    if (!p.reader) continue;
    while (!full() && performance.now() < until) {
      const recs = p.reader.next(READ_CHUNK);
      if (recs.length === 0) break;
      for (const rec of recs) decodeOne(p, rec.offset, rec.ts, rec.payload);
    }
    if (!full() && p.reader.nextOffset < p.journal.nextOffset) more = true;
  }
  if (feed && fed.length) {
    post({ t: "feed", items: fed });
    fed = [];
  }
  if (more) pump();
}

/** Decodes a batch as it was appended: `count` framed records from `first`. */
function decodeInPlace(buf: Buffer, first: number, count: number, ts: number): void {
  for (let at = 0, i = 0; i < count; i++) {
    const len = buf.readUInt32BE(at);
    decodeOne(own, first + i, ts, buf.subarray(at + RECORD_HEADER_BYTES, at + RECORD_HEADER_BYTES + len));
    at += RECORD_HEADER_BYTES + len;
  }
  if (feed && fed.length) {
    post({ t: "feed", items: fed });
    fed = [];
  }
}

function decodeOne(p: JournalPart, offset: number, ts: number, payload: Buffer): void {
  const m = readMeta(payload);
  if (!m) return;
  // A range PostgreSQL already holds is read for its templates only.
  const learnOnly = (m.flags & FLAG_LEARN_ONLY) !== 0 || p.isStored(offset);
  recordNowMs = ts;
  keepRecords = feed && !learnOnly ? [] : null;
  const r = decoder.decode(m.datagram, m.exporter, ts, sink, learnOnly);
  if (!learnOnly) {
    counters.datagrams++;
    if (r.malformed) counters.malformed++;
    counters.dropped += r.dropped;
    if (r.pending) post({ t: "lookup", exporter: m.exporter });
    if (keepRecords !== null) fed.push({ exporter: m.exporter, received_at_ms: ts, bytes: Uint8Array.prototype.slice.call(m.datagram), records: keepRecords });
  }
  keepRecords = null;
  for (const k of r.templatesLearned) learned.set(`${k.exporter}|${k.version}|${k.domain}|${k.id}`, k);
  for (const k of r.templatesWithdrawn) withdrawn.push(k);
}

// ---- takes -------------------------------------------------------------------------------------------------------
function take(seq: number): void {
  counters.dropped += decoder.expire(Date.now());
  const { rollups, exporters } = aggregator.take();
  aggregator = new MinuteAggregator(o.maxKeys);
  sinkExporter = "";
  const days = [...new Set(rollups.map((r) => Math.floor(r.at_ms / DAY_MS) * DAY_MS))];
  const ranges = [];
  const covered: [number, number][] = [];
  for (const p of parts) {
    if (!p.reader) continue;
    const first = takeFrom[p.index];
    const end = p.reader.nextOffset;
    if (end > first) {
      ranges.push({ partition: p.index, journalId: p.journal.id, first, end });
      p.handOver(first, end);
      covered.push([p.index, first]);
    }
    takeFrom[p.index] = end;
  }
  takes.set(seq, covered);
  const learnedList = [...learned.values()].map((k) => templates.exportOne(k)).filter((t) => t !== null);
  post({ t: "taken", seq, copy: rollupCopyLines(rollups), rows: rollups.length, days, exporters, ranges, learned: learnedList, withdrawn });
  learned = new Map();
  withdrawn = [];
  pump();
}

function stored(seq: number): void {
  for (const [partition, first] of takes.get(seq) ?? []) parts[partition].stored(first);
  takes.delete(seq);
}

function sendStats(): void {
  counters.templates = templates.size;
  post({ t: "stats", counters: { ...counters }, journals: journalStates() });
}

const statsTimer = setInterval(sendStats, 250);
const housekeeping = setInterval(() => {
  for (const p of parts) {
    try {
      p.housekeeping();
    } catch (err) {
      post({ t: "warn", message: "flows journal checkpoint failed", fields: { error: String(err) } });
    }
  }
}, 1000);
const readerPorts: MessagePort[] = [];

parent.on("message", (m: ToDecoder) => {
  switch (m.t) {
    case "ports":
      for (const port of m.ports) {
        readerPorts.push(port);
        port.on("message", (b: ReaderBatch) => onBatch(port, b));
      }
      return;
    case "resume": {
      const p = parts[m.partition];
      p.resume(m.ranges);
      takeFrom[p.index] = p.journal.committed;
      processing = parts.every((x) => x.reader !== null);
      return pump();
    }
    case "templates":
      if (templates.import(m.list)) {
        sinkExporter = "";
        recordNowMs = Date.now();
        decoder.releaseKnown(sink);
      }
      return;
    case "take":
      return take(m.seq);
    case "stored":
      return stored(m.seq);
    case "feed":
      feed = m.on;
      if (!feed) fed = [];
      return;
    case "drain":
      // Everything journaled decoded now (a test or a shutdown's last take).
      decodeSome(true);
      sendStats();
      return post({ t: "drained" });
    case "close":
      receiving = false;
      processing = false;
      clearInterval(statsTimer);
      clearInterval(housekeeping);
      for (const port of readerPorts) port.close();
      for (const p of parts) p.close();
      return post({ t: "closed" });
  }
});
