/**
 * The flows ingest's threads and what they say to each other. A reader thread per socket (SO_REUSEPORT) receives
 * export datagrams and lays each out as a journal record (16-byte header, then the meta below, then the datagram);
 * it hands batches of them to the decoder threads over MessagePorts, spreading one exporter's data over all of them
 * (classify.ts says which datagrams every decoder must see). A decoder appends what it gets to its own journal,
 * reads the journal back, decodes and aggregates per minute; the main thread takes the aggregates every flushMs,
 * stores them with the journal ranges they cover in one transaction, and tells the decoder, which then commits.
 */
import type { MessagePort } from "node:worker_threads";
import type { FsyncPolicy, JournalPartState } from "../../../core/worker.js";
import type { TemplateJson, TemplateKey } from "../decode/types.js";
import type { ExporterDelta } from "../repositories/FlowRepository.js";

/** Meta flag: the datagram is read for its templates and options data only (another decoder has its records). */
export const FLAG_LEARN_ONLY = 1;

/** Bytes of the meta before the datagram: flags, the exporter address's length, the address (ASCII). */
export const metaBytes = (address: string): number => 2 + address.length;

/** Writes the meta at `at`; answers where the datagram goes. */
export function writeMeta(buf: Uint8Array, at: number, flags: number, address: string): number {
  buf[at] = flags;
  buf[at + 1] = address.length;
  for (let i = 0; i < address.length; i++) buf[at + 2 + i] = address.charCodeAt(i);
  return at + 2 + address.length;
}

/** Reads a record's meta: flags, exporter address, and the datagram (a view into the payload). */
export function readMeta(payload: Buffer): { flags: number; exporter: string; datagram: Buffer } | null {
  if (payload.length < 2 || payload.length < 2 + payload[1]) return null;
  const n = payload[1];
  return { flags: payload[0], exporter: payload.toString("latin1", 2, 2 + n), datagram: payload.subarray(2 + n) };
}

export interface ReaderData {
  /** This reader's number (which decoder it keeps to while the feed is on). */
  index: number;
  type: "udp4" | "udp6";
  host: string;
  port: number;
  ipv6Only: boolean;
  recvBufferSize: number;
  /** Bytes handed to the decoders and not yet journaled by them; past it datagrams are dropped (counted). */
  maxBacklogBytes: number;
  /** One port per decoder (transferred). */
  decoders: MessagePort[];
}

export type FromReader =
  | { t: "bound"; address: string; port: number; batched: boolean }
  | { t: "bind-error" | "error"; code?: string; message: string }
  | { t: "stats"; received: number; dropped: number }
  | { t: "closed" };

/** Reader → decoder (over the decoder's port): a batch of framed records. Decoder → reader: journaled bytes. */
export type ReaderBatch = { t: "batch"; buf: ArrayBuffer; bytes: number; count: number };
export type DecoderAck = { t: "ack"; bytes: number };

/** The main thread to a reader: the feed on or off, stop, or decoder `index` replaced (null: down, send it nothing). */
export type ToReader = { t: "close" } | { t: "feed"; on: boolean } | { t: "decoder"; index: number; port: MessagePort | null };

export interface JournalConfig {
  maxBytes: number;
  maxAgeMs: number;
  segmentBytes: number;
  fsync: FsyncPolicy;
  fsyncIntervalMs: number;
}

export interface DecoderData {
  index: number;
  /** Its own journal first, then journals of a larger worker count before (read, not appended to). */
  dirs: string[];
  journal: JournalConfig;
  maxKeys: number;
  pendingMaxMs: number;
  /** Canonical exporter address → sampling rate. */
  overrides: Record<string, number>;
  templates: TemplateJson[];
}

/** A journal's range one take covers (stored in the same transaction as its rollups). */
export interface TakenRange {
  partition: number;
  journalId: string;
  first: number;
  end: number;
}

export type JournalState = JournalPartState;

export interface DecoderCounters {
  /** Datagrams decoded (learn-only copies excluded), malformed ones, and ones dropped waiting for a template. */
  datagrams: number;
  malformed: number;
  dropped: number;
  records: number;
  droppedRecords: number;
  templates: number;
  /** Received datagrams the journal could not take (a failed write). */
  lost: number;
}

export type ToDecoder =
  | { t: "ports"; ports: MessagePort[] }
  | { t: "resume"; partition: number; ranges: [number, number][] }
  | { t: "templates"; list: TemplateJson[] }
  | { t: "take"; seq: number }
  | { t: "stored"; seq: number }
  | { t: "feed"; on: boolean }
  | { t: "drain" }
  | { t: "close" };

export type FromDecoder =
  | { t: "journals"; list: JournalState[] }
  | {
      t: "taken";
      seq: number;
      /** COPY text of the staging table (flowsCopy.ts), and the days (ms) its minutes fall in. */
      copy: string;
      rows: number;
      days: number[];
      exporters: ExporterDelta[];
      ranges: TakenRange[];
      learned: TemplateJson[];
      withdrawn: TemplateKey[];
    }
  | { t: "stats"; counters: DecoderCounters; journals: JournalState[] }
  | { t: "lookup"; exporter: string }
  | { t: "feed"; items: { exporter: string; received_at_ms: number; bytes: Uint8Array; records: import("../decode/types.js").FlowRecord[] }[] }
  | { t: "drop"; records: number; why: string }
  | { t: "warn"; message: string; fields?: object }
  | { t: "drained" }
  | { t: "closed" };
