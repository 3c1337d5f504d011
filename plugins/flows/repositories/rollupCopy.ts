/**
 * The minute rollups as COPY text for the staging table FlowRepository.storeTaken() merges into rollup_1m. Built by
 * the ingest's decoder threads (no store here: this module loads in a worker). Addresses are IP literals and the
 * rest numbers, so only the exporter's text is escaped.
 */
import { copyText } from "../../../core/worker.js";

/** One minute-rollup row to add (the aggregator's output). */
export interface RollupRow {
  at_ms: number;
  exporter: string;
  node_id: string | null;
  folder_path: readonly string[];
  src: string;
  dst: string;
  proto: number;
  src_port: number;
  dst_port: number;
  src_as: number;
  dst_as: number;
  bytes: number;
  packets: number;
  flows: number;
}

export const STAGING_COLUMNS = ["ms", "exporter", "src", "dst", "proto", "src_port", "dst_port", "src_as", "dst_as", "bytes", "packets", "flows"] as const;

export function rollupCopyLines(rows: readonly RollupRow[]): string {
  let out = "";
  for (const r of rows)
    out += `${r.at_ms}\t${copyText(r.exporter)}\t${r.src}\t${r.dst}\t${r.proto}\t${r.src_port}\t${r.dst_port}\t${r.src_as}\t${r.dst_as}\t${r.bytes}\t${r.packets}\t${r.flows}\n`;
  return out;
}
