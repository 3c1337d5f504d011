/**
 * A syslog ingest worker (a worker thread; IngestWorkers starts one per core). It binds the syslog listeners on ports
 * shared with the other workers (SO_REUSEPORT), appends every message it receives to its own journal before anything
 * else (one write per turn of its event loop), then reads its journal back and does the per-message work there:
 * parsing, attribution to a node, the source, and which rules the message hits. The main thread gets batches of
 * COPY lines ready to store and the rule hits (the rules' windows live there, in one place), not messages. A batch's
 * journal range is committed once the main thread says PostgreSQL holds it; while it does not, at most maxInFlight
 * records are handed over and the journal keeps the rest. At start it skips what PostgreSQL already holds (the ranges
 * the main thread sends), so a replay after a crash stores each message once.
 */
import { parentPort, workerData } from "node:worker_threads";
import { JournalPart, RECORD_HEADER_BYTES, type JournalRecord } from "../../../core/worker.js";
import { toRow } from "../lib/row.js";
import type { BoundListener, Inbound, Transport } from "../lib/types.js";
import { eventCopyHead, UNMATCHED_TAIL } from "../repositories/eventCopy.js";
import { compileRule, eventText, type CompiledRule } from "../rules/compile.js";
import { matchRules } from "../rules/engine.js";
import { BUILTIN_SOURCES, type SourceEntry } from "../services/sources.js";
import { parseSyslog, rawText } from "../syslog/parse.js";
import { startSyslogListeners } from "../syslog/server.js";
import {
  readRecordMeta,
  recordMetaBytes,
  writeRecordMeta,
  type BatchHit,
  type BookNode,
  type FromWorker,
  type IngestWorkerData,
  type LiveRow,
  type ToWorker,
} from "./protocol.js";

const o = workerData as IngestWorkerData;
const parent = parentPort!;
const post = (m: FromWorker) => parent.postMessage(m);

/** The longest a worker parses and matches before it goes back to its sockets (ms). */
const SLICE_MS = 1;
/** Records read from the journal at a time within a slice. */
const READ_CHUNK = 256;
/** What parsing, attributing and matching a record cost lately, in µs (sizes the slices). */
let usPerRecord = 30;
/** Most events of a batch copied for the live channel. */
const LIVE_PER_BATCH = 50;

// ---- what attribution and the rules read (the main thread sends it) ---------------------------------------------
let rules: CompiledRule[] = [];
let book = new Map<string, BookNode>();
let sourceByNode = new Map<string, SourceEntry>();
let builtin: SourceEntry = { id: BUILTIN_SOURCES.syslog, kind: "syslog", node_id: null, enabled: true };
let feed = false;
let live = true;

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

function onFrame(data: Buffer, sourceIp: string, transport: Transport, truncated: boolean): boolean {
  if (!receiving) return false;
  const need = RECORD_HEADER_BYTES + recordMetaBytes(sourceIp) + data.length;
  if (off + need > buf.length) {
    appendPending();
    if (need > buf.length) buf = Buffer.allocUnsafe(need * 2);
  }
  buf.writeUInt32BE(need - RECORD_HEADER_BYTES, off);
  data.copy(buf, writeRecordMeta(buf, off + RECORD_HEADER_BYTES, transport, truncated, sourceIp));
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
    own.journal.appendFramed(buf, off, count, Date.now());
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

// ---- processing: read the journal back, parse, attribute, match, hand batches over -------------------------------
let pumpScheduled = false;
let processing = true;
let lost = 0;
let lastLostWarn = 0;

function pump(): void {
  if (pumpScheduled || !processing) return;
  pumpScheduled = true;
  setImmediate(processSome);
}

function processSome(all = false): void {
  pumpScheduled = false;
  if (!processing) return;
  // About SLICE_MS of parsing and matching, then back to the sockets: libuv reads at most 32 datagrams of a socket per
  // turn of the loop, so a long slice caps what a worker receives (receiving comes first; the journal absorbs the lag).
  let budget = all ? Infinity : Math.max(8, Math.floor((SLICE_MS * 1000) / usPerRecord));
  let more = false;
  for (const p of parts) {
    if (!p.reader) continue;
    let recs: JournalRecord[] = [];
    while (p.inFlight + recs.length < o.maxInFlight && recs.length < o.batchSize && recs.length < budget) {
      const got = p.reader.next(Math.min(READ_CHUNK, o.batchSize - recs.length, budget - recs.length));
      if (got.length === 0) break;
      recs = recs.length ? recs.concat(got) : got;
    }
    if (recs.length) {
      const t0 = performance.now();
      handOver(p, recs);
      // The cost of a record lately (a moving average), which sizes the next slice.
      usPerRecord = 0.8 * usPerRecord + 0.2 * (((performance.now() - t0) * 1000) / recs.length);
      budget -= recs.length;
    }
    if (p.inFlight < o.maxInFlight && p.reader.nextOffset < p.journal.nextOffset) more = true;
  }
  if (more) {
    if (all) return processSome(true);
    pump();
  }
}

const listenerOf = (transport: Transport) => bound.find((l) => l.protocol === transport);

function handOver(p: JournalPart, recs: JournalRecord[]): void {
  const first = recs[0].offset;
  const end = recs[recs.length - 1].offset + 1;
  let text = "";
  let rows = 0;
  let disabled = 0;
  const disabledBy: Record<string, number> = {};
  let minMs = Infinity;
  let maxMs = -Infinity;
  const hits: BatchHit[] = [];
  const liveRows: { row: number; view: LiveRow }[] = [];
  let liveLeftOut = 0;
  const fed: Inbound[] = [];
  for (const rec of recs) {
    if (p.isStored(rec.offset)) continue;
    const m = inbound(rec);
    if (!m) continue;
    // The forwarding tee takes every message received, stored or not (a disabled source's too).
    if (feed) fed.push(m);
    const node = book.get(m.source_ip) ?? null;
    const src = node ? (sourceByNode.get(node.id) ?? builtin) : builtin;
    if (!src.enabled) {
      // Dropped, as the listeners count what the pipeline refuses (their `dropped`; the pipeline tallies the reason).
      disabled++;
      disabledBy[m.listener] = (disabledBy[m.listener] ?? 0) + 1;
      const l = listenerOf(m.transport);
      if (l) l.counters.dropped++;
      continue;
    }
    const row = toRow(m, node, src.id, "unmatched", null);
    text += eventCopyHead(row);
    if (rules.length) {
      const h = matchRules(rules, {
        kind: "syslog",
        node_id: row.node_id,
        source_id: src.id,
        source_kind: "syslog",
        text: eventText(m),
        trap_oid: null,
        varbinds: [],
      });
      if (h) hits.push({ pos: text.length, node_id: row.node_id, at_ms: row.received_at_ms, hits: h, row: rows });
    }
    text += UNMATCHED_TAIL;
    if (live) {
      if (liveRows.length < LIVE_PER_BATCH) {
        const { action: _a, rule_id: _r, ...view } = row;
        liveRows.push({ row: rows, view });
      } else liveLeftOut++;
    }
    if (row.received_at_ms < minMs) minMs = row.received_at_ms;
    if (row.received_at_ms > maxMs) maxMs = row.received_at_ms;
    rows++;
  }
  if (rows === 0 && fed.length === 0) {
    // Nothing to store (all already stored, disabled or empty): the range is done here.
    p.handOver(first, end, true);
    if (disabled)
      post({ t: "batch", partition: p.index, journalId: p.journal.id, first, end, text: "", rows: 0, minMs: 0, maxMs: 0, hits: [], disabled: disabledBy });
    return;
  }
  p.handOver(first, end);
  post({
    t: "batch",
    partition: p.index,
    journalId: p.journal.id,
    first,
    end,
    text,
    rows,
    minMs,
    maxMs,
    hits,
    disabled: disabledBy,
    ...(live ? { live: liveRows, liveLeftOut } : {}),
    ...(feed ? { feed: fed } : {}),
  });
}

/** A journal record as the pipeline's Inbound (parsed as ListenerCore.deliver would); null when there is nothing to store. */
function inbound(rec: JournalRecord): Inbound | null {
  const meta = readRecordMeta(rec.payload);
  const data = rec.payload.subarray(meta.start);
  const listener = `syslog.${meta.transport}`;
  const base = { kind: "syslog" as const, transport: meta.transport, listener, source_ip: meta.address, received_at_ms: rec.ts, trap: null };
  // The bytes travel with the message only for the forwarding feed (a copy: the journal's buffer is reused).
  const bytes = feed ? Buffer.from(data) : undefined;
  if (meta.truncated) {
    const raw = rawText(data, o.listeners.maxMessageBytes);
    return raw.length ? { ...base, syslog: null, raw, malformed: true, bytes } : null;
  }
  const r = parseSyslog(data, rec.ts);
  if (r.ok) return { ...base, syslog: r.msg, raw: null, malformed: false, bytes };
  const l = listenerOf(meta.transport);
  if (l) l.counters.malformed++;
  if (r.raw === null) return null;
  return { ...base, syslog: null, raw: r.raw, malformed: true, bytes };
}

// ---- listeners ---------------------------------------------------------------------------------------------------
const bound: BoundListener[] = [];
/** The relay fast path's targets: every UDP listener's reader thread relays to them as it reads (UdpReader.mirror). */
let mirrorTargets: { id: string; address: string; port: number }[] = [];

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
    onMessage: () => false,
    onFrame,
    reusePort: true,
    log: { warn },
  };
  const off = { udp: null, tcp: null, tls: null };
  for (const protocol of ["udp", "tcp", "tls"] as const) {
    const port = ports[protocol];
    if (port === null) continue;
    try {
      for (const b of await startSyslogListeners({ ...common, ...off, [protocol]: port, tlsCert: l.tlsCert, tlsKey: l.tlsKey })) {
        if (mirrorTargets.length) b.mirror?.(mirrorTargets);
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
const statsTimer = setInterval(stats, 250);
const checkpointTimer = setInterval(() => {
  for (const p of parts) p.housekeeping();
}, 1000);

// ---- messages from the main thread ---------------------------------------------------------------------------------
parent.on("message", (m: ToWorker) => {
  switch (m.t) {
    case "bind":
      void bind(m);
      return;
    case "state": {
      if (m.rules) {
        const compiled: CompiledRule[] = [];
        for (const r of m.rules) {
          const c = compileRule(r, (r as { id: string }).id);
          if (c.ok) compiled.push(c.rule);
        }
        rules = compiled;
      }
      if (m.book) book = new Map(m.book);
      if (m.sources) {
        sourceByNode = new Map(m.sources.byNode);
        builtin = m.sources.builtin;
      }
      return;
    }
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
    case "flags":
      feed = m.feed;
      live = m.live;
      return;
    case "mirror":
      mirrorTargets = m.targets;
      for (const b of bound) b.mirror?.(m.targets);
      return;
    case "close":
      // Stop receiving and handing over; what is journaled and not stored waits for the next start.
      receiving = false;
      appendPending();
      processing = false;
      void Promise.allSettled(bound.map((l) => l.close())).then(() => {
        stats();
        post({ t: "closed" });
      });
      return;
    case "drain":
      // After what the sockets hold now is read (the UDP reader threads hand their batches over within a few ms):
      // everything received is journaled and handed over, or as much as maxInFlight allows (the journal keeps the rest).
      setTimeout(() => {
        appendPending();
        processSome(true);
        stats();
        post({ t: "drained" });
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
  post({ t: "exited" });
}
