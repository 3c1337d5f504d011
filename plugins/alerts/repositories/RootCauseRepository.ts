import { Inject, Injectable } from "@tsed/di";
import type { Queryable } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { LIVENESS_CHECK_ID } from "../lib/checks.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/** An open unreachable incident and the cause it is linked to (null: a root cause, or none found yet). */
export interface OpenUnreachable {
  incident_key: string;
  node_id: string;
  cause_incident_key: string | null;
}

/** A link of a symptom to its cause. */
export interface CauseLink {
  incident_key: string;
  cause_incident_key: string;
  cause_node_id: string;
}

/** SQL of root-cause links (migration 0030): the cause columns of active_alerts and history. */
@Injectable()
export class RootCauseRepository {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  /**
   * One linking pass at a time across replicas (a transaction lock): the pass reads other flushes' committed
   * unreachable incidents, so two replicas firing a cause and its symptom at once do not miss each other.
   */
  async lock(db: Queryable): Promise<void> {
    await db.query(`SELECT pg_advisory_xact_lock(hashtext('alerts.root_cause'))`);
  }

  async openUnreachable(db: Queryable): Promise<OpenUnreachable[]> {
    const { rows } = await db.query<OpenUnreachable>(
      `SELECT incident_key, node_id, cause_incident_key FROM ${this.t("active_alerts")} WHERE check_id = $1::uuid AND node_id IS NOT NULL`,
      [LIVENESS_CHECK_ID],
    );
    return rows;
  }

  /** Links open incidents to their causes, and their latest fire history row with them. */
  async link(links: readonly CauseLink[], db: Queryable): Promise<void> {
    if (links.length === 0) return;
    const params = [links.map((l) => l.incident_key), links.map((l) => l.cause_incident_key), links.map((l) => l.cause_node_id)];
    await db.query(
      `UPDATE ${this.t("active_alerts")} aa SET cause_incident_key = u.cause, cause_node_id = u.cause_node
         FROM unnest($1::text[], $2::text[], $3::uuid[]) AS u(incident_key, cause, cause_node)
        WHERE aa.incident_key = u.incident_key`,
      params,
    );
    await db.query(
      `UPDATE ${this.t("history")} h SET cause_incident_key = u.cause, cause_node_id = u.cause_node
         FROM unnest($1::text[], $2::text[], $3::uuid[]) AS u(incident_key, cause, cause_node),
              LATERAL (SELECT id FROM ${this.t("history")} f WHERE f.incident_key = u.incident_key AND NOT f.resolved
                        ORDER BY f.recorded_at DESC, f.id DESC LIMIT 1) f
        WHERE h.id = f.id`,
      params,
    );
  }

  /** Clear rows (ids) of incidents whose fire row names a cause get that cause too; answers those rows. */
  async stampClears(
    rows: readonly { id: string; incident_key: string }[],
    db: Queryable,
  ): Promise<{ id: string; cause_incident_key: string; cause_node_id: string }[]> {
    if (rows.length === 0) return [];
    const { rows: out } = await db.query<{ id: string; cause_incident_key: string; cause_node_id: string }>(
      `UPDATE ${this.t("history")} h SET cause_incident_key = f.cause_incident_key, cause_node_id = f.cause_node_id
         FROM unnest($1::uuid[], $2::text[]) AS u(id, incident_key),
              LATERAL (SELECT cause_incident_key, cause_node_id FROM ${this.t("history")} f
                        WHERE f.incident_key = u.incident_key AND NOT f.resolved ORDER BY f.recorded_at DESC, f.id DESC LIMIT 1) f
        WHERE h.id = u.id AND f.cause_incident_key IS NOT NULL
        RETURNING h.id, h.cause_incident_key, h.cause_node_id`,
      [rows.map((r) => r.id), rows.map((r) => r.incident_key)],
    );
    return out;
  }

  /** Open incidents whose cause is one of `keys` are no longer linked (the cause cleared). */
  async unlink(keys: readonly string[], db: Queryable): Promise<void> {
    if (keys.length === 0) return;
    await db.query(`UPDATE ${this.t("active_alerts")} SET cause_incident_key = NULL, cause_node_id = NULL WHERE cause_incident_key = ANY($1::text[])`, [keys]);
  }

  /** These open incidents have no cause any more (their upstream answers again); their history keeps it. */
  async unlinkIncidents(keys: readonly string[], db: Queryable): Promise<void> {
    if (keys.length === 0) return;
    await db.query(`UPDATE ${this.t("active_alerts")} SET cause_incident_key = NULL, cause_node_id = NULL WHERE incident_key = ANY($1::text[])`, [keys]);
  }

  async nodeNames(ids: readonly string[], db: Queryable): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const { rows } = await db.query<{ id: string; name: string }>(`SELECT id, name FROM ${NODE_DIRECTORY_VIEW} WHERE id = ANY($1::uuid[])`, [ids]);
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /** The cause named by the latest fire row of an incident (kept after either incident clears). */
  async fireCause(incidentKey: string): Promise<{ cause_incident_key: string; cause_node_id: string; name: string | null } | null> {
    const { rows } = await this.ctx.store.query<{ cause_incident_key: string | null; cause_node_id: string; name: string | null }>(
      `SELECT h.cause_incident_key, h.cause_node_id, d.name
         FROM (SELECT cause_incident_key, cause_node_id FROM ${this.t("history")}
                WHERE incident_key = $1 AND NOT resolved ORDER BY recorded_at DESC, id DESC LIMIT 1) h
         LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = h.cause_node_id`,
      [incidentKey],
    );
    const r = rows[0];
    return r && r.cause_incident_key !== null ? { cause_incident_key: r.cause_incident_key, cause_node_id: r.cause_node_id, name: r.name } : null;
  }
}
