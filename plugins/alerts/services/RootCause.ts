import { Inject, Injectable } from "@tsed/di";
import type { Queryable } from "../../../core/index.js";
import { Upstream } from "../../topology/contract.js";
import type { AlertSymptoms, SymptomOf } from "../contract.js";
import { LIVENESS_CHECK_ID } from "../lib/checks.js";
import type { HistoryInsert } from "../repositories/IncidentRepository.js";
import { RootCauseRepository, type CauseLink } from "../repositories/RootCauseRepository.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/**
 * Root-cause alerts (docs/topology.md): an open unreachable (liveness) incident whose upstream path (the topology
 * plugin's Upstream token) holds nodes with an open unreachable incident is a symptom of the farthest up of them (the
 * root cause: nearest the pool's seed), re-pointed as incidents further up fire and clear.
 * Decided from the store, inside the flush's transaction, under a lock: the engines are partitioned among replicas, so
 * the cause's incident may be another replica's. Without the topology plugin nothing is linked.
 */
@Injectable()
export class RootCause implements AlertSymptoms {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  @Inject(RootCauseRepository)
  private repo: RootCauseRepository;

  private upstreamToken: Upstream | null | undefined;

  /** The topology plugin's Upstream, or null when that plugin is not loaded (an optional dependency). */
  private upstream(): Upstream | null {
    if (this.upstreamToken === undefined) {
      try {
        this.upstreamToken = this.ctx.get(Upstream);
      } catch {
        this.upstreamToken = null;
      }
    }
    return this.upstreamToken;
  }

  /**
   * After a flush's rows are written (same transaction): gives a clear row the cause its fire row names, unlinks the
   * symptoms of causes that cleared, and links every open unreachable incident to the farthest open one upstream (its
   * fire history row too). Answers the symptom_of of this flush's rows, by history row id.
   */
  async apply(rows: readonly HistoryInsert[], closedKeys: ReadonlySet<string>, db: Queryable): Promise<Map<string, SymptomOf>> {
    const out = new Map<string, SymptomOf>();
    const liveness = rows.filter((r) => r.check_id === LIVENESS_CHECK_ID && r.node_id !== null);
    if (liveness.length === 0) return out;
    await this.repo.lock(db);
    const causes = new Map<string, { incident_key: string; node_id: string }>();

    const cleared = liveness.filter((r) => r.resolved && closedKeys.has(r.incident_key));
    for (const s of await this.repo.stampClears(cleared, db)) {
      causes.set(s.id, { incident_key: s.cause_incident_key, node_id: s.cause_node_id });
    }
    // The cause cleared: its symptoms are no longer linked (they clear on their own reachability).
    await this.repo.unlink([...new Set(cleared.map((r) => r.incident_key))], db);

    const upstream = this.upstream();
    if (upstream) {
      const open = await this.repo.openUnreachable(db);
      const byNode = new Map(open.map((o) => [o.node_id, o.incident_key]));
      const links: CauseLink[] = [];
      const unlinked: string[] = [];
      for (const o of open) {
        // The root: the unreachable node farthest up the path (nearest the seed), whatever fired first.
        const path = await upstream.pathOf(o.node_id);
        const cause = path.filter((n) => n !== o.node_id && byNode.has(n)).pop();
        const want = cause ? byNode.get(cause)! : null;
        if (want === o.cause_incident_key) continue;
        if (cause) links.push({ incident_key: o.incident_key, cause_incident_key: want!, cause_node_id: cause });
        else unlinked.push(o.incident_key);
      }
      await this.repo.link(links, db);
      // Only the open row: a fire row keeps the cause it was a symptom of.
      await this.repo.unlinkIncidents(unlinked, db);
      const linked = new Map(links.map((l) => [l.incident_key, l]));
      for (const r of liveness) {
        const l = !r.resolved ? linked.get(r.incident_key) : undefined;
        if (l) causes.set(r.id, { incident_key: l.cause_incident_key, node_id: l.cause_node_id });
      }
    }

    const names = await this.repo.nodeNames([...new Set([...causes.values()].map((c) => c.node_id))], db);
    for (const [id, c] of causes) out.set(id, { incident_key: c.incident_key, node: c.node_id, node_name: names.get(c.node_id) ?? null });
    return out;
  }

  async symptomOf(incidentKey: string): Promise<SymptomOf | null> {
    const c = await this.repo.fireCause(incidentKey);
    return c ? { incident_key: c.cause_incident_key, node: c.cause_node_id, node_name: c.name } : null;
  }
}
