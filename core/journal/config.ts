/**
 * The ingest journal's settings as a plugin's configuration schema declares them (`pluginConfig.<plugin>.ingest.journal`),
 * and the per-worker JournalOptions they make: each worker's journal holds its share of maxMB.
 */
import type { FsyncPolicy } from "./Journal.js";

export const journalConfigSchema = {
  type: "object",
  additionalProperties: false,
  default: {},
  properties: {
    /** The most the journal holds on disk; past it the oldest segments go, stored or not (counted as dropped). */
    maxMB: { type: "integer", minimum: 16, maximum: 1048576, default: 2048 },
    /** A segment whose newest message is older than this goes, stored or not (counted as dropped). */
    maxAgeHours: { type: "number", minimum: 0.01, maximum: 8760, default: 12 },
    segmentMB: { type: "integer", minimum: 1, maximum: 1024, default: 64 },
    /** always: every write reaches the disk before the next; interval: every fsyncIntervalMs; never: the kernel decides (docs/operations.md says what each can lose). */
    fsync: { enum: ["always", "interval", "never"], default: "interval" },
    fsyncIntervalMs: { type: "integer", minimum: 10, maximum: 60000, default: 1000 },
  },
} as const;

export interface JournalSettings {
  maxMB: number;
  maxAgeHours: number;
  segmentMB: number;
  fsync: FsyncPolicy;
  fsyncIntervalMs: number;
}

/** One worker's journal options when `workers` share the settings' maxMB. */
export function workerJournalOptions(j: JournalSettings, workers: number) {
  return {
    maxBytes: Math.floor((j.maxMB * 1024 * 1024) / Math.max(1, workers)),
    maxAgeMs: j.maxAgeHours * 3_600_000,
    segmentBytes: j.segmentMB * 1024 * 1024,
    fsync: j.fsync,
    fsyncIntervalMs: j.fsyncIntervalMs,
  };
}
