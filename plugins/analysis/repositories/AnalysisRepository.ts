import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { FOLDER_RANGES_VIEW, NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { ANALYSIS_CONTEXT, type AnalysisContext } from "../context.js";
import type { FindingDraft, ToolNode } from "../lib/tools/types.js";
import type { FindingView, JobView, AnalysisScheduleView } from "../models/AnalysisModels.js";

export interface JobRow extends JobView {
  run_folders: string[] | null;
  visible_folders: string[];
}

export interface ScheduleRow extends AnalysisScheduleView {
  owner_folders: string[] | null;
  visible_folders: string[];
}

/** What a schedule row is written from (the service has checked every field). */
export interface ScheduleWrite {
  tool: string;
  scope_kind: string;
  scope_label: string;
  scope_id: string | null;
  params: Record<string, unknown>;
  frequency: string;
  at_hour: number;
  at_minute: number;
  day_of_week: number | null;
  day_of_month: number | null;
  enabled: boolean;
  timezone: string;
  owner_folders: string[] | null;
  visible_folders: string[];
  next_run_at: string | null;
}

export interface FindingFilter {
  limit: number;
  before: { at: string; id: string | null } | null;
  jobId: string | null;
  tools: string[] | null;
  severities: string[] | null;
  nodeId: string | null;
  groupId: string | null;
  /** The caller's folders (null = unrestricted). */
  scope: string[] | null;
}

const JOB_COLUMNS = `j.id, j.tool, j.scope_kind, j.scope_id, j.params, j.schedule_id, j.status, j.progress, j.counts, j.error,
  ${isoTimestamp("j.created_at")} AS created_at, ${isoTimestamp("j.started_at")} AS started_at, ${isoTimestamp("j.finished_at")} AS finished_at,
  j.run_folders, j.visible_folders`;

const SCHEDULE_COLUMNS = `s.id, s.tool, s.scope_kind, s.scope_label, s.scope_id, s.params, s.frequency, s.at_hour, s.at_minute, s.day_of_week,
  s.day_of_month, s.enabled, s.timezone, ${isoTimestamp("s.next_run_at")} AS next_run_at, ${isoTimestamp("s.last_run_at")} AS last_run_at,
  s.owner_folders, s.visible_folders`;

const SCHEDULE_FIELDS = [
  "tool",
  "scope_kind",
  "scope_label",
  "scope_id",
  "params",
  "frequency",
  "at_hour",
  "at_minute",
  "day_of_week",
  "day_of_month",
  "enabled",
  "timezone",
  "owner_folders",
  "visible_folders",
  "next_run_at",
] as const;

/** SQL of the analysis plugin: jobs, findings, schedules; other plugins' data only through their published views. */
@Injectable()
export class AnalysisRepository {
  @Inject(ANALYSIS_CONTEXT)
  private ctx: AnalysisContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  private async rows<R extends Record<string, unknown>>(sql: string, params: unknown[], db?: Queryable): Promise<R[]> {
    return (await (db ?? this.ctx.store).query<R>(sql, params)).rows;
  }

  // ---- inventory (published views) ----

  async folder(id: string, db?: Queryable): Promise<{ id: string; name: string; folder_path: string[] } | null> {
    const rows = await this.rows<{ id: string; name: string; folder_path: string[] }>(
      `SELECT id, name, folder_path FROM ${FOLDER_RANGES_VIEW} WHERE id = $1`,
      [id],
      db,
    );
    return rows[0] ?? null;
  }

  async node(id: string, db?: Queryable): Promise<{ id: string; name: string; folder_path: string[] } | null> {
    const rows = await this.rows<{ id: string; name: string; folder_path: string[] }>(
      `SELECT id, name, folder_path FROM ${NODE_DIRECTORY_VIEW} WHERE id = $1`,
      [id],
      db,
    );
    return rows[0] ?? null;
  }

  /** The nodes a run covers. */
  async scopeNodes(kind: string, id: string | null, runFolders: string[] | null): Promise<ToolNode[]> {
    return this.rows<ToolNode & Record<string, unknown>>(
      `SELECT d.id, d.name, host(d.address) AS address, d.group_id, d.folder_path FROM ${NODE_DIRECTORY_VIEW} d
        WHERE ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[])
          AND ($2::text <> 'folder' OR d.folder_path @> ARRAY[$3::uuid])
          AND ($2::text <> 'node' OR d.id = $3::uuid)
        ORDER BY d.id`,
      [runFolders, kind, id],
    );
  }

  // ---- jobs ----

  async insertJob(
    job: {
      tool: string;
      scope_kind: string;
      scope_id: string | null;
      params: Record<string, unknown>;
      run_folders: string[] | null;
      visible_folders: string[];
      schedule_id: string | null;
      requested_by: string | null;
    },
    db?: Queryable,
  ): Promise<string> {
    const rows = await this.rows<{ id: string }>(
      `INSERT INTO ${this.t("jobs")} (tool, scope_kind, scope_id, params, run_folders, visible_folders, schedule_id, requested_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [job.tool, job.scope_kind, job.scope_id, JSON.stringify(job.params), job.run_folders, job.visible_folders, job.schedule_id, job.requested_by],
      db,
    );
    return rows[0].id;
  }

  async job(id: string): Promise<JobRow | null> {
    const rows = await this.rows<JobRow & Record<string, unknown>>(`SELECT ${JOB_COLUMNS} FROM ${this.t("jobs")} j WHERE j.id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Moves a queued job to running; null when it is not queued (already taken). */
  async claim(id: string): Promise<JobRow | null> {
    const rows = await this.rows<JobRow & Record<string, unknown>>(
      `UPDATE ${this.t("jobs")} j SET status = 'running', started_at = now() WHERE j.id = $1 AND j.status = 'queued' RETURNING ${JOB_COLUMNS}`,
      [id],
    );
    return rows[0] ?? null;
  }

  async progress(id: string, fraction: number): Promise<void> {
    await this.ctx.store.query(`UPDATE ${this.t("jobs")} SET progress = $2 WHERE id = $1 AND status = 'running'`, [id, fraction]);
  }

  async fail(id: string, message: string): Promise<void> {
    await this.ctx.store.query(`UPDATE ${this.t("jobs")} SET status = 'failed', error = $2, finished_at = now() WHERE id = $1`, [id, message]);
  }

  /** Saves a run's findings (one `at` for all) and marks the job done, in one transaction. */
  async finish(job: JobRow, findings: FindingDraft[], counts: Record<string, unknown>): Promise<void> {
    await this.ctx.store.tx(async (client) => {
      const at = (await client.query<{ at: string }>(`SELECT clock_timestamp()::text AS at`)).rows[0].at;
      for (let i = 0; i < findings.length; i += 1000) {
        const chunk = findings.slice(i, i + 1000).map((f) => ({
          severity: f.severity,
          subject_kind: f.subject.kind,
          subject_id: f.subject.id,
          subject_name: f.subject.name,
          node_id: f.node_id,
          ifindex: f.ifindex,
          folder_id: f.folder_id,
          folder_path: f.folder_path,
          message: f.message,
          data: f.data,
        }));
        await client.query(
          `INSERT INTO ${this.t("findings")} (job_id, at, tool, severity, subject_kind, subject_id, subject_name, node_id, ifindex, folder_id, folder_path, message, data)
           SELECT $1, $2::timestamptz, $3, x.severity, x.subject_kind, x.subject_id, x.subject_name, x.node_id, x.ifindex, x.folder_id, x.folder_path, x.message, x.data
             FROM jsonb_to_recordset($4::jsonb) AS x(severity text, subject_kind text, subject_id text, subject_name text, node_id uuid, ifindex integer,
                                                     folder_id uuid, folder_path uuid[], message text, data jsonb)`,
          [job.id, at, job.tool, JSON.stringify(chunk)],
        );
      }
      await client.query(`UPDATE ${this.t("jobs")} SET status = 'succeeded', progress = 1, counts = $2, finished_at = now() WHERE id = $1`, [
        job.id,
        JSON.stringify(counts),
      ]);
    });
  }

  /** Runs left `running` past their lock (the service stopped under them) become failed; answers how many. */
  async failStale(minutes: number): Promise<number> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t("jobs")} SET status = 'failed', finished_at = now(), error = 'The run was interrupted (the service stopped during it); run it again.'
        WHERE status = 'running' AND started_at < now() - make_interval(mins => $1)`,
      [minutes],
    );
    return rowCount ?? 0;
  }

  /** Deletes findings and finished jobs older than the retention. */
  async prune(days: number): Promise<number> {
    const { rowCount } = await this.ctx.store.query(
      `DELETE FROM ${this.t("jobs")} WHERE created_at < now() - make_interval(days => $1) AND status IN ('succeeded', 'failed')`,
      [days],
    );
    await this.ctx.store.query(`DELETE FROM ${this.t("findings")} WHERE at < now() - make_interval(days => $1)`, [days]);
    return rowCount ?? 0;
  }

  // ---- findings ----

  /** `db`: `ctx.store.read` for the cross-job list (may be seconds stale), the primary for one job's findings (read after it finished). */
  async findings(filter: FindingFilter, db?: Queryable): Promise<FindingView[]> {
    const params: unknown[] = [];
    const p = (v: unknown) => `$${params.push(v)}`;
    const where: string[] = [];
    if (filter.before) {
      where.push(
        filter.before.id === null
          ? `f.at < ${p(filter.before.at)}::timestamptz`
          : `(f.at, f.id) < (${p(filter.before.at)}::timestamptz, ${p(filter.before.id)}::uuid)`,
      );
    }
    if (filter.jobId !== null) where.push(`f.job_id = ${p(filter.jobId)}::uuid`);
    if (filter.tools) where.push(`f.tool = ANY (${p(filter.tools)}::text[])`);
    if (filter.severities) where.push(`f.severity = ANY (${p(filter.severities)}::text[])`);
    if (filter.nodeId !== null) where.push(`f.node_id = ${p(filter.nodeId)}::uuid`);
    if (filter.groupId !== null) where.push(`f.folder_path @> ARRAY[${p(filter.groupId)}::uuid]`);
    if (filter.scope !== null) where.push(`f.folder_path && ${p(filter.scope)}::uuid[]`);
    return this.rows<FindingView & Record<string, unknown>>(
      `SELECT f.id, f.job_id, ${isoTimestamp("f.at")} AS at, f.tool, f.severity,
              json_build_object('kind', f.subject_kind, 'id', f.subject_id, 'name', f.subject_name) AS subject,
              f.node_id, f.ifindex, f.folder_id, f.message, f.data
         FROM ${this.t("findings")} f
        ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY f.at DESC, f.id DESC
        LIMIT ${p(filter.limit)}`,
      params,
      db,
    );
  }

  // ---- schedules ----

  async schedules(scope: string[] | null, limit: number): Promise<ScheduleRow[]> {
    return this.rows<ScheduleRow & Record<string, unknown>>(
      `SELECT ${SCHEDULE_COLUMNS} FROM ${this.t("schedules")} s
        WHERE $1::uuid[] IS NULL OR s.visible_folders && $1::uuid[]
        ORDER BY s.created_at, s.id LIMIT $2`,
      [scope, limit],
    );
  }

  async schedule(id: string, db?: Queryable): Promise<ScheduleRow | null> {
    const rows = await this.rows<ScheduleRow & Record<string, unknown>>(`SELECT ${SCHEDULE_COLUMNS} FROM ${this.t("schedules")} s WHERE s.id = $1`, [id], db);
    return rows[0] ?? null;
  }

  async countSchedules(): Promise<number> {
    return (await this.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.t("schedules")}`, []))[0].n;
  }

  private writeValues(s: ScheduleWrite): unknown[] {
    return SCHEDULE_FIELDS.map((f) => (f === "params" ? JSON.stringify(s.params) : s[f]));
  }

  async insertSchedule(s: ScheduleWrite, id: string | null = null, db?: Queryable): Promise<string> {
    const values = this.writeValues(s);
    const rows = await this.rows<{ id: string }>(
      `INSERT INTO ${this.t("schedules")} (id, ${SCHEDULE_FIELDS.join(", ")})
       VALUES (coalesce($1::uuid, gen_random_uuid()), ${SCHEDULE_FIELDS.map((_f, i) => `$${i + 2}`).join(", ")}) RETURNING id`,
      [id, ...values],
      db,
    );
    return rows[0].id;
  }

  async updateSchedule(id: string, s: ScheduleWrite, db?: Queryable): Promise<boolean> {
    const { rowCount } = await (db ?? this.ctx.store).query(
      `UPDATE ${this.t("schedules")} SET ${SCHEDULE_FIELDS.map((f, i) => `${f} = $${i + 2}`).join(", ")}, updated_at = now() WHERE id = $1`,
      [id, ...this.writeValues(s)],
    );
    return (rowCount ?? 0) > 0;
  }

  async deleteSchedule(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t("schedules")} WHERE id = $1`, [id]);
    return (rowCount ?? 0) > 0;
  }

  /** Every schedule, for the bundle. */
  async allSchedules(): Promise<ScheduleRow[]> {
    return this.rows<ScheduleRow & Record<string, unknown>>(`SELECT ${SCHEDULE_COLUMNS} FROM ${this.t("schedules")} s ORDER BY s.created_at, s.id`, []);
  }

  async scheduleIds(db: Queryable): Promise<string[]> {
    return (await this.rows<{ id: string }>(`SELECT id FROM ${this.t("schedules")}`, [], db)).map((r) => r.id);
  }

  async deleteSchedulesExcept(keep: string[], db: Queryable): Promise<number> {
    const { rowCount } = await db.query(`DELETE FROM ${this.t("schedules")} WHERE NOT (id = ANY ($1::uuid[]))`, [keep]);
    return rowCount ?? 0;
  }

  /**
   * Takes the due schedules (skipping those another replica holds): a job row for each, and the next run set, in one
   * transaction. Returns the new job ids.
   */
  async takeDue(nextRunOf: (s: ScheduleRow) => string, limit = 100): Promise<string[]> {
    return this.ctx.store.tx(async (client) => {
      const due = await this.rows<ScheduleRow & Record<string, unknown>>(
        `SELECT ${SCHEDULE_COLUMNS} FROM ${this.t("schedules")} s
          WHERE s.enabled AND s.next_run_at <= now() ORDER BY s.next_run_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
        client,
      );
      const jobs: string[] = [];
      for (const s of due) {
        jobs.push(
          await this.insertJob(
            {
              tool: s.tool,
              scope_kind: s.scope_kind,
              scope_id: s.scope_id,
              params: s.params,
              run_folders: s.owner_folders,
              visible_folders: s.visible_folders,
              schedule_id: s.id,
              requested_by: null,
            },
            client,
          ),
        );
        await client.query(`UPDATE ${this.t("schedules")} SET last_run_at = now(), next_run_at = $2 WHERE id = $1`, [s.id, nextRunOf(s)]);
      }
      return jobs;
    });
  }
}
