import { Inject, Injectable } from "@tsed/di";
import type { Queryable } from "../../../core/index.js";
import { MaintenanceCalendar } from "../lib/maintenanceTime.js";
import { IncidentRepository } from "../repositories/IncidentRepository.js";

export type SuppressionReason = "mute" | "maintenance";

/** A node-level subject the engine asks about. */
export interface SuppressionSubject {
  node_id: string;
  /** The metric (the liveness metric for liveness alerts). */
  metric: string;
  folder_path: readonly string[];
}

const pairKey = (nodeId: string, metric: string) => `${nodeId.toLowerCase()}|${metric}`;

/**
 * Whether a node's notifications are suppressed: the node is in an open maintenance
 * window (named directly, or filed under a named folder at any depth), or the
 * node + metric is muted (a mute row with `until` in the future whose metric_name is
 * the metric; liveness alerts are muted by the metric `reachable`). Maintenance is
 * reported before a mute. Reads the mutes and maintenance_windows tables, one query
 * each for a whole batch; the time math is lib/maintenanceTime.ts.
 */
@Injectable()
export class Suppression {
  @Inject(IncidentRepository)
  private repo: IncidentRepository;

  /** Reason per subject (keyed `node|metric`), absent when not suppressed. */
  async reasons(subjects: readonly SuppressionSubject[], atMs: number = Date.now(), db?: Queryable): Promise<Map<string, SuppressionReason>> {
    const out = new Map<string, SuppressionReason>();
    if (subjects.length === 0) return out;
    const inMaintenance = await this.maintenanceNodes(
      subjects.map((s) => ({ id: s.node_id, folder_path: s.folder_path })),
      atMs,
      db,
    );
    const nodeIds = [...new Set(subjects.map((s) => s.node_id.toLowerCase()))];
    const mutes = await this.repo.activeMutes(nodeIds, db);
    const muted = new Set(mutes.map((m) => pairKey(m.node_id, m.metric_name)));
    for (const s of subjects) {
      const key = pairKey(s.node_id, s.metric);
      if (inMaintenance.has(s.node_id.toLowerCase())) out.set(key, "maintenance");
      else if (muted.has(key)) out.set(key, "mute");
    }
    return out;
  }

  /** The one subject's reason, or null. */
  async reason(subject: SuppressionSubject, atMs: number = Date.now()): Promise<SuppressionReason | null> {
    return (await this.reasons([subject], atMs)).get(pairKey(subject.node_id, subject.metric)) ?? null;
  }

  /** Which of these nodes are inside an open maintenance window at `atMs` (lower-cased ids). */
  async maintenanceNodes(nodes: readonly { id: string; folder_path: readonly string[] }[], atMs: number = Date.now(), db?: Queryable): Promise<Set<string>> {
    const out = new Set<string>();
    if (nodes.length === 0) return out;
    const nodeIds = [...new Set(nodes.map((n) => n.id.toLowerCase()))];
    const folderIds = [...new Set(nodes.flatMap((n) => n.folder_path.map((f) => f.toLowerCase())))];
    const calendar = MaintenanceCalendar.fromRows(await this.repo.candidateWindows(nodeIds, folderIds, db));
    const at = new Date(atMs);
    if (calendar.activeAt(at).length === 0) return out;
    for (const n of nodes) {
      if (calendar.isInMaintenance(n.id.toLowerCase(), n.folder_path, at)) out.add(n.id.toLowerCase());
    }
    return out;
  }

  /** Every node inside an open maintenance window now (the periodic node-state refresh). */
  async allMaintenanceNodes(atMs: number = Date.now()): Promise<{ id: string; folder_path: string[] }[]> {
    const at = new Date(atMs);
    const open = MaintenanceCalendar.fromRows(await this.repo.candidateWindows(null, null)).activeAt(at);
    if (open.length === 0) return [];
    const nodeIds = open.filter((o) => o.window.target_kind === "node").flatMap((o) => o.window.target_ids);
    const folderIds = open.filter((o) => o.window.target_kind === "folder").flatMap((o) => o.window.target_ids);
    return this.repo.nodesCovered([...new Set(nodeIds)], [...new Set(folderIds)]);
  }
}

export { pairKey as suppressionKey };
