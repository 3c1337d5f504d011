import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isUuid, notFound, page, parseRfc3339, requireCaller, type Scope, scopeCovers, scopeFolders } from "../../../core/index.js";
import { isValidTimeZone, occurrenceAt, windowFromRow, type Recurrence } from "../lib/maintenanceTime.js";
import type { ActiveMaintenanceWindow, MaintenanceWindowCreate, MaintenanceWindowView } from "../models/MaintenanceModels.js";
import { MaintenanceRepository, type MaintenanceInsert, type MaintenanceRecord } from "../repositories/MaintenanceRepository.js";
import { ActiveAlertRepository } from "../repositories/ActiveAlertRepository.js";
import { NodeStateService } from "./NodeStateService.js";

const invalid = (message: string) => badRequest("validation_failed", message);

function view(r: MaintenanceRecord): MaintenanceWindowView {
  const { created_at_key: _k, timing: _t, ...rest } = r;
  return rest;
}

/**
 * Maintenance windows: one-off ([starts_at, ends_at)) or recurring (daily or weekly in a time zone), for nodes or
 * folders. Nodes inside an active window show state maintenance and their notifications are suppressed (the
 * engine asks lib/maintenanceTime.ts). A window is visible to a folder-scoped caller only when every target is.
 */
@Injectable()
export class MaintenanceService {
  @Inject(MaintenanceRepository)
  private repo: MaintenanceRepository;

  @Inject(ActiveAlertRepository)
  private directory: ActiveAlertRepository;

  @Inject(NodeStateService)
  private states: NodeStateService;

  /**
   * Nodes enter or leave maintenance now rather than at the next run of the node-states job (a minute); a failure
   * here leaves that job to catch up, so the write still answers success.
   */
  private async refreshStates(): Promise<void> {
    await this.states.refreshMaintenance().catch(() => undefined);
  }

  async create(body: MaintenanceWindowCreate, scope: Scope): Promise<string> {
    const id = await this.repo.insert({ ...(await this.validated(body, scope)), created_by: requireCaller().username });
    await this.refreshStates();
    return id;
  }

  /**
   * Replaces a window with a full document (the rules of create). 404 when it does not exist or the caller cannot
   * see every one of its current targets; the new targets must be visible too (else 400 unknown_reference).
   */
  async replace(id: string, body: MaintenanceWindowCreate, scope: Scope): Promise<MaintenanceWindowView> {
    if (!(await this.repo.find(id, scopeFolders(scope)))) throw notFound("No such maintenance window.");
    const fields = await this.validated(body, scope);
    if (!(await this.repo.update(id, fields, scopeFolders(scope)))) throw notFound("No such maintenance window.");
    await this.refreshStates();
    return this.get(id, scope);
  }

  /** The stored fields of a create or replace body, after the checks a schema cannot make. */
  private async validated(body: MaintenanceWindowCreate, scope: Scope): Promise<Omit<MaintenanceInsert, "created_by">> {
    const name = body.name.trim();
    if (!name) throw invalid("name must hold a non-blank character.");
    const oneOff = body.starts_at !== undefined || body.ends_at !== undefined;
    if (oneOff === (body.recurrence !== undefined)) throw invalid("Send either starts_at and ends_at (one-off) or recurrence, not both and not neither.");
    let startsAt: string | null = null;
    let endsAt: string | null = null;
    let recurrence: Recurrence | null = null;
    if (oneOff) {
      const s = body.starts_at === undefined ? null : parseRfc3339(body.starts_at);
      const e = body.ends_at === undefined ? null : parseRfc3339(body.ends_at);
      if (!s || !e) throw invalid("A one-off window needs starts_at and ends_at as RFC 3339 timestamps.");
      if (e.ms <= s.ms) throw invalid("ends_at must be after starts_at.");
      if (e.ms <= Date.now()) throw invalid("ends_at must be in the future.");
      startsAt = s.text;
      endsAt = e.text;
    } else {
      recurrence = normaliseRecurrence(body.recurrence!);
    }
    const ids = [...new Set(body.target_ids.map((id) => id.toLowerCase()))];
    await this.assertTargetsVisible(body.target_kind, ids, scope);
    return { name, target_kind: body.target_kind, target_ids: ids, starts_at: startsAt, ends_at: endsAt, recurrence };
  }

  async list(query: { cursor?: string; limit: number }, scope: Scope): Promise<{ rows: MaintenanceWindowView[]; next: string | null }> {
    let before: { at: string; id: string } | null = null;
    if (query.cursor !== undefined) {
      const [at, id] = decodeCursor(query.cursor, 2, ([first, last]) => parseRfc3339(first) !== null && isUuid(last));
      before = { at, id };
    }
    const rows = await this.repo.list(scopeFolders(scope), before, query.limit + 1);
    const paged = page(rows, query.limit, (r) => [r.created_at_key, r.id]);
    return { rows: paged.rows.map(view), next: paged.next };
  }

  async get(id: string, scope: Scope): Promise<MaintenanceWindowView> {
    const found = await this.repo.find(id, scopeFolders(scope));
    if (!found) throw notFound("No such maintenance window.");
    return view(found);
  }

  async remove(id: string, scope: Scope): Promise<void> {
    if (!(await this.repo.delete(id, scopeFolders(scope)))) throw notFound("No such maintenance window.");
    await this.refreshStates();
  }

  /** The visible windows active at `at` (RFC 3339; default now), each with the occurrence covering it. */
  async activeAt(at: string | undefined, scope: Scope): Promise<ActiveMaintenanceWindow[]> {
    const instant = at === undefined ? { ms: Date.now(), text: new Date().toISOString() } : parseRfc3339(at);
    if (!instant) throw invalid("at must be an RFC 3339 timestamp.");
    const date = new Date(instant.ms);
    const out: ActiveMaintenanceWindow[] = [];
    for (const r of await this.repo.candidatesAt(scopeFolders(scope), instant.text)) {
      const occurrence = occurrenceAt(windowFromRow(r.timing), date);
      if (occurrence) out.push({ ...view(r), active_from: occurrence.start.toISOString(), active_until: occurrence.end.toISOString() });
    }
    return out;
  }

  /** Every target exists (nodes; folders known through the nodes beneath them) and lies in the scope, else 400 unknown_reference. */
  private async assertTargetsVisible(kind: "node" | "folder", ids: string[], scope: Scope): Promise<void> {
    const folders = scopeFolders(scope);
    if (kind === "node") {
      const visible = new Set(await this.directory.visibleNodes(ids, folders));
      if (ids.some((id) => !visible.has(id))) throw badRequest("unknown_reference", "target_ids names a node you cannot use.");
      return;
    }
    for (const id of ids) {
      if (folders?.includes(id)) continue;
      const path = await this.directory.folderPath(id);
      if (path === null || !scopeCovers(scope, path)) {
        throw badRequest("unknown_reference", "target_ids names a folder you cannot use.");
      }
    }
  }
}

/** Recurrence rules a schema cannot say: weekdays only (and required) for weekly, a daily occurrence within a day, a known time zone. */
export function normaliseRecurrence(r: Recurrence): Recurrence {
  if (r.kind === "weekly" && !r.weekdays?.length) throw invalid("A weekly recurrence needs weekdays (0 = Sunday … 6 = Saturday).");
  if (r.kind === "daily" && r.weekdays !== undefined) throw invalid("weekdays belongs to a weekly recurrence only.");
  if (r.kind === "daily" && r.duration_mins > 1440) throw invalid("A daily occurrence lasts at most 1440 minutes.");
  if (!isValidTimeZone(r.time_zone)) throw invalid("time_zone must be an IANA time zone name (for example Europe/Berlin).");
  const timeZone = new Intl.DateTimeFormat("en-US", { timeZone: r.time_zone }).resolvedOptions().timeZone;
  return {
    kind: r.kind,
    ...(r.kind === "weekly" ? { weekdays: [...new Set(r.weekdays)].sort((a, b) => a - b) } : {}),
    start: r.start,
    duration_mins: r.duration_mins,
    time_zone: timeZone,
  };
}
