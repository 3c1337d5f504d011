import type { FlowRecord } from "../decode/types.js";
import type { ExporterDelta, RollupRow } from "../repositories/FlowRepository.js";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The node an exporter stands for (inventory's NodeAddressBook), or null. */
export interface ExporterNode {
  id: string;
  folder_path: string[];
}

/**
 * Minute aggregates in memory: per (minute of the flow's end, exporter, src, dst, proto, ports, AS numbers) the bytes,
 * packets and flows (one per record), until take() hands them to the store, which adds them to the rollups. At most
 * `maxKeys` keys are held between two takes; records that would need another are refused (counted by the caller).
 */
export class MinuteAggregator {
  private buckets = new Map<string, RollupRow>();
  private exporters = new Map<string, ExporterDelta>();

  constructor(private readonly maxKeys: number) {}

  get size(): number {
    return this.buckets.size;
  }

  /** False when the record needed a new key past maxKeys (dropped). */
  add(r: FlowRecord, node: ExporterNode | null, nowMs: number, samplingSource: string): boolean {
    if (!r.src || !r.dst) return false; // no conversation without both addresses
    // The exporter's clock files the flow; one off by more than a day (or without a time) is filed at arrival.
    const end = r.last_ms !== null && Math.abs(r.last_ms - nowMs) < DAY_MS ? r.last_ms : nowMs;
    const at = Math.floor(end / MINUTE_MS) * MINUTE_MS;
    const key = `${at}|${r.exporter}|${r.src}|${r.dst}|${r.proto}|${r.src_port}|${r.dst_port}|${r.src_as}|${r.dst_as}`;
    let b: RollupRow | undefined = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= this.maxKeys) return false;
      b = {
        at_ms: at,
        exporter: r.exporter,
        node_id: node?.id ?? null,
        folder_path: node?.folder_path ?? [],
        src: r.src,
        dst: r.dst,
        proto: r.proto,
        src_port: r.src_port,
        dst_port: r.dst_port,
        src_as: r.src_as,
        dst_as: r.dst_as,
        bytes: 0,
        packets: 0,
        flows: 0,
      };
      this.buckets.set(key, b);
    }
    b.bytes += r.bytes;
    b.packets += r.packets;
    b.flows += 1;
    let e = this.exporters.get(r.exporter);
    if (!e)
      this.exporters.set(r.exporter, (e = { address: r.exporter, version: r.version, records: 0, bytes: 0, packets: 0, sampling: 1, sampling_source: "none" }));
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
    const out = { rollups: [...this.buckets.values()], exporters: [...this.exporters.values()] };
    this.buckets = new Map();
    this.exporters = new Map();
    return out;
  }
}
