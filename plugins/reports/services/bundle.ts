/**
 * The configuration bundle's report tables. report_definitions: id, name, description, spec. report_schedules: id,
 * definition_id, frequency, at_hour, at_minute, day_of_week, day_of_month, enabled (the record carries no zone:
 * an imported schedule keeps the zone of the row it updates, else UTC; its next run is recomputed).
 */
import type { BundleExportContext, BundleImportContext, BundleImportResult, BundleTable, PluginContext } from "../../../core/index.js";
import { isUuid } from "../../../core/index.js";
import type { ReportsConfig } from "../context.js";
import { nextRun } from "../lib/schedule.js";
import { checkTiming } from "./ScheduleService.js";
import { SectionRegistry } from "./SectionRegistry.js";

type Ctx = PluginContext<ReportsConfig>;

const t = (ctx: PluginContext, name: string) => ctx.store.table(name);

// Exports read through the export's snapshot when the kernel gives one (a consistent bundle across tables).
async function exportDefinitions(ctx: PluginContext, exp?: BundleExportContext): Promise<unknown[]> {
  const { rows } = await (exp?.client ?? ctx.store).query(`SELECT id, name, description, spec FROM ${t(ctx, "definitions")} ORDER BY created_at, id`);
  return rows;
}

async function exportSchedules(ctx: PluginContext, exp?: BundleExportContext): Promise<unknown[]> {
  const { rows } = await (exp?.client ?? ctx.store).query(
    `SELECT id, definition_id, frequency, at_hour::int AS at_hour, at_minute::int AS at_minute, day_of_week::int AS day_of_week,
            day_of_month::int AS day_of_month, enabled
       FROM ${t(ctx, "schedules")} ORDER BY created_at, id`,
  );
  return rows;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

async function importDefinitions(ctx: PluginContext, rows: unknown[], imp: BundleImportContext): Promise<BundleImportResult> {
  const registry = (ctx as Ctx).get(SectionRegistry);
  const result: BundleImportResult = { created: 0, updated: 0, skipped: 0, deleted: 0 };
  const kept: string[] = [];
  for (const raw of rows) {
    const r = isObject(raw) ? raw : {};
    const name = typeof r.name === "string" ? r.name.trim() : "";
    let valid =
      isUuid(String(r.id ?? "")) &&
      name.length > 0 &&
      name.length <= 200 &&
      (r.description === null || r.description === undefined || typeof r.description === "string");
    if (valid) {
      try {
        registry.checkSize(r.spec);
        registry.check(r.spec);
      } catch {
        valid = false;
      }
    }
    if (!valid) {
      imp.note("skipped_invalid_value", 1, isObject(r.spec) ? "spec" : null);
      result.skipped++;
      continue;
    }
    const { rows: up } = await imp.client.query<{ inserted: boolean }>(
      `INSERT INTO ${t(ctx, "definitions")} (id, name, description, spec) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description, spec = EXCLUDED.spec, updated_at = now()
       RETURNING (xmax = 0) AS inserted`,
      [r.id, name, (r.description as string | null | undefined) ?? null, JSON.stringify(r.spec)],
    );
    if (up[0].inserted) result.created++;
    else result.updated++;
    kept.push(String(r.id));
  }
  if (imp.mode === "replace") {
    const { rowCount } = await imp.client.query(`DELETE FROM ${t(ctx, "definitions")} WHERE NOT (id = ANY ($1::uuid[]))`, [kept]);
    result.deleted = rowCount ?? 0;
  }
  return result;
}

async function importSchedules(ctx: PluginContext, rows: unknown[], imp: BundleImportContext): Promise<BundleImportResult> {
  const result: BundleImportResult = { created: 0, updated: 0, skipped: 0, deleted: 0 };
  const kept: string[] = [];
  const now = Date.now();
  for (const raw of rows) {
    const r = isObject(raw) ? raw : {};
    const int = (v: unknown, lo: number, hi: number) => typeof v === "number" && Number.isInteger(v) && v >= lo && v <= hi;
    const optInt = (v: unknown, lo: number, hi: number) => v === null || v === undefined || int(v, lo, hi);
    if (
      !isUuid(String(r.id ?? "")) ||
      !isUuid(String(r.definition_id ?? "")) ||
      !["daily", "weekly", "monthly"].includes(String(r.frequency)) ||
      !int(r.at_hour, 0, 23) ||
      !int(r.at_minute, 0, 59) ||
      !optInt(r.day_of_week, 0, 6) ||
      !optInt(r.day_of_month, 1, 31) ||
      (r.enabled !== undefined && typeof r.enabled !== "boolean")
    ) {
      imp.note("skipped_invalid_value");
      result.skipped++;
      continue;
    }
    const { rows: def } = await imp.client.query(`SELECT 1 FROM ${t(ctx, "definitions")} WHERE id = $1`, [r.definition_id]);
    if (!def.length) {
      imp.note("skipped_missing_reference", 1, "definition_id");
      result.skipped++;
      continue;
    }
    const { rows: existing } = await imp.client.query<{ timezone: string }>(`SELECT timezone FROM ${t(ctx, "schedules")} WHERE id = $1`, [r.id]);
    let timing;
    try {
      timing = checkTiming({
        frequency: String(r.frequency) as "daily" | "weekly" | "monthly",
        at_hour: r.at_hour as number,
        at_minute: r.at_minute as number,
        day_of_week: (r.day_of_week as number | null | undefined) ?? null,
        day_of_month: (r.day_of_month as number | null | undefined) ?? null,
        timezone: existing[0]?.timezone ?? "UTC",
      });
    } catch {
      imp.note("skipped_invalid_value");
      result.skipped++;
      continue;
    }
    const enabled = r.enabled !== false;
    const { rows: up } = await imp.client.query<{ inserted: boolean }>(
      `INSERT INTO ${t(ctx, "schedules")} (id, definition_id, frequency, at_hour, at_minute, day_of_week, day_of_month, enabled, timezone, next_run_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (id) DO UPDATE SET definition_id = EXCLUDED.definition_id, frequency = EXCLUDED.frequency, at_hour = EXCLUDED.at_hour,
         at_minute = EXCLUDED.at_minute, day_of_week = EXCLUDED.day_of_week, day_of_month = EXCLUDED.day_of_month, enabled = EXCLUDED.enabled,
         next_run_at = EXCLUDED.next_run_at, updated_at = now()
       RETURNING (xmax = 0) AS inserted`,
      [
        r.id,
        r.definition_id,
        timing.frequency,
        timing.at_hour,
        timing.at_minute,
        timing.day_of_week,
        timing.day_of_month,
        enabled,
        timing.timezone,
        enabled ? nextRun(timing, now) : null,
      ],
    );
    if (up[0].inserted) result.created++;
    else result.updated++;
    kept.push(String(r.id));
  }
  if (kept.length) imp.note("schedule_next_run_recomputed", kept.length, "next_run_at");
  if (imp.mode === "replace") {
    const { rowCount } = await imp.client.query(`DELETE FROM ${t(ctx, "schedules")} WHERE NOT (id = ANY ($1::uuid[]))`, [kept]);
    result.deleted = rowCount ?? 0;
  }
  return result;
}

export const REPORT_BUNDLE_TABLES: BundleTable[] = [
  { name: "report_definitions", export: exportDefinitions, import: importDefinitions },
  { name: "report_schedules", export: exportSchedules, import: importSchedules, after: ["report_definitions"] },
];
