/** The reports plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const reportsConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** Most sections one definition's spec holds (more answers 400 too_many_sections). */
    maxSections: { type: "integer", minimum: 1, maximum: 200, default: 50 },
    /** Runs (with their rendered HTML, CSV and PDF) are deleted this many days after they finished. */
    runRetentionDays: { type: "integer", minimum: 1, maximum: 3650, default: 90 },
    /** Range of a run started on demand when the spec names no `range_days`. */
    defaultRangeDays: { type: "integer", minimum: 1, maximum: 366, default: 7 },
    /** Statement timeout of one section's queries (a section past it fails the run with section_timeout). */
    sectionTimeoutMs: { type: "integer", minimum: 1000, maximum: 3600000, default: 300000 },
  },
} as const;

export type ReportsConfig = ConfigOf<typeof reportsConfigSchema>;
export type ReportsContext = PluginContext<ReportsConfig>;

export const REPORTS_CONTEXT = pluginContextToken("reports");
