import { definePlugin, sqlMigrationsFrom } from "../../core/index.js";
import { analysisConfigSchema } from "./context.js";
import { AnalysisController } from "./controllers/AnalysisController.js";
import { ScheduleController } from "./controllers/ScheduleController.js";
import { validateTool } from "./lib/tools/index.js";
import { AnalysisRepository } from "./repositories/AnalysisRepository.js";
import { AnalysisService } from "./services/AnalysisService.js";
import { ScheduleService } from "./services/ScheduleService.js";
import { ScopeTargets } from "./services/ScopeTargets.js";
import { ToolRegistry } from "./services/ToolRegistry.js";

export type { AnalysisConfig } from "./context.js";

/** Agenda's lock on one run; a run still "running" 5 minutes past it was interrupted. */
const RUN_LOCK_MINUTES = 30;

export const analysisPlugin = definePlugin({
  id: "analysis",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Analysis tools over stored data (capacity forecast, error hot spots, flapping, silent nodes, subnet utilisation), run on demand or on schedules, with saved findings",
  // Reads inventory's directory and folder ranges, polling's samples and interfaces, alerts' history and events' events (published views).
  dependsOn: { inventory: "^0.1.0", polling: "^0.1.0", alerts: "^0.1.0", events: "^0.1.0" },
  controllers: [AnalysisController, ScheduleController],
  providers: [AnalysisRepository, ToolRegistry, ScopeTargets, AnalysisService, ScheduleService],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  extensionPoints: [{ name: "tools", validate: validateTool, description: "analysis tools: {name, title, description, paramsSchema, run(run)}" }],
  jobs: [
    {
      name: "run",
      concurrency: 2,
      lockLifetimeMs: RUN_LOCK_MINUTES * 60 * 1000,
      handler: async ({ data }, ctx) => {
        const jobId = (data as { jobId?: unknown } | null)?.jobId;
        if (typeof jobId === "string") await ctx.get(AnalysisService).execute(jobId);
      },
    },
    {
      name: "tick",
      every: "1 minute",
      handler: async (_job, ctx) => {
        const stale = await ctx.get(AnalysisRepository).failStale(RUN_LOCK_MINUTES + 5);
        if (stale) ctx.log.warn("interrupted analysis runs marked failed", { count: stale });
        await ctx.get(ScheduleService).tick();
      },
    },
    {
      name: "prune",
      every: "1 hour",
      handler: async (_job, ctx) => {
        const config = ctx.config as { retentionDays: number };
        const pruned = await ctx.get(AnalysisRepository).prune(config.retentionDays);
        if (pruned) ctx.log.info("old analysis jobs pruned", { count: pruned });
      },
    },
  ],
  bundle: {
    tables: [
      {
        name: "analysis_schedules",
        after: ["node_groups", "nodes"],
        export: (ctx) => ctx.get(ScheduleService).bundle(),
        import: (ctx, rows, imp) => ctx.get(ScheduleService).importRows(rows, imp),
      },
    ],
  },
  config: analysisConfigSchema,
});
