import type { MetricCounter } from "../../../core/index.js";
import type { AlertsContext } from "../context.js";
import type { FlushExtras, PendingTransition } from "./IncidentWriter.js";

const MAX_FLUSH_ATTEMPTS = 5;
/** Above this many queued transitions (the store is down for long) the oldest are dropped, with an error logged. */
const MAX_PENDING = 200_000;

/** What the queue needs of the engine that owns it (read when used: the engine's injected fields resolve late). */
export interface TransitionQueueHost {
  write(batch: PendingTransition[], extras: FlushExtras): Promise<unknown>;
  flushMs(): number;
  log(): AlertsContext["log"];
  /** While the engine runs a failed flush is retried at the end of the next window. */
  running(): boolean;
}

/**
 * The alert engine's transitions on their way to IncidentWriter: everything decided within one flush window
 * (`pluginConfig.alerts.flushMs`) is written in one transaction, with the nodes first seen and the nodes deleted since
 * the last flush. A failed write is retried MAX_FLUSH_ATTEMPTS times, then dropped (logged).
 */
export class TransitionQueue {
  counts = { transitions: 0, flushes: 0, flush_failures: 0 };
  private pending: PendingTransition[] = [];
  private attempts = 0;
  private nodes = new Map<string, { id: string; folder_path: readonly string[] }>();
  private forget = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private transitionsMetric?: MetricCounter<"kind">;
  private droppedMetric?: MetricCounter;

  constructor(private readonly host: TransitionQueueHost) {}

  /** Transitions waiting for the next write. */
  get depth(): number {
    return this.pending.length;
  }

  setMetrics(transitions: MetricCounter<"kind">, dropped: MetricCounter): void {
    this.transitionsMetric = transitions;
    this.droppedMetric = dropped;
  }

  /** Empties the queue and its counts (the engine starts again from the store). */
  reset(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = [];
    this.attempts = 0;
    this.nodes = new Map();
    this.forget = new Set();
    this.chain = Promise.resolve();
    this.counts = { transitions: 0, flushes: 0, flush_failures: 0 };
  }

  push(p: PendingTransition): void {
    this.pending.push(p);
    this.counts.transitions++;
    this.transitionsMetric?.inc({ kind: p.active ? "fire" : "clear" });
    if (this.pending.length > MAX_PENDING) {
      const dropped = this.pending.splice(0, this.pending.length - MAX_PENDING);
      this.droppedMetric?.inc({}, dropped.length);
      this.host.log().error("alert engine: transitions dropped, the store did not take them", { dropped: dropped.length });
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flushNow();
    }, this.host.flushMs());
    this.timer.unref?.();
  }

  /** A node seen for the first time since start: its state is evaluated at the next write, transition or not. */
  nodeSeen(node: { id: string; folder_path: readonly string[] }): void {
    this.nodes.set(node.id, { id: node.id, folder_path: node.folder_path });
    this.schedule();
  }

  /** A deleted node: its state row goes at the next write. */
  nodeDeleted(id: string): void {
    this.nodes.delete(id);
    this.forget.add(id);
    this.schedule();
  }

  /** Writes what is pending now (instead of at the end of the flush window). */
  flushNow(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.chain = this.chain.then(() => this.flushOnce());
    return this.chain;
  }

  private async flushOnce(): Promise<void> {
    if (this.pending.length === 0 && this.nodes.size === 0 && this.forget.size === 0) return;
    const batch = this.pending;
    const nodes = [...this.nodes.values()];
    const forget = [...this.forget];
    this.pending = [];
    this.nodes = new Map();
    this.forget = new Set();
    try {
      await this.host.write(batch, { nodes, forget });
      this.counts.flushes++;
      this.attempts = 0;
    } catch (err) {
      this.counts.flush_failures++;
      this.attempts++;
      if (this.attempts >= MAX_FLUSH_ATTEMPTS) {
        this.host.log().error("alert engine: flush failed, transitions dropped", { error: err, transitions: batch.length, attempts: this.attempts });
        this.attempts = 0;
        return;
      }
      this.host.log().warn("alert engine: flush failed, will retry", { error: err, transitions: batch.length, attempts: this.attempts });
      this.pending = batch.concat(this.pending);
      for (const n of nodes) if (!this.nodes.has(n.id)) this.nodes.set(n.id, n);
      for (const id of forget) this.forget.add(id);
      if (this.host.running()) this.schedule();
    }
  }
}
