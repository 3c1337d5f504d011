import { ipv4Number } from "../../../core/worker.js";
import { ipv4Text } from "../decode/ip.js";
import type { FlowRecord } from "../decode/types.js";
import type { ExporterDelta } from "../repositories/FlowRepository.js";
import type { RollupRow } from "../repositories/rollupCopy.js";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The node an exporter stands for (inventory's NodeAddressBook), or null. */
export interface ExporterNode {
  id: string;
  folder_path: string[];
}

/** Int32s per row in `keys`: the hash, then the key's fields as numbers. */
const STRIDE = 10;
const K_HASH = 0;
const K_MINUTE = 1;
const K_EXPORTER = 2;
const K_SRC = 3;
const K_DST = 4;
const K_PROTO_SPORT = 5;
const K_DPORT = 6;
const K_SRC_AS = 7;
const K_DST_AS = 8;
/** Bit 0: the source is an interned text id (not IPv4); bit 1: the destination. */
const K_KINDS = 9;

/**
 * Minute aggregates in memory: per (minute of the flow's end, exporter, src, dst, proto, ports, AS numbers) the bytes,
 * packets and flows (one per record), until take() hands them to the store, which adds them to the rollups. At most
 * `maxKeys` keys are held between two takes; records that would need another are refused (counted by the caller).
 *
 * The collector calls add() for every record (over a million a second), so a key is numbers only: IPv4 addresses as
 * their 32 bits (the decoder passes them), any other address and the exporter as a small id from an intern table. The
 * keys sit in one Int32Array (STRIDE per row) and the sums in a Float64Array, found through an open-addressing table
 * of row indices: a lookup touches a few cache lines and no object. Row objects (with the texts and the node) are made
 * when a key is first seen; take() copies the sums into them.
 */
export class MinuteAggregator {
  private rows: RollupRow[] = [];
  private keys = new Int32Array(1024 * STRIDE);
  /** Per row: bytes, packets, flows. */
  private sums = new Float64Array(1024 * 3);
  /** Open addressing: row index + 1, 0 = empty; its size a power of two, at least twice the rows. */
  private table = new Int32Array(2048);
  private exporters = new Map<string, ExporterDelta>();
  /** Texts that are keys by id: exporters, and addresses that are not IPv4. Cleared by take(). */
  private ids = new Map<string, number>();
  /** The last exporter's text, id, hash and totals: a datagram's records share them. */
  private lastExporter: string | null = null;
  private lastExporterId = 0;
  private lastExporterHash = 0;
  private lastDelta: ExporterDelta | null = null;

  constructor(private readonly maxKeys: number) {}

  get size(): number {
    return this.rows.length;
  }

  /**
   * Adds one record; false when it needed a new key past maxKeys (dropped) or lacks an address. `src4` / `dst4` are its
   * IPv4 addresses as unsigned 32-bit numbers when the caller has them (a RecordSink does; the record's texts may then
   * be ""), -1 otherwise (read from the record's text).
   */
  add(r: FlowRecord, node: ExporterNode | null, nowMs: number, samplingSource: string, src4 = -1, dst4 = -1): boolean {
    if (src4 < 0) {
      if (!r.src) return false; // no conversation without both addresses
      src4 = ipv4Number(r.src);
    }
    if (dst4 < 0) {
      if (!r.dst) return false;
      dst4 = ipv4Number(r.dst);
    }
    // The exporter's clock files the flow; one off by more than a day (or without a time) is filed at arrival.
    const end = r.last_ms !== null && Math.abs(r.last_ms - nowMs) < DAY_MS ? r.last_ms : nowMs;
    const minute = Math.floor(end / MINUTE_MS);
    if (r.exporter !== this.lastExporter) {
      this.lastExporter = r.exporter;
      this.lastExporterId = this.id(r.exporter);
      this.lastExporterHash = mix(SEED, this.lastExporterId);
      this.lastDelta = null;
    }
    const src = src4 < 0 ? this.id(r.src) : src4 | 0;
    const dst = dst4 < 0 ? this.id(r.dst) : dst4 | 0;
    const kinds = (src4 < 0 ? 1 : 0) | (dst4 < 0 ? 2 : 0);
    const protoSport = (r.proto << 16) | r.src_port;
    const srcAs = r.src_as | 0;
    const dstAs = r.dst_as | 0;
    let h = mix(this.lastExporterHash, minute | 0);
    h = mix(h, src);
    h = mix(h, dst);
    h = mix(h, protoSport);
    h = mix(h, r.dst_port | (kinds << 16));
    h = mix(h, srcAs);
    h = mix(h, dstAs);
    const keys = this.keys;
    const table = this.table;
    const mask = table.length - 1;
    let i = h & mask;
    let row = -1;
    for (let slot = table[i]; slot !== 0; slot = table[(i = (i + 1) & mask)]) {
      const k = (slot - 1) * STRIDE;
      if (
        keys[k + K_HASH] === h &&
        keys[k + K_MINUTE] === minute &&
        keys[k + K_SRC] === src &&
        keys[k + K_DST] === dst &&
        keys[k + K_PROTO_SPORT] === protoSport &&
        keys[k + K_DPORT] === r.dst_port &&
        keys[k + K_EXPORTER] === this.lastExporterId &&
        keys[k + K_SRC_AS] === srcAs &&
        keys[k + K_DST_AS] === dstAs &&
        keys[k + K_KINDS] === kinds
      ) {
        row = slot - 1;
        break;
      }
    }
    if (row < 0) {
      if (this.rows.length >= this.maxKeys) return false;
      row = this.insert(r, node, minute, i, src4, dst4);
      const k = row * STRIDE;
      const ks = this.keys;
      ks[k + K_HASH] = h;
      ks[k + K_MINUTE] = minute;
      ks[k + K_EXPORTER] = this.lastExporterId;
      ks[k + K_SRC] = src;
      ks[k + K_DST] = dst;
      ks[k + K_PROTO_SPORT] = protoSport;
      ks[k + K_DPORT] = r.dst_port;
      ks[k + K_SRC_AS] = srcAs;
      ks[k + K_DST_AS] = dstAs;
      ks[k + K_KINDS] = kinds;
      if (this.rows.length * 2 > this.table.length) this.rehash(this.table.length * 2);
    }
    const sums = this.sums;
    sums[row * 3] += r.bytes;
    sums[row * 3 + 1] += r.packets;
    sums[row * 3 + 2] += 1;
    let e = this.lastDelta;
    if (e === null) {
      e = this.exporters.get(r.exporter) ?? null;
      if (e === null) {
        e = { address: r.exporter, version: r.version, records: 0, bytes: 0, packets: 0, sampling: 1, sampling_source: "none" };
        this.exporters.set(r.exporter, e);
      }
      this.lastDelta = e;
    }
    e.version = r.version;
    e.records += 1;
    e.bytes += r.bytes;
    e.packets += r.packets;
    e.sampling = r.sampling;
    e.sampling_source = samplingSource;
    return true;
  }

  /** Everything held, and a fresh start. */
  take(): { rollups: RollupRow[]; exporters: ExporterDelta[] } {
    const rollups = this.rows;
    const sums = this.sums;
    for (let k = 0; k < rollups.length; k++) {
      const row = rollups[k];
      row.bytes = sums[k * 3];
      row.packets = sums[k * 3 + 1];
      row.flows = sums[k * 3 + 2];
    }
    const out = { rollups, exporters: [...this.exporters.values()] };
    this.rows = [];
    this.sums.fill(0, 0, rollups.length * 3);
    this.table.fill(0);
    this.exporters = new Map();
    this.ids = new Map();
    this.lastExporter = null;
    this.lastDelta = null;
    return out;
  }

  /** The id of a text key (an exporter, an address that is not IPv4). */
  private id(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) this.ids.set(text, (id = this.ids.size));
    return id;
  }

  /** A new row for the key whose probe ended at the empty slot `at`; answers its index (keys written by the caller). */
  private insert(r: FlowRecord, node: ExporterNode | null, minute: number, at: number, src4: number, dst4: number): number {
    const n = this.rows.push({
      at_ms: minute * MINUTE_MS,
      exporter: r.exporter,
      node_id: node?.id ?? null,
      folder_path: node?.folder_path ?? [],
      src: src4 >= 0 ? ipv4Text(src4) : r.src,
      dst: dst4 >= 0 ? ipv4Text(dst4) : r.dst,
      proto: r.proto,
      src_port: r.src_port,
      dst_port: r.dst_port,
      src_as: r.src_as,
      dst_as: r.dst_as,
      bytes: 0,
      packets: 0,
      flows: 0,
    });
    if (n * STRIDE > this.keys.length) {
      const keys = new Int32Array(this.keys.length * 2);
      keys.set(this.keys);
      this.keys = keys;
      const sums = new Float64Array(this.sums.length * 2);
      sums.set(this.sums);
      this.sums = sums;
    }
    this.table[at] = n;
    return n - 1;
  }

  private rehash(size: number): void {
    const table = new Int32Array(size);
    const mask = size - 1;
    for (let k = 0; k < this.rows.length; k++) {
      let i = this.keys[k * STRIDE + K_HASH] & mask;
      while (table[i] !== 0) i = (i + 1) & mask;
      table[i] = k + 1;
    }
    this.table = table;
  }
}

const SEED = 0x9e3779b9 | 0;

/** One step of a 32-bit multiplicative hash (murmur3's mix). */
function mix(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}
