/**
 * A syslog ingest worker (a worker thread; IngestWorkers starts one per core, each with a parser thread beside it,
 * parser.ts). It binds the syslog listeners on ports shared with the other workers (SO_REUSEPORT) and appends every
 * message it receives to its own journal before anything else (one write per turn of its event loop); then it hands
 * the journaled records to its parser (the batch it has just appended, from the copy in hand, when the parser is
 * caught up; otherwise read back from the journal). Receipt never waits for parsing: a parser that falls behind leaves
 * records in the journal, and at most maxInFlight of them are handed over and not yet stored. A range is committed
 * once the main thread says PostgreSQL holds it (or the parser found nothing in it to store). At start it skips what
 * PostgreSQL already holds (the ranges the main thread sends), so a replay after a crash stores each message once.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { JournalPart, RECORD_HEADER_BYTES, type JournalRecord } from "../../../core/worker.js";
import type { BoundListener, Transport } from "../lib/types.js";
import { startSyslogListeners } from "../syslog/server.js";
import {
  recordMetaBytes,
  writeRecordMeta,
  type FromWorker,
  type IngestWorkerData,
  type ParserToReceiver,
  type ReceiverToParser,
  type ToWorker,
} from "./protocol.js";

const o = workerData as IngestWorkerData;
const parent = parentPort!;
/** The channel to the parser thread (a new one when the main thread replaced a parser that died). */
let parser = o.port as MessagePort;
const post = (m: FromWorker) => parent.postMessage(m);
const toParser = (m: ReceiverToParser, transfer?: ArrayBuffer[]) => parser.postMessage(m, transfer);

// ---- journals ----------------------------------------------------------------------------------------------------
const parts: JournalPart[] = o.journal.dirs.map(
  (dir, index) => new JournalPart(index, { ...o.journal, dir, onDrop: (records, why) => post({ t: "drop", partition: index, records, why }) }),
);
const own = parts[0];
post({ t: "journals", list: parts.map((p) => ({ partition: p.index, id: p.journal.id, committed: p.journal.committed, next: p.journal.nextOffset })) });

// ---- receiving: every message appended to the journal, one write per turn ------------------------------------------
let buf = Buffer.allocUnsafe(1 << 20);
let off = 0;
let count = 0;
let appendScheduled = false;
let receiving = true;

function onFrame(data: Buffer, sourceIp: string, transport: Transport, truncated: boolean, mirrorGen: number): boolean {
  if (!receiving) return false;
  const need = RECORD_HEADER_BYTES + recordMetaBytes(sourceIp) + data.length;
  if (off + need > buf.length) {
    appendPending();
    if (need > buf.length) buf = Buffer.allocUnsafe(need * 2);
  }
  buf.writeUInt32BE(need - RECORD_HEADER_BYTES, off);
  data.copy(buf, writeRecordMeta(buf, off + RECORD_HEADER_BYTES, transport, truncated, sourceIp, mirrorGen));
  off += need;
  count++;
  if (!appendScheduled) {
    appendScheduled = true;
    setImmediate(appendPending);
  }
  return true;
}

function appendPending(): void {
  appendScheduled = false;
  if (count === 0) return;
  try {
    const first = own.journal.appendFramed(buf, off, count, Date.now());
    // A parser that is caught up gets the batch from the copy in hand (the journal is not read back).
    if (processing && own.reader && own.inFlight + count <= o.maxInFlight && own.reader.skipAppended(first, count, off))
      handOverAppended(own, first, buf, off, count);
  } catch (err) {
    // A full disk or a broken file: what this turn received is lost (counted), the listeners go on; one line per 10 s.
    lost += count;
    if (Date.now() - lastLostWarn > 10_000) {
      lastLostWarn = Date.now();
      warn("syslog journal append failed: messages lost", { error: String(err), lost_so_far: lost });
    }
  }
  off = 0;
  count = 0;
  pump();
}

// ---- handing over: journaled records to the parser, in order, at most maxInFlight not yet stored ----------------
let pumpScheduled = false;
let processing = true;
let lost = 0;
let lastLostWarn = 0;

function pump(): void {
  if (pumpScheduled || !processing) return;
  pumpScheduled = true;
  setImmediate(handOverSome);
}

/** Reads back what the parser has not been handed (a replay, or a parser that fell behind) while maxInFlight allows. */
function handOverSome(): void {
  pumpScheduled = false;
  if (!processing) return;
  for (const p of parts) {
    if (!p.reader) continue;
    while (p.inFlight < o.maxInFlight) {
      const recs = p.reader.next(Math.min(o.batchSize, o.maxInFlight - p.inFlight));
      if (recs.length === 0) break;
      handOverRead(p, recs);
    }
  }
}

/** Records read back, as one batch in the journal's record layout (those PostgreSQL already holds left out). */
function handOverRead(p: JournalPart, recs: JournalRecord[]): void {
  const first = recs[0].offset;
  const end = recs[recs.length - 1].offset + 1;
  let bytes = 0;
  let count = 0;
  // isStored is asked once per offset, in ascending order.
  const keep = recs.map((r) => !p.isStored(r.offset));
  for (let i = 0; i < recs.length; i++)
    if (keep[i]) {
      bytes += RECORD_HEADER_BYTES + recs[i].payload.length;
      count++;
    }
  if (count === 0) {
    p.handOver(first, end, true);
    return;
  }
  // Its own ArrayBuffer (a pooled one cannot be transferred).
  const out = Buffer.allocUnsafeSlow(bytes);
  let at = 0;
  for (let i = 0; i < recs.length; i++) {
    if (!keep[i]) continue;
    const r = recs[i];
    out.writeUInt32BE(r.payload.length, at);
    out.writeUInt32BE(0, at + 4);
    out.writeDoubleBE(r.ts, at + 8);
    r.payload.copy(out, at + RECORD_HEADER_BYTES);
    at += RECORD_HEADER_BYTES + r.payload.length;
  }
  p.handOver(first, end);
  toParser({ t: "recs", partition: p.index, journalId: p.journal.id, first, end, buf: out.buffer as ArrayBuffer, count }, [out.buffer as ArrayBuffer]);
}

/** The records just appended from `buf` (journal layout, `count` of them from offset `first`), in batches of batchSize. */
function handOverAppended(p: JournalPart, first: number, buf: Buffer, byteLength: number, count: number): void {
  let start = 0;
  let at = 0;
  let n = 0;
  let offset = first;
  for (let i = 0; i < count; i++) {
    at += RECORD_HEADER_BYTES + buf.readUInt32BE(at);
    if (++n === o.batchSize || i === count - 1) {
      const copy = buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + at) as ArrayBuffer;
      p.handOver(offset, offset + n);
      toParser({ t: "recs", partition: p.index, journalId: p.journal.id, first: offset, end: offset + n, buf: copy, count: n }, [copy]);
      offset += n;
      start = at;
      n = 0;
    }
  }
  if (at !== byteLength) throw new Error("journal batch layout mismatch");
}

function fromParser(m: ParserToReceiver): void {
  if (m.t === "drained") {
    stats();
    post({ t: "worker-drained" });
    return;
  }
  const p = parts[m.partition];
  // A range with nothing to store is done now (the others once the main thread says PostgreSQL holds them).
  if (m.empty) p.stored(m.first);
  for (const [transport, n] of Object.entries(m.dropped)) {
    const l = listenerOf(transport as Transport);
    if (l) l.counters.dropped += n;
  }
  for (const [transport, n] of Object.entries(m.malformed)) {
    const l = listenerOf(transport as Transport);
    if (l) l.counters.malformed += n;
  }
  pump();
}
parser.on("message", fromParser);

const listenerOf = (transport: Transport) => bound.find((l) => l.protocol === transport);

// ---- listeners ---------------------------------------------------------------------------------------------------
const bound: BoundListener[] = [];
/** The relay fast path's targets: every UDP listener's reader thread relays to them as it reads (UdpReader.mirror). */
let mirrorTargets: { id: string; address: string; port: number }[] = [];
let mirrorGen = 0;

function warn(message: string, fields?: Record<string, unknown>): void {
  post({ t: "warn", message, fields });
}

async function bind(ports: { udp: number | null; tcp: number | null; tls: number | null }): Promise<void> {
  const l = o.listeners;
  const common = {
    host: l.host,
    maxMessageBytes: l.maxMessageBytes,
    idleTimeoutMs: l.idleTimeoutMs,
    maxConnectionsPerAddress: l.maxConnectionsPerAddress,
    maxConnections: l.maxConnections,
    udpReceiveBufferBytes: l.udpReceiveBufferBytes,
    onMessage: () => false,
    onFrame,
    reusePort: true,
    udpSockets: l.udpSockets,
    log: { warn },
  };
  const off = { udp: null, tcp: null, tls: null };
  for (const protocol of ["udp", "tcp", "tls"] as const) {
    const port = ports[protocol];
    if (port === null) continue;
    try {
      for (const b of await startSyslogListeners({ ...common, ...off, [protocol]: port, tlsCert: l.tlsCert, tlsKey: l.tlsKey })) {
        if (mirrorTargets.length) b.mirror?.(mirrorTargets, mirrorGen);
        bound.push(b);
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      post({ t: "bind-error", name: `syslog.${protocol}`, port, code: e.code, message: e.message });
    }
  }
  post({ t: "bound", listeners: bound.map((b) => ({ name: b.name, protocol: b.protocol, address: b.address, port: b.port })) });
}

/** Per mirror target id: [id, sent, errors] summed over this worker's UDP listeners. */
function mirrorSnapshot(): [string, number, number][] {
  const sum = new Map<string, [number, number]>();
  for (const b of bound)
    for (const [id, c] of b.mirrorCounts?.() ?? []) {
      const t = sum.get(id) ?? [0, 0];
      sum.set(id, [t[0] + c.sent, t[1] + c.errors]);
    }
  return [...sum].map(([id, [sent, errors]]) => [id, sent, errors]);
}

// ---- stats, checkpoints, the age bound ----------------------------------------------------------------------------
function stats(): void {
  const listeners: Record<string, { received: number; dropped: number; malformed: number }> = {};
  for (const l of bound) listeners[l.name] = { ...l.counters };
  post({
    t: "stats",
    listeners,
    journals: parts.map((p) => p.state()),
    mirror: mirrorSnapshot(),
    lost,
  });
}
const statsTimer = setInterval(stats, 100);
const checkpointTimer = setInterval(() => {
  for (const p of parts) p.housekeeping();
}, 1000);

// ---- messages from the main thread ---------------------------------------------------------------------------------
parent.on("message", (m: ToWorker) => {
  switch (m.t) {
    case "bind":
      void bind(m);
      return;
    case "resume": {
      parts[m.partition].resume(m.ranges);
      pump();
      return;
    }
    case "ack": {
      parts[m.partition].stored(m.first);
      pump();
      return;
    }
    case "parser":
      // A new parser in place of one that died (the main thread waited until what the old one handed it was stored):
      // what the old one was handed and did not finish is read again from the journal, the done ranges skipped.
      parser.off("message", fromParser);
      parser.close();
      parser = m.port;
      parser.on("message", fromParser);
      for (const p of parts) p.rewind();
      pump();
      return;
    case "mirror":
      mirrorTargets = m.targets;
      mirrorGen = m.gen;
      for (const b of bound) b.mirror?.(m.targets, m.gen);
      return;
    case "close":
      // Stop receiving and handing over; what is journaled and not stored waits for the next start.
      receiving = false;
      appendPending();
      processing = false;
      // The parser hands the main thread what it was handed before this, then says so (parser-closed).
      toParser({ t: "close" });
      void Promise.allSettled(bound.map((l) => l.close())).then(() => {
        stats();
        post({ t: "closed" });
      });
      return;
    case "drain":
      // After what the sockets hold now is read (the UDP reader threads hand their batches over within a few ms):
      // everything received is journaled and handed over, or as much as maxInFlight allows (the journal keeps the rest).
      // The parser then handles what it holds and says so to the main thread (its batches first) and to this worker,
      // which answers with its counters (the parser's malformed and dropped included).
      setTimeout(() => {
        appendPending();
        handOverSome();
        toParser({ t: "drain" });
      }, 10);
      return;
    case "exit":
      exit();
      return;
  }
});

/** The last step (after the main thread stored what it had and acknowledged it): the journals closed, checkpoints written. */
function exit(): void {
  clearInterval(statsTimer);
  clearInterval(checkpointTimer);
  for (const p of parts) p.close();
  parser.close();
  post({ t: "exited" });
}
