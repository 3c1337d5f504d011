/**
 * What the main thread, the syslog ingest workers (worker.ts: receive and journal) and their parser threads
 * (parser.ts: parse, attribute, match) say to each other, and how a received message is laid out as a journal record.
 * Plain data only: every message crosses a thread by structured clone (record batches by transfer).
 */
import type { MessagePort } from "node:worker_threads";
import { MIRROR_GENERATIONS } from "../contract.js";
import type { EventRow, Inbound, Transport } from "../lib/types.js";
import type { RuleHit } from "../rules/engine.js";
import type { SourceEntry } from "../services/sources.js";

export interface IngestListenerConfig {
  host: string;
  udp: number | null;
  tcp: number | null;
  tls: number | null;
  tlsCert?: string;
  tlsKey?: string;
  maxMessageBytes: number;
  idleTimeoutMs: number;
  maxConnectionsPerAddress: number;
  maxConnections: number;
  udpReceiveBufferBytes: number;
  /** UDP sockets each worker binds on the port (each with a reader thread). */
  udpSockets: number;
}

export interface IngestJournalConfig {
  /** The journal directories this worker reads: its own first (the one it appends to), then orphans of a larger worker count. */
  dirs: string[];
  maxBytes: number;
  maxAgeMs: number;
  segmentBytes: number;
  fsync: "always" | "interval" | "never";
  fsyncIntervalMs: number;
}

export interface IngestWorkerData {
  index: number;
  listeners: IngestListenerConfig;
  journal: IngestJournalConfig;
  /** Most records per batch handed to the main thread. */
  batchSize: number;
  /** Records handed over and not yet stored, per journal, before the worker stops reading its journal (the journal holds the rest). */
  maxInFlight: number;
  /** The channel to this worker's parser thread. */
  port: MessagePort;
}

export interface ParserData {
  index: number;
  maxMessageBytes: number;
  /** Niceness the parser thread takes (Linux; 0 = the process's): receipt keeps the cores when they are short. */
  nice: number;
  /** The channel to its worker. */
  port: MessagePort;
}

/** A node as attribution needs it. */
export interface BookNode {
  id: string;
  folder_path: string[];
}

/** What attribution and the rules read: sent whole when any part changes. */
export interface IngestState {
  /** Stored rule rows (compiled in the worker with compileRule); undefined = unchanged. */
  rules?: unknown[];
  /** Address → node, for the embedded poller's pool (a node of that pool first, as NodeAddressBook.byIp does). */
  book?: [string, BookNode][];
  /** Changes to apply to the book (after `book` when both come): an address's node now, or null for none. */
  bookPatch?: [string, BookNode | null][];
  sources?: { byNode: [string, SourceEntry][]; builtin: SourceEntry };
}

export type ToWorker =
  | { t: "bind"; udp: number | null; tcp: number | null; tls: number | null }
  | { t: "resume"; partition: number; ranges: [number, number][] }
  | { t: "ack"; partition: number; first: number; end: number }
  /** The channel to a new parser thread (the last one died): hand over again what was not stored, from the journal. */
  | { t: "parser"; port: MessagePort }
  | { t: "mirror"; targets: { id: string; address: string; port: number }[]; gen: number }
  | { t: "drain" }
  | { t: "close" }
  | { t: "exit" };

/** An event whose rules did more than nothing: where its line's tail starts, and what the main thread's windows need. */
export interface BatchHit {
  /** Offset in `text` of the line's UNMATCHED_TAIL. */
  pos: number;
  node_id: string | null;
  at_ms: number;
  hits: RuleHit[];
  /** The event's index among the batch's rows (for its live copy). */
  row: number;
}

/**
 * A batch's rule hits packed for the trip between threads: numbers in one transferred Float64Array and the ids once
 * each, not an object per hit (with rules that count every message, cloning those objects cost the parser and the main
 * thread more than matching them). Per event: pos, row, at_ms, node index (-1: none), n, then n entries of
 * rule index × 2 + (clear ? 1 : 0).
 */
export interface PackedHits {
  nums: Float64Array;
  /** Events with hits. */
  count: number;
  nodes: string[];
  rules: string[];
}

/** Collects a batch's hits (the parser's side). */
export class HitPacker {
  private nums: number[] = [];
  private count = 0;
  private nodes: string[] = [];
  private nodeIndex = new Map<string, number>();
  private rules: string[] = [];
  private ruleIndex = new Map<string, number>();

  add(pos: number, row: number, atMs: number, nodeId: string | null, hits: readonly RuleHit[]): void {
    let node = -1;
    if (nodeId !== null) {
      node = this.nodeIndex.get(nodeId) ?? -1;
      if (node < 0) {
        node = this.nodes.push(nodeId) - 1;
        this.nodeIndex.set(nodeId, node);
      }
    }
    this.nums.push(pos, row, atMs, node, hits.length);
    for (const h of hits) {
      let r = this.ruleIndex.get(h.rule_id);
      if (r === undefined) {
        r = this.rules.push(h.rule_id) - 1;
        this.ruleIndex.set(h.rule_id, r);
      }
      this.nums.push(r * 2 + (h.clear ? 1 : 0));
    }
    this.count++;
  }

  get size(): number {
    return this.count;
  }

  pack(): PackedHits {
    return { nums: Float64Array.from(this.nums), count: this.count, nodes: this.nodes, rules: this.rules };
  }
}

/** The events of packed hits, in order (the main thread's side); each event's `hits` are shared objects: read only. */
export function* unpackHits(p: PackedHits): Generator<BatchHit> {
  const shared: RuleHit[] = [];
  for (let r = 0; r < p.rules.length; r++) shared.push({ rule_id: p.rules[r], clear: false }, { rule_id: p.rules[r], clear: true });
  const n = p.nums;
  let at = 0;
  for (let i = 0; i < p.count; i++) {
    const node = n[at + 3];
    const k = n[at + 4];
    const hits: RuleHit[] = new Array<RuleHit>(k);
    for (let j = 0; j < k; j++) hits[j] = shared[n[at + 5 + j]];
    yield { pos: n[at], row: n[at + 1], at_ms: n[at + 2], node_id: node < 0 ? null : p.nodes[node], hits };
    at += 5 + k;
  }
}

/** Counters of one listener in one worker (summed over the workers on the main thread). */
export interface WorkerListenerCounters {
  received: number;
  dropped: number;
  malformed: number;
}

export type FromWorker =
  | { t: "journals"; list: { partition: number; id: string; committed: number; next: number }[] }
  | { t: "bound"; listeners: { name: string; protocol: "udp" | "tcp" | "tls"; address: string; port: number }[] }
  | { t: "bind-error"; name: string; port: number; code?: string; message: string }
  | {
      t: "stats";
      listeners: Record<string, WorkerListenerCounters>;
      journals: { partition: number; id: string; committed: number; checkpointed: number; next: number; bytes: number; dropped: number; skipped: number }[];
      mirror: [string, number, number][];
      /** Messages received that the journal could not take (a write failed): lost. */
      lost: number;
    }
  | { t: "drop"; partition: number; records: number; why: "size" | "age" }
  | { t: "warn"; message: string; fields?: Record<string, unknown> }
  | { t: "worker-drained" }
  | { t: "closed" }
  | { t: "exited" };

/** The main thread to a parser: what attribution and the rules read, and what to copy for the feed and live channel. */
export type ToParser = ({ t: "state"; hello?: boolean } & IngestState) | { t: "flags"; feed: boolean; live: boolean } | { t: "exit" };

/** A worker to its parser: journaled records (the journal's record layout: 16-byte header, payload), in order. */
export type ReceiverToParser =
  { t: "recs"; partition: number; journalId: string; first: number; end: number; buf: ArrayBuffer; count: number } | { t: "drain" } | { t: "close" };

/** A parser to its worker: a range handled (`empty`: nothing to store, done now) and what it counted, per transport. */
export type ParserToReceiver =
  | {
      t: "handled";
      partition: number;
      first: number;
      empty: boolean;
      malformed: Partial<Record<Transport, number>>;
      dropped: Partial<Record<Transport, number>>;
    }
  | { t: "drained" };

/** A parser to the main thread. */
export type FromParser =
  | { t: "ready" }
  | {
      t: "batch";
      partition: number;
      journalId: string;
      /** Journal offsets [first, end) the batch covers (skipped and dropped records included). */
      first: number;
      end: number;
      /** COPY text lines of the events to store (EVENT_COPY_COLUMNS), each ending with UNMATCHED_TAIL. */
      text: string;
      rows: number;
      minMs: number;
      maxMs: number;
      hits: PackedHits;
      /** Events dropped because their source is disabled, by listener. */
      disabled: Record<string, number>;
      /** A sample of the batch's events for the live channel (when the main thread asked), with the count left out. */
      live?: { row: number; view: LiveRow }[];
      liveLeftOut?: number;
      /** Every message, when the main thread asked for the feed (events.received: the forwarding tee). */
      feed?: Inbound[];
    }
  | { t: "drained" }
  | { t: "parser-closed" };

/** An event as the live channel sends it, before its action is known (the main thread sets action and rule_id). */
export type LiveRow = Omit<EventRow, "action" | "rule_id">;

// ---- the journal record of a received message ------------------------------------------------------------------
// payload: u8 transport (0 udp, 1 tcp, 2 tls) | u8 flags (bit 0: a stream frame cut short; bits 1-7: the mirror
// generation of a UDP datagram, 0 to 127, see Inbound.mirror_gen) | u8 address length | address (ASCII) | message bytes

const TRANSPORTS: readonly Transport[] = ["udp", "tcp", "tls"];
export const FLAG_TRUNCATED = 1;

/** Bytes a record's payload takes before the message. */
export const recordMetaBytes = (address: string) => 3 + address.length;

/** Writes the record's meta at `at` in `buf`; returns where the message goes. */
export function writeRecordMeta(buf: Buffer, at: number, transport: Transport, truncated: boolean, address: string, mirrorGen = 0): number {
  buf[at] = TRANSPORTS.indexOf(transport);
  buf[at + 1] = (truncated ? FLAG_TRUNCATED : 0) | ((mirrorGen & MIRROR_GENERATIONS) << 1);
  buf[at + 2] = address.length;
  buf.write(address, at + 3, "latin1");
  return at + 3 + address.length;
}

export interface RecordMeta {
  transport: Transport;
  truncated: boolean;
  address: string;
  mirrorGen: number;
  /** Where the message starts in the payload. */
  start: number;
}

export function readRecordMeta(payload: Buffer): RecordMeta {
  const len = payload[2];
  return {
    transport: TRANSPORTS[payload[0]] ?? "udp",
    truncated: (payload[1] & FLAG_TRUNCATED) !== 0,
    mirrorGen: payload[1] >> 1,
    address: payload.toString("latin1", 3, 3 + len),
    start: 3 + len,
  };
}
