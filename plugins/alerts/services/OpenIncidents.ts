import type { Sample } from "../../polling/contract.js";
import { LIVENESS_CHECK_ID, LIVENESS_MUTE_METRIC } from "../lib/checks.js";
import { historyRow } from "../lib/history.js";
import type { ActiveRow } from "../repositories/IncidentRepository.js";
import type { TransitionQueue } from "./TransitionQueue.js";

/** An open incident as the engine keeps it: its active row plus the node's folders (scoped delivery, maintenance). */
export interface OpenIncident extends ActiveRow {
  folder_path: string[];
}

/**
 * The incidents the engine holds open, by incident key. Opening or closing one queues its transition (a history row,
 * the active row or its removal) for the next write.
 */
export class OpenIncidents {
  private open = new Map<string, OpenIncident>();

  constructor(private readonly queue: TransitionQueue) {}

  get size(): number {
    return this.open.size;
  }

  get(key: string): OpenIncident | undefined {
    return this.open.get(key);
  }

  /** A copy: closing incidents while going through it is safe. */
  all(): OpenIncident[] {
    return [...this.open.values()];
  }

  reset(): void {
    this.open = new Map();
  }

  /** An incident open in the store (at start): held, nothing written. */
  restore(inc: OpenIncident): void {
    this.open.set(inc.incident_key, inc);
  }

  /** Lets an incident go without writing anything (its partition moved to another replica, which holds it now). */
  forget(key: string): void {
    this.open.delete(key);
  }

  /** Opens an incident; `muteMetric` is what the mute check uses (null for subjects that cannot be muted). */
  fire(inc: OpenIncident, muteMetric: string | null): void {
    this.open.set(inc.incident_key, inc);
    const { folder_path, ...active } = inc;
    this.queue.push({ row: historyRow(active), active, folder_path, mute_metric: muteMetric });
  }

  /** Closes an incident; `observed` is the sample that committed the clear (threshold checks), `s` its sample for the port's current name. */
  clear(inc: OpenIncident, observed: number | null, s: Sample | null): void {
    if (this.open.get(inc.incident_key) !== inc) return; // already closed (or replaced) in this window
    this.open.delete(inc.incident_key);
    const row = historyRow(inc, { observed_value: observed, if_name: s?.if_name ?? null });
    const muteMetric = inc.subject_kind !== "node" ? null : inc.check_id === LIVENESS_CHECK_ID ? LIVENESS_MUTE_METRIC : inc.metric;
    this.queue.push({ row, active: null, folder_path: inc.folder_path, mute_metric: muteMetric });
  }
}
