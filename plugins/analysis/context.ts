/** The analysis plugin's configuration schema (the one source of its config type) and its context token. */
import { pluginContextToken, type ConfigOf, type PluginContext } from "../../core/index.js";

export const analysisConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** Findings (and finished jobs) older than this are deleted by the hourly analysis.prune job. */
    retentionDays: { type: "integer", minimum: 1, maximum: 3650, default: 90 },
    /** Most findings one run saves; a run that finds more keeps the most severe ones and says so (counts.truncated). */
    maxFindingsPerRun: { type: "integer", minimum: 1, maximum: 1000000, default: 10000 },
    /** Most schedules this deployment keeps (a create past it answers 400 too_many_schedules). */
    maxSchedules: { type: "integer", minimum: 1, maximum: 100000, default: 1000 },
  },
} as const;

export type AnalysisConfig = ConfigOf<typeof analysisConfigSchema>;
export type AnalysisContext = PluginContext<AnalysisConfig>;

export const ANALYSIS_CONTEXT = pluginContextToken("analysis");
