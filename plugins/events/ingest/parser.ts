/**
 * A syslog parser thread (one beside each ingest worker, worker.ts). The worker receives and journals; this thread
 * takes the journaled records it is handed (in the journal's own record layout, transferred, never read back from
 * disk here) and does the per-message work: parsing, attribution to a node, the source, and which rules the message
 * hits. It hands the main thread batches of COPY lines ready to store and the rule hits, and tells its worker what it
 * counted (malformed, dropped) and which ranges had nothing to store. Its own thread, so a busy parser never delays
 * receipt: what it has not reached waits in the journal (ADR 0015, "Receipt apart from processing").
 */
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { RECORD_HEADER_BYTES } from "../../../core/worker.js";
import { toRow } from "../lib/row.js";
import type { Inbound, Transport } from "../lib/types.js";
import { eventCopyHead, UNMATCHED_TAIL } from "../repositories/eventCopy.js";
import { compileRule, eventText, type CompiledRule } from "../rules/compile.js";
import { matchRules } from "../rules/engine.js";
import { BUILTIN_SOURCES, type SourceEntry } from "../services/sources.js";
import { parseSyslog, rawText } from "../syslog/parse.js";
import {
  HitPacker,
  readRecordMeta,
  type BookNode,
  type FromParser,
  type LiveRow,
  type ParserData,
  type ReceiverToParser,
  type ParserToReceiver,
  type ToParser,
} from "./protocol.js";

const o = workerData as ParserData;
const parent = parentPort!;
const worker = o.port as MessagePort;
const post = (m: FromParser, transfer?: ArrayBuffer[]) => parent.postMessage(m, transfer);
const tell = (m: ParserToReceiver) => worker.postMessage(m);

/** Most events of a batch copied for the live channel. */
const LIVE_PER_BATCH = 50;

// Receipt comes first: with `nice` > 0 this thread yields the cores to the receiving threads (and the store) when
// they are short. Linux applies setpriority to a thread id; elsewhere it is skipped.
if (o.nice > 0) {
  try {
    setPriority(Number(readlinkSync("/proc/thread-self").split("/").pop()), o.nice);
  } catch {
    // not Linux, or not allowed: the thread keeps the process's priority
  }
}

// ---- what attribution and the rules read (the main thread sends it) ---------------------------------------------
let rules: CompiledRule[] = [];
let book = new Map<string, BookNode>();
let sourceByNode = new Map<string, SourceEntry>();
let builtin: SourceEntry = { id: BUILTIN_SOURCES.syslog, kind: "syslog", node_id: null, enabled: true };
let feed = false;
let live = true;

/** Per transport, what this thread counted since it last told its worker. */
type Counts = Partial<Record<Transport, number>>;

/** One record as handed over: its receipt time and its payload (a view into the batch). */
interface Rec {
  ts: number;
  payload: Buffer;
}

function* records(buf: Buffer, count: number): Generator<Rec> {
  let at = 0;
  for (let i = 0; i < count; i++) {
    const len = buf.readUInt32BE(at);
    yield { ts: buf.readDoubleBE(at + 8), payload: buf.subarray(at + RECORD_HEADER_BYTES, at + RECORD_HEADER_BYTES + len) };
    at += RECORD_HEADER_BYTES + len;
  }
}

function handle(m: Extract<ReceiverToParser, { t: "recs" }>): void {
  const { partition, journalId, first, end } = m;
  let text = "";
  let rows = 0;
  const disabledBy: Record<string, number> = {};
  const malformed: Counts = {};
  const dropped: Counts = {};
  let minMs = Infinity;
  let maxMs = -Infinity;
  const hits = new HitPacker();
  const liveRows: { row: number; view: LiveRow }[] = [];
  let liveLeftOut = 0;
  const fed: Inbound[] = [];
  for (const rec of records(Buffer.from(m.buf), m.count)) {
    const msg = inbound(rec, malformed);
    if (!msg) continue;
    // The forwarding tee takes every message received, stored or not (a disabled source's too).
    if (feed) fed.push(msg);
    const node = book.get(msg.source_ip) ?? null;
    const src = node ? (sourceByNode.get(node.id) ?? builtin) : builtin;
    if (!src.enabled) {
      // Dropped, as the listeners count what the pipeline refuses (their `dropped`; the pipeline tallies the reason).
      disabledBy[msg.listener] = (disabledBy[msg.listener] ?? 0) + 1;
      dropped[msg.transport] = (dropped[msg.transport] ?? 0) + 1;
      continue;
    }
    const row = toRow(msg, node, src.id, "unmatched", null);
    text += eventCopyHead(row);
    if (rules.length) {
      const h = matchRules(rules, {
        kind: "syslog",
        node_id: row.node_id,
        source_id: src.id,
        source_kind: "syslog",
        text: eventText(msg),
        trap_oid: null,
        varbinds: [],
      });
      if (h) hits.add(text.length, rows, row.received_at_ms, row.node_id, h);
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
  const empty = rows === 0 && fed.length === 0;
  // The worker first (its counters, and an empty range done at once), then the main thread.
  tell({ t: "handled", partition, first, empty, malformed, dropped });
  if (empty) {
    if (Object.keys(disabledBy).length)
      post({ t: "batch", partition, journalId, first, end, text: "", rows: 0, minMs: 0, maxMs: 0, hits: hits.pack(), disabled: disabledBy });
    return;
  }
  const packed = hits.pack();
  post(
    {
      t: "batch",
      partition,
      journalId,
      first,
      end,
      text,
      rows,
      minMs,
      maxMs,
      hits: packed,
      disabled: disabledBy,
      ...(live ? { live: liveRows, liveLeftOut } : {}),
      ...(feed ? { feed: fed } : {}),
    },
    [packed.nums.buffer as ArrayBuffer],
  );
}

/** A journal record as the pipeline's Inbound (parsed as ListenerCore.deliver would); null when there is nothing to store. */
function inbound(rec: Rec, malformed: Counts): Inbound | null {
  const meta = readRecordMeta(rec.payload);
  const data = rec.payload.subarray(meta.start);
  const listener = `syslog.${meta.transport}`;
  const base = {
    kind: "syslog" as const,
    transport: meta.transport,
    listener,
    source_ip: meta.address,
    received_at_ms: rec.ts,
    trap: null,
    ...(meta.mirrorGen ? { mirror_gen: meta.mirrorGen } : {}),
  };
  // The bytes travel with the message only for the forwarding feed (a copy: the batch's buffer goes with it otherwise).
  const bytes = feed ? Buffer.from(data) : undefined;
  if (meta.truncated) {
    const raw = rawText(data, o.maxMessageBytes);
    return raw.length ? { ...base, syslog: null, raw, malformed: true, bytes } : null;
  }
  const r = parseSyslog(data, rec.ts);
  if (r.ok) return { ...base, syslog: r.msg, raw: null, malformed: false, bytes };
  malformed[meta.transport] = (malformed[meta.transport] ?? 0) + 1;
  if (r.raw === null) return null;
  return { ...base, syslog: null, raw: r.raw, malformed: true, bytes };
}

// ---- from the worker: records to handle, and the steps of draining and closing ---------------------------------
worker.on("message", (m: ReceiverToParser) => {
  switch (m.t) {
    case "recs":
      return handle(m);
    case "drain":
      // Everything the worker handed over before this is handled and its batches posted (in order, on this channel).
      post({ t: "drained" });
      tell({ t: "drained" });
      return;
    case "close":
      post({ t: "parser-closed" });
      return;
  }
});

// ---- from the main thread: what attribution and the rules read -----------------------------------------------------
parent.on("message", (m: ToParser) => {
  switch (m.t) {
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
      for (const [address, node] of m.bookPatch ?? []) {
        if (node) book.set(address, node);
        else book.delete(address);
      }
      if (m.sources) {
        sourceByNode = new Map(m.sources.byNode);
        builtin = m.sources.builtin;
      }
      if (m.hello) post({ t: "ready" });
      return;
    }
    case "flags":
      feed = m.feed;
      live = m.live;
      return;
    case "exit":
      worker.close();
      parent.close();
      return;
  }
});
