import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import type { SweepResultView, SweepStatus, SweepView } from "../models/SweepModels.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

export interface SweepInsert {
  cidr: string;
  port: number;
  pool: string | null;
  credential_ids: string[];
  timeout_ms: number;
  total: number;
  created_by: string | null;
}

export interface SweepFound {
  address: string;
  sys_name: string | null;
  sys_object_id: string | null;
  sys_descr: string | null;
  credential_id: string;
  proposed_profile_id: string | null;
  vendor: string | null;
  model: string | null;
}

const COLUMNS = `id, cidr::text AS cidr, port, pool, credential_ids, timeout_ms, status, total, probed, found, error, created_by,
  ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("started_at")} AS started_at, ${isoTimestamp("finished_at")} AS finished_at`;

/** SQL for polling.sweeps and polling.sweep_results. */
@Injectable()
export class SweepRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  async insert(s: SweepInsert): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t("sweeps")} (cidr, port, pool, credential_ids, timeout_ms, total, created_by)
       VALUES ($1::cidr, $2, $3, $4::uuid[], $5, $6, $7) RETURNING id`,
      [s.cidr, s.port, s.pool, s.credential_ids, s.timeout_ms, s.total, s.created_by],
    );
    return rows[0].id;
  }

  async get(id: string): Promise<SweepView | null> {
    const { rows } = await this.ctx.store.query<SweepView>(`SELECT ${COLUMNS} FROM ${this.t("sweeps")} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Newest first, after the keyset (created_at as microsecond text, id). */
  async list(limit: number, after: { created_at: string; id: string } | null): Promise<(SweepView & { sort_at: string })[]> {
    const { rows } = await this.ctx.store.query<SweepView & { sort_at: string }>(
      `SELECT ${COLUMNS}, ${isoTimestamp("created_at")} AS sort_at FROM ${this.t("sweeps")}
        WHERE $1::timestamptz IS NULL OR (created_at, id) < ($1::timestamptz, $2::uuid)
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [after?.created_at ?? null, after?.id ?? null, limit],
    );
    return rows;
  }

  /** Queued → running, once: another run of the same job finds nothing to claim. */
  async claim(id: string): Promise<SweepView | null> {
    const { rows } = await this.ctx.store.query<SweepView>(
      `UPDATE ${this.t("sweeps")} SET status = 'running', started_at = now(), updated_at = now()
        WHERE id = $1 AND status = 'queued' RETURNING ${COLUMNS}`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Stores a batch of answers (one statement) and the counts so far. */
  async progress(id: string, probed: number, found: SweepFound[]): Promise<number> {
    return this.ctx.store.tx(async (db) => {
      if (found.length) {
        await db.query(
          `INSERT INTO ${this.t("sweep_results")} (sweep_id, address, sys_name, sys_object_id, sys_descr, credential_id, proposed_profile_id, vendor, model)
           SELECT $1, u.address, u.sys_name, u.sys_object_id, u.sys_descr, u.credential_id, u.profile_id, u.vendor, u.model
             FROM unnest($2::inet[], $3::text[], $4::text[], $5::text[], $6::uuid[], $7::uuid[], $8::text[], $9::text[])
                  AS u(address, sys_name, sys_object_id, sys_descr, credential_id, profile_id, vendor, model)
           ON CONFLICT (sweep_id, address) DO NOTHING`,
          [
            id,
            found.map((f) => f.address),
            found.map((f) => f.sys_name),
            found.map((f) => f.sys_object_id),
            found.map((f) => f.sys_descr),
            found.map((f) => f.credential_id),
            found.map((f) => f.proposed_profile_id),
            found.map((f) => f.vendor),
            found.map((f) => f.model),
          ],
        );
      }
      const { rows } = await db.query<{ found: number }>(
        `UPDATE ${this.t("sweeps")} SET probed = $2,
                found = (SELECT count(*) FROM ${this.t("sweep_results")} WHERE sweep_id = $1), updated_at = now()
          WHERE id = $1 RETURNING found`,
        [id, probed],
      );
      return rows[0]?.found ?? 0;
    });
  }

  async finish(id: string, status: Extract<SweepStatus, "done" | "failed">, error: string | null): Promise<void> {
    await this.ctx.store.query(
      `UPDATE ${this.t("sweeps")} SET status = $2, error = $3, finished_at = now(), updated_at = now() WHERE id = $1 AND status IN ('queued', 'running')`,
      [id, status, error],
    );
  }

  /** Running sweeps without progress for `secs` were cut off (a restart): they are failed. */
  async failStale(secs: number): Promise<void> {
    await this.ctx.store.query(
      `UPDATE ${this.t("sweeps")} SET status = 'failed', error = 'interrupted (no progress; the process running it stopped)', finished_at = now()
        WHERE status = 'running' AND updated_at < now() - make_interval(secs => $1)`,
      [secs],
    );
  }

  async results(id: string): Promise<SweepResultView[]> {
    const { rows } = await this.ctx.store.query<SweepResultView>(
      `SELECT host(address) AS address, sys_name, sys_object_id, sys_descr, credential_id, proposed_profile_id, vendor, model,
              ${isoTimestamp("found_at")} AS found_at
         FROM ${this.t("sweep_results")} WHERE sweep_id = $1 ORDER BY address`,
      [id],
    );
    return rows;
  }
}
