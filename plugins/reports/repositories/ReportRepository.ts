/** SQL of the reports plugin: definitions, schedules, runs and their outputs. Keyset lists; no logic. */
import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import { REPORTS_CONTEXT, type ReportsContext } from "../context.js";

export interface DefinitionRow {
  id: string;
  name: string;
  description: string | null;
  spec: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface ScheduleRow {
  id: string;
  definition_id: string;
  frequency: "daily" | "weekly" | "monthly";
  at_hour: number;
  at_minute: number;
  day_of_week: number | null;
  day_of_month: number | null;
  enabled: boolean;
  timezone: string;
  channel_ids: string[];
  scope_folders: string[] | null;
  next_run_at: string | null;
  last_run_at: string | null;
  created_at: string;
}

export interface RunRow {
  id: string;
  definition_id: string | null;
  definition_name: string;
  schedule_id: string | null;
  status: "queued" | "running" | "succeeded" | "failed";
  requested_by: string;
  scope_folders: string[] | null;
  range_from: string;
  range_to: string;
  spec: Record<string, unknown>;
  channel_ids: string[];
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  error: string | null;
  outputs: { format: string; bytes: number }[];
  deliveries: { channel_id: string; delivered: boolean; error: string | null }[];
  data?: unknown[] | null;
}

const DEF_COLS = `id, name, description, spec, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;
const SCHED_COLS = `id, definition_id, frequency, at_hour::int AS at_hour, at_minute::int AS at_minute, day_of_week::int AS day_of_week,
  day_of_month::int AS day_of_month, enabled, timezone, channel_ids::text[] AS channel_ids, scope_folders::text[] AS scope_folders,
  ${isoTimestamp("next_run_at")} AS next_run_at, ${isoTimestamp("last_run_at")} AS last_run_at, ${isoTimestamp("created_at")} AS created_at`;
const RUN_COLS = `id, definition_id, definition_name, schedule_id, status, requested_by, scope_folders::text[] AS scope_folders,
  ${isoTimestamp("range_from")} AS range_from, ${isoTimestamp("range_to")} AS range_to, spec, channel_ids::text[] AS channel_ids,
  ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("started_at")} AS started_at, ${isoTimestamp("finished_at")} AS finished_at,
  error, outputs, deliveries`;

export interface ScheduleWrite {
  definition_id: string;
  frequency: string;
  at_hour: number;
  at_minute: number;
  day_of_week: number | null;
  day_of_month: number | null;
  enabled: boolean;
  timezone: string;
  channel_ids: string[];
  next_run_at: Date | null;
}

@Injectable()
export class ReportRepository {
  @Inject(REPORTS_CONTEXT)
  private ctx: ReportsContext;

  t(name: string): string {
    return this.ctx.store.table(name);
  }

  // ---- definitions ----

  async insertDefinition(d: { name: string; description: string | null; spec: unknown }): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t("definitions")} (name, description, spec) VALUES ($1, $2, $3) RETURNING id`,
      [d.name, d.description, JSON.stringify(d.spec)],
    );
    return rows[0].id;
  }

  async definition(id: string): Promise<DefinitionRow | null> {
    const { rows } = await this.ctx.store.query<DefinitionRow>(`SELECT ${DEF_COLS} FROM ${this.t("definitions")} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async definitions(limit: number, after: readonly [string, string] | null): Promise<DefinitionRow[]> {
    const { rows } = await this.ctx.store.query<DefinitionRow>(
      `SELECT ${DEF_COLS} FROM ${this.t("definitions")}
        WHERE $1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid)
        ORDER BY created_at, id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return rows;
  }

  async updateDefinition(id: string, d: { name: string; description: string | null; spec: unknown }): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t("definitions")} SET name = $2, description = $3, spec = $4, updated_at = now() WHERE id = $1`,
      [id, d.name, d.description, JSON.stringify(d.spec)],
    );
    return (rowCount ?? 0) > 0;
  }

  async deleteDefinition(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t("definitions")} WHERE id = $1`, [id]);
    return (rowCount ?? 0) > 0;
  }

  // ---- schedules ----

  async insertSchedule(s: ScheduleWrite, scopeFolders: string[] | null): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t("schedules")} (definition_id, frequency, at_hour, at_minute, day_of_week, day_of_month, enabled, timezone, channel_ids, scope_folders, next_run_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::uuid[], $10::uuid[], $11) RETURNING id`,
      [s.definition_id, s.frequency, s.at_hour, s.at_minute, s.day_of_week, s.day_of_month, s.enabled, s.timezone, s.channel_ids, scopeFolders, s.next_run_at],
    );
    return rows[0].id;
  }

  async updateSchedule(id: string, s: ScheduleWrite): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t("schedules")} SET definition_id = $2, frequency = $3, at_hour = $4, at_minute = $5, day_of_week = $6, day_of_month = $7,
              enabled = $8, timezone = $9, channel_ids = $10::uuid[], next_run_at = $11, updated_at = now() WHERE id = $1`,
      [id, s.definition_id, s.frequency, s.at_hour, s.at_minute, s.day_of_week, s.day_of_month, s.enabled, s.timezone, s.channel_ids, s.next_run_at],
    );
    return (rowCount ?? 0) > 0;
  }

  async schedule(id: string): Promise<ScheduleRow | null> {
    const { rows } = await this.ctx.store.query<ScheduleRow>(`SELECT ${SCHED_COLS} FROM ${this.t("schedules")} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Schedules oldest first; a scoped caller sees those made for folders all within its own. */
  async schedules(limit: number, after: readonly [string, string] | null, callerFolders: string[] | null): Promise<ScheduleRow[]> {
    const { rows } = await this.ctx.store.query<ScheduleRow>(
      `SELECT ${SCHED_COLS} FROM ${this.t("schedules")}
        WHERE ($1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid))
          AND ($4::uuid[] IS NULL OR (scope_folders IS NOT NULL AND scope_folders <@ $4::uuid[]))
        ORDER BY created_at, id LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1, callerFolders],
    );
    return rows;
  }

  async deleteSchedule(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t("schedules")} WHERE id = $1`, [id]);
    return (rowCount ?? 0) > 0;
  }

  /** Due schedules, locked for this transaction (replicas skip each other's). */
  async dueSchedules(db: Queryable, limit = 100): Promise<(ScheduleRow & { definition_name: string; spec: Record<string, unknown> })[]> {
    const { rows } = await db.query<ScheduleRow & { definition_name: string; spec: Record<string, unknown> }>(
      `WITH due AS (
         SELECT id FROM ${this.t("schedules")} WHERE enabled AND next_run_at <= now() ORDER BY next_run_at LIMIT $1 FOR UPDATE SKIP LOCKED
       )
       SELECT ${SCHED_COLS},
              (SELECT d.name FROM ${this.t("definitions")} d WHERE d.id = definition_id) AS definition_name,
              (SELECT d.spec FROM ${this.t("definitions")} d WHERE d.id = definition_id) AS spec
         FROM ${this.t("schedules")} WHERE id IN (SELECT id FROM due)`,
      [limit],
    );
    return rows;
  }

  async advanceSchedule(db: Queryable, id: string, next: Date, ran: Date): Promise<void> {
    await db.query(`UPDATE ${this.t("schedules")} SET next_run_at = $2, last_run_at = $3 WHERE id = $1`, [id, next, ran]);
  }

  // ---- runs ----

  async insertRun(
    db: Queryable,
    r: {
      definition_id: string;
      definition_name: string;
      schedule_id: string | null;
      requested_by: string;
      scope_folders: string[] | null;
      from: Date;
      to: Date;
      spec: unknown;
      channel_ids: string[];
    },
  ): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO ${this.t("runs")} (definition_id, definition_name, schedule_id, status, requested_by, scope_folders, range_from, range_to, spec, channel_ids)
       VALUES ($1, $2, $3, 'queued', $4, $5::uuid[], $6, $7, $8, $9::uuid[]) RETURNING id`,
      [r.definition_id, r.definition_name, r.schedule_id, r.requested_by, r.scope_folders, r.from, r.to, JSON.stringify(r.spec), r.channel_ids],
    );
    return rows[0].id;
  }

  async run(id: string, withData = false): Promise<RunRow | null> {
    const { rows } = await this.ctx.store.query<RunRow>(`SELECT ${RUN_COLS}${withData ? ", data" : ""} FROM ${this.t("runs")} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /**
   * Runs newest first; a scoped caller sees the runs made for folders all within its own. The list reads
   * `ctx.store.read` (a read replica when configured); one run by id reads the primary, so a run just queued is found.
   */
  async runs(limit: number, after: readonly [string, string] | null, callerFolders: string[] | null, definitionId: string | null): Promise<RunRow[]> {
    const { rows } = await this.ctx.store.read.query<RunRow>(
      `SELECT ${RUN_COLS} FROM ${this.t("runs")}
        WHERE ($1::timestamptz IS NULL OR (created_at, id) < ($1::timestamptz, $2::uuid))
          AND ($3::uuid[] IS NULL OR (scope_folders IS NOT NULL AND scope_folders <@ $3::uuid[]))
          AND ($4::uuid IS NULL OR definition_id = $4)
        ORDER BY created_at DESC, id DESC LIMIT $5`,
      [after?.[0] ?? null, after?.[1] ?? null, callerFolders, definitionId, limit + 1],
    );
    return rows;
  }

  /** Marks a queued run running; false when it is not queued (another replica took it, or it is gone). */
  async startRun(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`UPDATE ${this.t("runs")} SET status = 'running', started_at = now() WHERE id = $1 AND status = 'queued'`, [
      id,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async finishRun(
    id: string,
    r: { status: "succeeded" | "failed"; error: string | null; data: unknown; outputs: { format: string; content: Buffer }[] },
  ): Promise<void> {
    await this.ctx.store.tx(async (db) => {
      for (const o of r.outputs)
        await db.query(
          `INSERT INTO ${this.t("run_outputs")} (run_id, format, content) VALUES ($1, $2, $3) ON CONFLICT (run_id, format) DO UPDATE SET content = EXCLUDED.content`,
          [id, o.format, o.content],
        );
      await db.query(`UPDATE ${this.t("runs")} SET status = $2, error = $3, data = $4, outputs = $5, finished_at = now() WHERE id = $1`, [
        id,
        r.status,
        r.error,
        JSON.stringify(r.data),
        JSON.stringify(r.outputs.map((o) => ({ format: o.format, bytes: o.content.length }))),
      ]);
    });
  }

  async setDeliveries(id: string, deliveries: unknown[]): Promise<void> {
    await this.ctx.store.query(`UPDATE ${this.t("runs")} SET deliveries = $2 WHERE id = $1`, [id, JSON.stringify(deliveries)]);
  }

  async output(id: string, format: string): Promise<Buffer | null> {
    const { rows } = await this.ctx.store.query<{ content: Buffer }>(`SELECT content FROM ${this.t("run_outputs")} WHERE run_id = $1 AND format = $2`, [
      id,
      format,
    ]);
    return rows[0]?.content ?? null;
  }

  /** Runs left running past `hours` (their replica stopped mid-render) are marked failed. */
  async failStaleRuns(hours: number): Promise<number> {
    const { rowCount } = await this.ctx.store.query(
      `UPDATE ${this.t("runs")} SET status = 'failed', error = 'The run was interrupted (the service stopped while rendering it).', finished_at = now()
        WHERE status = 'running' AND started_at < now() - make_interval(hours => $1)`,
      [hours],
    );
    return rowCount ?? 0;
  }

  async pruneRuns(days: number): Promise<number> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t("runs")} WHERE finished_at < now() - make_interval(days => $1)`, [days]);
    return rowCount ?? 0;
  }
}
