import { Inject, Injectable } from "@tsed/di";
import {
  assertInScope,
  badRequest,
  isTimeZone,
  isUuid,
  nextRun,
  notFound,
  type BundleImportContext,
  type BundleImportResult,
  type Frequency,
  type Queryable,
  type Scope,
  scopeFolders,
} from "../../../core/index.js";
import { ANALYSIS_CONTEXT, type AnalysisContext } from "../context.js";
import { FREQUENCIES, SCOPE_KINDS, type AnalysisScheduleBody, type AnalysisScheduleView, type ScopeKind } from "../models/AnalysisModels.js";
import { AnalysisRepository, type ScheduleRow, type ScheduleWrite } from "../repositories/AnalysisRepository.js";
import { ScopeTargets } from "./ScopeTargets.js";
import { ToolRegistry } from "./ToolRegistry.js";

/** The bundle's analysis_schedule record (spec: Configuration bundle). */
export type BundleSchedule = { id: string } & Omit<ScheduleWrite, "timezone" | "owner_folders" | "visible_folders" | "next_run_at">;

const int = (v: unknown, min: number, max: number) => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;

/** Schedules of analysis runs: CRUD, the next run (in the schedule's zone), the tick that starts due runs, and the bundle. */
@Injectable()
export class ScheduleService {
  @Inject(ANALYSIS_CONTEXT)
  private ctx: AnalysisContext;

  @Inject(AnalysisRepository)
  private repo: AnalysisRepository;

  @Inject(ToolRegistry)
  private tools: ToolRegistry;

  @Inject(ScopeTargets)
  private targets: ScopeTargets;

  async list(scope: Scope): Promise<AnalysisScheduleView[]> {
    return (await this.repo.schedules(scopeFolders(scope), this.ctx.config.maxSchedules)).map(view);
  }

  async get(id: string, scope: Scope): Promise<AnalysisScheduleView> {
    return view(await this.visible(id, scope));
  }

  async create(body: AnalysisScheduleBody, scope: Scope): Promise<string> {
    if ((await this.repo.countSchedules()) >= this.ctx.config.maxSchedules) {
      throw badRequest("too_many_schedules", `This deployment keeps at most ${this.ctx.config.maxSchedules} analysis schedules.`);
    }
    const write = await this.fromBody(body, null, scope);
    const id = await this.repo.insertSchedule(write);
    await this.wake(write.next_run_at);
    return id;
  }

  async update(id: string, body: AnalysisScheduleBody, scope: Scope): Promise<void> {
    const current = await this.visible(id, scope);
    const write = await this.fromBody(body, current, scope);
    if (!(await this.repo.updateSchedule(current.id, write))) throw notFound("No analysis schedule with that id.");
    await this.wake(write.next_run_at);
  }

  async remove(id: string, scope: Scope): Promise<void> {
    const current = await this.visible(id, scope);
    if (!(await this.repo.deleteSchedule(current.id))) throw notFound("No analysis schedule with that id.");
  }

  /** The analysis.tick job: a run for each due schedule, and each one's next run. */
  async tick(): Promise<number> {
    const jobs = await this.repo.takeDue((s) => nextRun(timing(s), new Date()).toISOString());
    for (const jobId of jobs) await this.ctx.jobs.now("run", { jobId });
    return jobs.length;
  }

  /** Asks Agenda for a tick at the next run, so a schedule fires on its minute (the minutely tick is the backstop). */
  private async wake(at: string | null): Promise<void> {
    if (at !== null) await this.ctx.jobs.schedule(new Date(at), "tick", {});
  }

  private async visible(id: string, scope: Scope): Promise<ScheduleRow> {
    const row = isUuid(id) ? await this.repo.schedule(id.toLowerCase()) : null;
    assertInScope(scope, row?.visible_folders, "No analysis schedule with that id.");
    return row!;
  }

  private async fromBody(body: AnalysisScheduleBody, current: ScheduleRow | null, scope: Scope): Promise<ScheduleWrite> {
    const { tool, params } = this.tools.check(body.tool, body.params);
    const days = checkTiming(body.frequency, body.day_of_week ?? null, body.day_of_month ?? null);
    const timezone = body.timezone ?? current?.timezone ?? "UTC";
    if (!isTimeZone(timezone)) throw badRequest("invalid_timezone", "timezone must be an IANA zone name (for example Europe/Berlin).");
    const target = await this.targets.resolve(body.scope_kind, body.scope_id, scope);
    const enabled = body.enabled ?? true;
    const write: ScheduleWrite = {
      tool: tool.name,
      scope_kind: target.scope_kind,
      scope_label: body.scope_label ?? target.label,
      scope_id: target.scope_id,
      params,
      frequency: body.frequency,
      at_hour: body.at_hour,
      at_minute: body.at_minute,
      ...days,
      enabled,
      timezone,
      owner_folders: target.run_folders,
      visible_folders: target.visible_folders,
      next_run_at: null,
    };
    write.next_run_at = enabled ? nextRun(timing(write), new Date()).toISOString() : null;
    return write;
  }

  // ---- configuration bundle ----

  async bundle(): Promise<BundleSchedule[]> {
    return (await this.repo.allSchedules()).map((s) => ({
      id: s.id,
      tool: s.tool,
      scope_kind: s.scope_kind,
      scope_label: s.scope_label,
      scope_id: s.scope_id,
      params: s.params,
      frequency: s.frequency,
      at_hour: s.at_hour,
      at_minute: s.at_minute,
      day_of_week: s.day_of_week,
      day_of_month: s.day_of_month,
      enabled: s.enabled,
    }));
  }

  /**
   * Reads analysis_schedules rows: an unknown tool, bad params or a bad field → skipped_invalid_value (the field); a
   * scope_id whose folder or node is gone → skipped_missing_reference (scope_id), never widened to all; each imported
   * row gets its next run recomputed (schedule_next_run_recomputed). Imported schedules are unrestricted (owner: all).
   */
  async importRows(rows: unknown[], imp: BundleImportContext): Promise<BundleImportResult> {
    const result: BundleImportResult = { created: 0, updated: 0, skipped: 0, deleted: 0 };
    const db = imp.client;
    const existing = new Set(await this.repo.scheduleIds(db));
    const kept: string[] = [];
    for (const raw of rows) {
      const r = (raw ?? {}) as Partial<BundleSchedule>;
      const bad = this.badField(r);
      if (bad) {
        imp.note("skipped_invalid_value", 1, bad);
        result.skipped++;
        continue;
      }
      const target = await this.importTarget(r.scope_kind as ScopeKind, r.scope_id ?? null, db);
      if (!target) {
        imp.note("skipped_missing_reference", 1, "scope_id");
        result.skipped++;
        continue;
      }
      const id = r.id!.toLowerCase();
      const current = existing.has(id) ? await this.repo.schedule(id, db) : null;
      const write: ScheduleWrite = {
        tool: r.tool!,
        scope_kind: r.scope_kind!,
        scope_label: typeof r.scope_label === "string" ? r.scope_label.slice(0, 200) : target.label,
        scope_id: target.id,
        params: this.tools.check(r.tool!, r.params ?? {}).params,
        frequency: r.frequency!,
        at_hour: r.at_hour!,
        at_minute: r.at_minute!,
        day_of_week: r.frequency === "weekly" ? r.day_of_week! : null,
        day_of_month: r.frequency === "monthly" ? r.day_of_month! : null,
        enabled: r.enabled ?? true,
        timezone: current?.timezone ?? "UTC",
        owner_folders: null,
        visible_folders: target.visible_folders,
        next_run_at: null,
      };
      write.next_run_at = write.enabled ? nextRun(timing(write), new Date()).toISOString() : null;
      if (current) {
        await this.repo.updateSchedule(id, write, db);
        result.updated++;
      } else {
        await this.repo.insertSchedule(write, id, db);
        existing.add(id);
        result.created++;
      }
      kept.push(id);
      imp.note("schedule_next_run_recomputed");
    }
    if (imp.mode === "replace") result.deleted = await this.repo.deleteSchedulesExcept(kept, db);
    // Imported schedules fire through the minutely analysis.tick (their next_run_at is in the rows).
    return result;
  }

  /** The first field of a bundle row that is not acceptable, or null. */
  private badField(r: Partial<BundleSchedule>): string | null {
    if (typeof r.id !== "string" || !isUuid(r.id)) return "id";
    if (typeof r.tool !== "string" || !this.tools.get(r.tool)) return "tool";
    if (!SCOPE_KINDS.includes(r.scope_kind as ScopeKind)) return "scope_kind";
    if (r.scope_kind === "all" ? r.scope_id != null : typeof r.scope_id !== "string" || !isUuid(r.scope_id)) return "scope_id";
    if (r.params !== undefined && !this.tools.fits(r.tool, r.params)) return "params";
    if (!FREQUENCIES.includes(r.frequency as Frequency)) return "frequency";
    if (!int(r.at_hour, 0, 23)) return "at_hour";
    if (!int(r.at_minute, 0, 59)) return "at_minute";
    if (r.frequency === "weekly" ? !int(r.day_of_week, 0, 6) : r.day_of_week != null && !int(r.day_of_week, 0, 6)) return "day_of_week";
    if (r.frequency === "monthly" ? !int(r.day_of_month, 1, 31) : r.day_of_month != null && !int(r.day_of_month, 1, 31)) return "day_of_month";
    if (r.enabled !== undefined && typeof r.enabled !== "boolean") return "enabled";
    if (r.scope_label !== undefined && typeof r.scope_label !== "string") return "scope_label";
    return null;
  }

  private async importTarget(kind: ScopeKind, id: string | null, db: Queryable) {
    if (kind === "all") return { id: null, label: "All", visible_folders: [] as string[] };
    const t = kind === "folder" ? await this.repo.folder(id!.toLowerCase(), db) : await this.repo.node(id!.toLowerCase(), db);
    return t ? { id: t.id, label: t.name, visible_folders: t.folder_path } : null;
  }
}

/** The day fields a schema cannot relate to the frequency: weekly needs day_of_week, monthly day_of_month; another frequency ignores them. */
function checkTiming(frequency: string, dayOfWeek: number | null, dayOfMonth: number | null): { day_of_week: number | null; day_of_month: number | null } {
  if (frequency === "weekly" && dayOfWeek === null) throw badRequest("invalid_schedule", "A weekly schedule needs day_of_week (0 = Sunday … 6).");
  if (frequency === "monthly" && dayOfMonth === null) throw badRequest("invalid_schedule", "A monthly schedule needs day_of_month (1 to 31).");
  return { day_of_week: frequency === "weekly" ? dayOfWeek : null, day_of_month: frequency === "monthly" ? dayOfMonth : null };
}

function timing(s: Pick<ScheduleWrite, "frequency" | "at_hour" | "at_minute" | "day_of_week" | "day_of_month" | "timezone">) {
  return {
    frequency: s.frequency as Frequency,
    at_hour: s.at_hour,
    at_minute: s.at_minute,
    day_of_week: s.day_of_week,
    day_of_month: s.day_of_month,
    timezone: s.timezone,
  };
}

function view(s: ScheduleRow): AnalysisScheduleView {
  const { owner_folders: _o, visible_folders: _v, ...rest } = s;
  return rest;
}
