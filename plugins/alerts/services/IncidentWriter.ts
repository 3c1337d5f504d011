import { Inject, Injectable } from "@tsed/di";
import type { AlertTransition, SymptomOf } from "../contract.js";
import { transitionOf } from "../lib/history.js";
import { IncidentRepository, type ActiveRow, type HistoryInsert } from "../repositories/IncidentRepository.js";
import { NodeStateService, type NodeStateChange } from "./NodeStateService.js";
import { RootCause } from "./RootCause.js";
import { Suppression, suppressionKey, type SuppressionReason, type SuppressionSubject } from "./Suppression.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/** One committed fire or clear, as the engine decided it. */
export interface PendingTransition {
  row: HistoryInsert;
  /** For a fire: the open incident to store; for a clear: null (the incident row goes). */
  active: ActiveRow | null;
  /** The node's folders from the root (empty for pool subjects). */
  folder_path: string[];
  /** Metric the mute check uses (the liveness metric for liveness rows); null for subjects that cannot be muted. */
  mute_metric: string | null;
}

/** What one flush carries besides transitions. */
export interface FlushExtras {
  /** Nodes whose state must be re-evaluated even without a transition (first seen since start). */
  nodes: { id: string; folder_path: readonly string[] }[];
  /** Deleted nodes whose state row goes. */
  forget: string[];
}

export interface FlushResult {
  recorded_at: string | null;
  transitions: AlertTransition[];
  states: NodeStateChange[];
}

/**
 * Writes one flush: every transition of the window in one multi-row history insert
 * sharing `recorded_at` (the transaction's time), the open-incident rows opened,
 * moved or closed, and the node states that changed, in one transaction. After the
 * commit it announces each transition in decision order: bus `alerts.fired` /
 * `alerts.resolved`, or `alerts.suppressed` with the reason when the node is in
 * maintenance or the node + metric is muted (history is written either way), and
 * the Socket.IO events `alerts.fired` / `alerts.resolved` on channel `alerts.active`
 * to sockets whose scope covers the node's folders.
 */
@Injectable()
export class IncidentWriter {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  @Inject(IncidentRepository)
  private repo: IncidentRepository;

  @Inject(NodeStateService)
  private states: NodeStateService;

  @Inject(Suppression)
  private suppression: Suppression;

  @Inject(RootCause)
  private rootCause: RootCause;

  /** Every open incident (the engine restores its state from them at start). */
  loadActive(): Promise<ActiveRow[]> {
    return this.repo.loadActive();
  }

  async write(pending: readonly PendingTransition[], extras: FlushExtras = { nodes: [], forget: [] }): Promise<FlushResult> {
    if (pending.length === 0 && extras.nodes.length === 0 && extras.forget.length === 0) return { recorded_at: null, transitions: [], states: [] };
    const now = Date.now();
    const { recordedAt, reasons, stateChanges, symptoms } = await this.ctx.store.tx(async (db) => {
      let recordedAt: string | null = null;
      let symptoms = new Map<string, SymptomOf>();
      if (pending.length > 0) {
        recordedAt = await this.repo.now(db);
        await this.repo.insertHistory(
          pending.map((p) => p.row),
          recordedAt,
          db,
        );
        // Net effect per incident: the last transition of the window decides whether its row stays open.
        const last = new Map<string, PendingTransition>();
        for (const p of pending) last.set(p.row.incident_key, p);
        const open: ActiveRow[] = [];
        const closed: string[] = [];
        for (const [key, p] of last) {
          if (p.active) open.push(p.active);
          else closed.push(key);
        }
        await this.repo.deleteActive(closed, db);
        await this.repo.upsertActive(open, db);
        symptoms = await this.rootCause.apply(
          pending.map((p) => p.row),
          new Set(closed),
          db,
        );
      }
      const forget = new Set(extras.forget.map((id) => id.toLowerCase()));
      await this.states.forget([...forget], db);
      const subjects: SuppressionSubject[] = pending
        .filter((p) => p.row.node_id !== null && p.mute_metric !== null)
        .map((p) => ({ node_id: p.row.node_id!, metric: p.mute_metric!, folder_path: p.folder_path }));
      const reasons = await this.suppression.reasons(subjects, now, db);
      const nodes = [...pending.filter((p) => p.row.node_id !== null).map((p) => ({ id: p.row.node_id!, folder_path: p.folder_path })), ...extras.nodes].filter(
        (n) => !forget.has(n.id.toLowerCase()),
      );
      const stateChanges = await this.states.recompute(nodes, db, now);
      return { recordedAt, reasons, stateChanges, symptoms };
    });

    const transitions: AlertTransition[] = [];
    for (const p of pending) {
      const t = { ...transitionOf(p.row, recordedAt!, p.folder_path), symptom_of: symptoms.get(p.row.id) ?? null };
      transitions.push(t);
      this.ctx.realtime.publish("active", t.resolved ? "resolved" : "fired", t, { folders: t.folder_path });
      const reason: SuppressionReason | undefined =
        p.row.node_id !== null && p.mute_metric !== null ? reasons.get(suppressionKey(p.row.node_id, p.mute_metric)) : undefined;
      if (reason) await this.ctx.bus.emit("alerts.suppressed", { ...t, reason });
      else await this.ctx.bus.emit(t.resolved ? "alerts.resolved" : "alerts.fired", t);
    }
    await this.states.publish(stateChanges);
    return { recorded_at: recordedAt, transitions, states: stateChanges };
  }
}
