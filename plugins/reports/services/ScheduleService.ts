/**
 * Report schedules: daily, weekly or monthly at a wall-clock time of an IANA zone. The `tick` job (every 15 s) takes
 * the due schedules (locked, so one replica runs each), queues a run for each and moves next_run_at on.
 */
import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isUuid, notFound, page, type Scope, scopeFolders } from "../../../core/index.js";
import { REPORTS_CONTEXT, type ReportsContext } from "../context.js";
import { isTimeZone, nextRun, scheduledRange, type ScheduleTiming } from "../lib/schedule.js";
import type { ReportScheduleBody, ReportScheduleView } from "../models/ReportModels.js";
import { ReportRepository, type ScheduleRow, type ScheduleWrite } from "../repositories/ReportRepository.js";

const noSchedule = () => notFound("No such report schedule.");

export function scheduleView(r: ScheduleRow): ReportScheduleView {
  const { scope_folders: _s, ...view } = r;
  return view;
}

/** Checks the timing fields a schema cannot relate (weekly needs day_of_week, monthly day_of_month; the zone exists). */
export function checkTiming(t: Partial<ScheduleTiming> & { frequency: string }): ScheduleTiming {
  const zone = t.timezone ?? "UTC";
  if (!isTimeZone(zone)) throw badRequest("invalid_timezone", "timezone must be an IANA time zone name (Europe/Berlin, UTC).");
  const weekly = t.frequency === "weekly";
  const monthly = t.frequency === "monthly";
  if (weekly && (t.day_of_week === null || t.day_of_week === undefined))
    throw badRequest("invalid_schedule", "A weekly schedule needs day_of_week (0 = Sunday … 6).");
  if (monthly && (t.day_of_month === null || t.day_of_month === undefined))
    throw badRequest("invalid_schedule", "A monthly schedule needs day_of_month (1 to 31).");
  return {
    frequency: t.frequency as ScheduleTiming["frequency"],
    at_hour: t.at_hour ?? 0,
    at_minute: t.at_minute ?? 0,
    day_of_week: weekly ? (t.day_of_week ?? null) : null,
    day_of_month: monthly ? (t.day_of_month ?? null) : null,
    timezone: zone,
  };
}

@Injectable()
export class ScheduleService {
  @Inject(REPORTS_CONTEXT)
  private ctx: ReportsContext;

  @Inject(ReportRepository)
  private repo: ReportRepository;

  private async write(body: ReportScheduleBody): Promise<ScheduleWrite> {
    const timing = checkTiming(body);
    const channels = body.channel_ids ?? [];
    if (!channels.every(isUuid)) throw badRequest("validation_failed", "channel_ids must be channel ids (uuid).");
    if (!(await this.repo.definition(body.definition_id))) throw badRequest("unknown_reference", "definition_id names no report definition.");
    const enabled = body.enabled ?? true;
    return { ...timing, definition_id: body.definition_id, enabled, channel_ids: channels, next_run_at: enabled ? nextRun(timing, Date.now()) : null };
  }

  async create(body: ReportScheduleBody, scope: Scope): Promise<string> {
    return this.repo.insertSchedule(await this.write(body), scopeFolders(scope));
  }

  async list(limit: number, cursor: string | undefined, scope: Scope): Promise<{ rows: ReportScheduleView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, (p) => isUuid(p[1]) && !Number.isNaN(Date.parse(p[0]))) as [string, string]) : null;
    const p = page(await this.repo.schedules(limit, after, scopeFolders(scope)), limit, (r) => [r.created_at, r.id]);
    return { rows: p.rows.map(scheduleView), next: p.next };
  }

  /** A schedule the caller may see: a scoped caller only those made for folders all within its own (else 404). */
  private async visible(id: string, scope: Scope): Promise<ScheduleRow> {
    const row = await this.repo.schedule(id);
    if (!row || (scope !== "All" && (row.scope_folders === null || !row.scope_folders.every((f) => scope.folders.includes(f))))) throw noSchedule();
    return row;
  }

  async get(id: string, scope: Scope): Promise<ReportScheduleView> {
    return scheduleView(await this.visible(id, scope));
  }

  async replace(id: string, body: ReportScheduleBody, scope: Scope): Promise<void> {
    await this.visible(id, scope);
    if (!(await this.repo.updateSchedule(id, await this.write(body)))) throw noSchedule();
  }

  async remove(id: string, scope: Scope): Promise<void> {
    await this.visible(id, scope);
    if (!(await this.repo.deleteSchedule(id))) throw noSchedule();
  }

  /** Queues a run for each due schedule; returns the run ids (the job then renders each). */
  async tick(now = Date.now()): Promise<string[]> {
    const ids = await this.ctx.store.tx(async (db) => {
      const made: string[] = [];
      for (const s of await this.repo.dueSchedules(db)) {
        const due = Date.parse(s.next_run_at ?? new Date(now).toISOString());
        const range = scheduledRange(s, due);
        const id = await this.repo.insertRun(db, {
          definition_id: s.definition_id,
          definition_name: s.definition_name,
          schedule_id: s.id,
          requested_by: `schedule ${s.id}`,
          scope_folders: s.scope_folders,
          from: range.from,
          to: range.to,
          spec: s.spec,
          channel_ids: s.channel_ids,
        });
        await this.repo.advanceSchedule(db, s.id, nextRun(s, Math.max(now, due)), new Date(now));
        made.push(id);
      }
      return made;
    });
    return ids;
  }
}
