import { definePlugin, sqlMigrationsFrom, type PluginContext } from "../../core/index.js";
import { reportsConfigSchema, type ReportsConfig } from "./context.js";
import { DefinitionController } from "./controllers/DefinitionController.js";
import { RunController } from "./controllers/RunController.js";
import { ScheduleController } from "./controllers/ScheduleController.js";
import { ReportRepository } from "./repositories/ReportRepository.js";
import { REPORT_BUNDLE_TABLES } from "./services/bundle.js";
import { DefinitionService } from "./services/DefinitionService.js";
import { RunService } from "./services/RunService.js";
import { ScheduleService } from "./services/ScheduleService.js";
import { SectionRegistry, validateSectionKind } from "./services/SectionRegistry.js";

export * from "./contract.js";
export type { ReportsConfig } from "./context.js";

export const reportsPlugin = definePlugin({
  id: "reports",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Report definitions of sections (availability, top interfaces, alerts, events, flows, inventory and plugin-added kinds), schedules in a time zone, runs rendered to HTML, CSV and PDF, delivered by email",
  dependsOn: { inventory: "^0.1.0", polling: "^0.1.0", alerts: "^0.1.0", events: "^0.1.0", flows: "^0.1.0", notifications: "^0.1.0" },
  controllers: [DefinitionController, ScheduleController, RunController],
  providers: [ReportRepository, SectionRegistry, DefinitionService, ScheduleService, RunService],
  extensionPoints: [{ name: "sections", validate: validateSectionKind, description: "report section kinds (ReportSectionKind in the contract)" }],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  jobs: [
    {
      name: "tick",
      every: "15 seconds",
      handler: async (_job, ctx: PluginContext<ReportsConfig>) => {
        for (const id of await ctx.get(ScheduleService).tick()) await ctx.jobs.now("render", { run_id: id });
      },
    },
    {
      name: "render",
      concurrency: 2,
      lockLifetimeMs: 3600000,
      handler: async (job, ctx: PluginContext<ReportsConfig>) => {
        const id = (job.data as { run_id?: unknown } | null)?.run_id;
        if (typeof id === "string") await ctx.get(RunService).execute(id);
      },
    },
    {
      name: "prune",
      every: "1 hour",
      handler: async (_job, ctx: PluginContext<ReportsConfig>) => {
        const n = await ctx.get(RunService).prune();
        if (n) ctx.log.info("old report runs pruned", { count: n, keepDays: ctx.config.runRetentionDays });
      },
    },
  ],
  channels: [{ name: "runs", permission: "read", scoped: true, description: "run progress (event reports.progress: run_id, status, done, total, section)" }],
  bundle: { tables: REPORT_BUNDLE_TABLES },
  config: reportsConfigSchema,
  // The section registry is built (and every kind's params schema compiled) at start, so a bad kind stops the boot.
  start: (ctx) => {
    ctx.get(SectionRegistry).list();
  },
});
