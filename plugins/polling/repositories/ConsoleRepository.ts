import { Inject, Injectable } from "@tsed/di";
import { FOLDER_RANGES_VIEW, NODE_DIRECTORY_VIEW, PROFILE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { METRICS, SNMP_AGENT_STATUS } from "../contract.js";
import { AGENT_STATUSES, type AgentHealthView, type InterfaceSearchHit } from "../models/ConsoleModels.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

interface HealthRow {
  id: string;
  name: string;
  reachable: number | null;
  reachable_at: number | null;
  rtt_ms: number | null;
  agent: number | null;
  agent_at: number | null;
  last_answer_at: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const MS = (col: string) => `(extract(epoch FROM ${col}) * 1000)::float8`;

/** SQL of the console reads: node-level rows of polling.latest and polling.interfaces, through inventory's published views. */
@Injectable()
export class ConsoleRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  /**
   * Agent health of the visible nodes, by id after `afterId` (keyset). Node-level latest rows only (their primary key
   * per node): reachability, rtt, the agent's status, and sysUpTime, which only an answering agent gives (the last
   * answer while the agent is down now).
   */
  async agentHealth(q: {
    folders: string[] | null;
    nodeId: string | null;
    afterId: string | null;
    problems: boolean;
    limit: number;
  }): Promise<AgentHealthView[]> {
    const latest = (alias: string, metric: string) =>
      `LEFT JOIN ${this.t("latest")} ${alias} ON ${alias}.node_id = d.id AND ${alias}.metric = '${metric}' AND ${alias}.ifindex = -1 AND ${alias}.row_key = -1`;
    const { rows } = await this.ctx.store.query<HealthRow>(
      `SELECT d.id, d.name, r.value AS reachable, ${MS("r.at")} AS reachable_at, rtt.value AS rtt_ms,
              CASE WHEN d.credential_id IS NULL THEN NULL ELSE a.value END AS agent,
              CASE WHEN d.credential_id IS NULL THEN NULL ELSE ${MS("a.at")} END AS agent_at,
              CASE WHEN d.credential_id IS NULL THEN NULL
                   ELSE ${MS(`greatest(CASE WHEN a.value = ${SNMP_AGENT_STATUS.answering} THEN a.at END, up.at)`)} END AS last_answer_at
         FROM ${NODE_DIRECTORY_VIEW} d
         ${latest("r", METRICS.reachable)}
         ${latest("rtt", METRICS.rttMs)}
         ${latest("a", METRICS.snmpAgentStatus)}
         ${latest("up", METRICS.sysUptimeSecs)}
        WHERE ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[])
          AND ($2::uuid IS NULL OR d.id = $2::uuid)
          AND ($3::uuid IS NULL OR d.id > $3::uuid)
          AND (NOT $4::boolean OR r.value = 0 OR (d.credential_id IS NOT NULL AND a.value <> ${SNMP_AGENT_STATUS.answering}))
        ORDER BY d.id
        LIMIT $5`,
      [q.folders, q.nodeId, q.afterId, q.problems, q.limit],
    );
    const now = Date.now();
    return rows.map((r) => {
      const newest = r.agent !== null ? r.last_answer_at : r.reachable_at;
      return {
        node_id: r.id,
        node_name: r.name,
        reachable: r.reachable === null ? null : r.reachable !== 0,
        reachable_at: iso(r.reachable_at),
        rtt_ms: r.rtt_ms,
        agent_status: r.agent === null ? null : (AGENT_STATUSES[r.agent] ?? "error"),
        agent_status_at: iso(r.agent_at),
        last_answer_at: iso(r.last_answer_at),
        data_age_secs: newest !== null ? Math.max(0, Math.floor((now - newest) / 1000)) : null,
      };
    });
  }

  /** Whether a folder is visible to a caller restricted to `folders` (null = scope All). */
  async folderVisible(id: string, folders: string[] | null): Promise<boolean> {
    const { rows } = await this.ctx.store.query(
      `SELECT 1 FROM ${FOLDER_RANGES_VIEW} f WHERE f.id = $1 AND ($2::uuid[] IS NULL OR f.folder_path && $2::uuid[])`,
      [id, folders],
    );
    return rows.length > 0;
  }

  /** Interfaces whose name or alias holds `q` (case-insensitive), by node name, node id, ifindex after `after` (keyset). */
  async searchInterfaces(q: {
    pattern: string;
    folders: string[] | null;
    groupId: string | null;
    after: { name: string; nodeId: string; ifindex: number } | null;
    limit: number;
  }): Promise<(InterfaceSearchHit & { sort_name: string })[]> {
    const { rows } = await this.ctx.store.query<InterfaceSearchHit & { sort_name: string }>(
      `SELECT i.node_id, d.name AS node_name, d.address AS node_address, i.ifindex, i.if_name, i.if_alias, i.oper_up, d.name AS sort_name
         FROM ${this.t("interfaces")} i
         JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = i.node_id
        WHERE (i.if_name ILIKE $1 OR i.if_alias ILIKE $1)
          AND ($2::uuid[] IS NULL OR d.folder_path && $2::uuid[])
          AND ($3::uuid IS NULL OR $3::uuid = ANY (d.folder_path))
          AND ($4::text IS NULL OR (d.name COLLATE "C", i.node_id, i.ifindex) > ($4::text, $5::uuid, $6::int))
        ORDER BY d.name COLLATE "C", i.node_id, i.ifindex
        LIMIT $7`,
      [q.pattern, q.folders, q.groupId, q.after?.name ?? null, q.after?.nodeId ?? null, q.after?.ifindex ?? null, q.limit],
    );
    return rows;
  }

  async profileName(id: string): Promise<string | null> {
    const { rows } = await this.ctx.store.query<{ name: string }>(`SELECT name FROM ${PROFILE_DIRECTORY_VIEW} WHERE id = $1`, [id]);
    return rows[0]?.name ?? null;
  }
}
