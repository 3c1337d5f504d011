import { Inject, Injectable } from "@tsed/di";
import { type Queryable } from "../../../core/index.js";
import type { NodeState } from "../contract.js";
import { IncidentRepository } from "../repositories/IncidentRepository.js";
import { Suppression } from "./Suppression.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

export interface NodeStateChange {
  node_id: string;
  state: NodeState;
  folder_path: string[];
}

/**
 * A node's state follows its worst open incident: unreachable > critical > warning
 * > ok (a node the engine has seen and that has no open incident is ok; a node it
 * never saw has no row, which readers show as unknown). A node inside an open
 * maintenance window is `maintenance` whatever its incidents. Changes are written to
 * node_states and published (bus `alerts.node.state`, Socket.IO `alerts.node.state`
 * on channel alerts.active, scoped by the node's folders).
 */
@Injectable()
export class NodeStateService {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  @Inject(IncidentRepository)
  private repo: IncidentRepository;

  @Inject(Suppression)
  private suppression: Suppression;

  /**
   * Recomputes these nodes' states inside `db` (the flush's transaction) and writes
   * the ones that changed; returns them, for `publish` after the commit.
   */
  async recompute(nodes: readonly { id: string; folder_path: readonly string[] }[], db: Queryable, atMs: number = Date.now()): Promise<NodeStateChange[]> {
    if (nodes.length === 0) return [];
    const unique = new Map<string, { id: string; folder_path: readonly string[] }>();
    for (const n of nodes) unique.set(n.id.toLowerCase(), n);
    const ids = [...unique.keys()];
    // One after the other: `db` is one connection (a transaction).
    const worst = await this.repo.worstStates(ids, db);
    const current = await this.repo.nodeStates(ids, db);
    const maintenance = await this.suppression.maintenanceNodes([...unique.values()], atMs, db);
    const changes: NodeStateChange[] = [];
    for (const [id, n] of unique) {
      const desired: NodeState = maintenance.has(id) ? "maintenance" : (worst.get(id) ?? "ok");
      if (current.get(id) !== desired) changes.push({ node_id: id, state: desired, folder_path: [...n.folder_path] });
    }
    await this.repo.upsertNodeStates(changes, db);
    return changes;
  }

  /** Drops the state rows of deleted nodes. */
  async forget(nodeIds: readonly string[], db: Queryable): Promise<void> {
    await this.repo.deleteNodeStates(nodeIds, db);
  }

  async publish(changes: readonly NodeStateChange[]): Promise<void> {
    for (const c of changes) {
      this.ctx.realtime.publish("active", "node.state", c, { folders: c.folder_path });
      await this.ctx.bus.emit("alerts.node.state", c);
    }
  }

  /**
   * Re-evaluates every node entering or leaving maintenance (windows open and close
   * with the clock, not with samples): the nodes inside an open window now and the
   * nodes whose stored state is maintenance. Run periodically (job
   * `alerts.node-states`) and after maintenance windows change.
   */
  async refreshMaintenance(atMs: number = Date.now()): Promise<NodeStateChange[]> {
    const inside = await this.suppression.allMaintenanceNodes(atMs);
    const leaving = await this.repo.nodesInState("maintenance");
    const known = new Set(inside.map((n) => n.id.toLowerCase()));
    const missing = leaving.filter((id) => !known.has(id.toLowerCase()));
    const paths = missing.length ? await this.repo.nodesCovered(missing, []) : [];
    const nodes = [...inside, ...paths];
    if (nodes.length === 0) return [];
    const changes = await this.ctx.store.tx((db) => this.recompute(nodes, db, atMs));
    await this.publish(changes);
    return changes;
  }
}
