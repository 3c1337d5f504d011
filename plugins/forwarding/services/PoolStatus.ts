/**
 * What the pollers report about the destinations they tee (POST /forwarding/pollers/sync): their counters, kept in
 * memory on the replica that took the report. The status route of a destination sums this replica's own counters and
 * the reports that are fresh (within three reload periods), and lists each poller's connection.
 */
import { Inject, Injectable } from "@tsed/di";
import { FORWARDING_CONTEXT, type ForwardingContext } from "../context.js";
import type { ConnectionState, DestinationCounters } from "../lib/types.js";

export interface PollerReport {
  poller_id: string;
  reported_at: string;
  connection: ConnectionState;
  last_error_class: string | null;
}

const COUNTS = ["forwarded", "dropped_filter", "dropped_rate_limit", "dropped_queue", "send_errors", "connection_errors", "queued"] as const;
const CONNECTIONS: readonly ConnectionState[] = ["idle", "ready", "connecting", "connected", "disconnected", "disabled", "not_built"];

/** Most destinations one report may name (the destination cap bounds it anyway). */
const MAX_PER_REPORT = 10_000;

/** A poller's counters as reported, each number checked (a non-negative safe integer, else 0). */
export function cleanCounters(raw: unknown): DestinationCounters | null {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  const text = (v: unknown, max: number) => (typeof v === "string" && v.length <= max ? v : null);
  const out = { last_error_class: text(r.last_error_class, 40), last_error_at: text(r.last_error_at, 40) } as DestinationCounters;
  for (const k of COUNTS) out[k] = n(r[k]);
  out.connection = CONNECTIONS.includes(r.connection as ConnectionState) ? (r.connection as ConnectionState) : "idle";
  return out;
}

@Injectable()
export class PoolStatus {
  @Inject(FORWARDING_CONTEXT)
  private ctx: ForwardingContext;

  /** destination id → poller id → its latest counters and when they came. */
  private readonly reports = new Map<string, Map<string, { at: number; counters: DestinationCounters }>>();

  record(pollerId: string, counters: Record<string, unknown>): void {
    const now = Date.now();
    // Reports of destinations (or pollers) gone quiet for ten periods are forgotten.
    const stale = now - 10 * this.ctx.config.reloadMs;
    for (const [id, per] of this.reports) {
      for (const [poller, r] of per) if (r.at < stale) per.delete(poller);
      if (per.size === 0) this.reports.delete(id);
    }
    for (const [id, raw] of Object.entries(counters).slice(0, MAX_PER_REPORT)) {
      const c = cleanCounters(raw);
      if (!c) continue;
      const per = this.reports.get(id) ?? new Map();
      per.set(pollerId, { at: now, counters: c });
      this.reports.set(id, per);
    }
  }

  /**
   * A destination's status: this replica's own counters (`local`, from its tee) plus its pollers' fresh reports,
   * summed. The connection is this replica's, unless it does not tee the destination (`idle`, another pool's) and
   * pollers reported: then the first poller's.
   */
  statusOf(id: string, local: DestinationCounters): { counters: DestinationCounters; pollers: PollerReport[] } {
    const reported = this.forDestination(id);
    if (!reported) return { counters: local, pollers: [] };
    const sum = { ...reported.counters };
    for (const k of COUNTS) sum[k] += local[k];
    if (local.connection !== "idle") sum.connection = local.connection;
    if ((local.last_error_at ?? "") > (sum.last_error_at ?? "")) {
      sum.last_error_at = local.last_error_at;
      sum.last_error_class = local.last_error_class;
    }
    return { counters: sum, pollers: reported.pollers };
  }

  /** The fresh reports of a destination summed, with each poller's state; null when no poller reported lately. */
  forDestination(id: string): { counters: DestinationCounters; pollers: PollerReport[] } | null {
    const per = this.reports.get(id);
    if (!per) return null;
    const since = Date.now() - 3 * this.ctx.config.reloadMs;
    const fresh = [...per.entries()].filter(([, r]) => r.at >= since).sort((a, b) => a[0].localeCompare(b[0]));
    if (fresh.length === 0) return null;
    const sum = { ...fresh[0][1].counters };
    for (const [, { counters }] of fresh.slice(1)) {
      for (const k of COUNTS) sum[k] += counters[k];
      if ((counters.last_error_at ?? "") > (sum.last_error_at ?? "")) {
        sum.last_error_at = counters.last_error_at;
        sum.last_error_class = counters.last_error_class;
      }
    }
    const pollers = fresh.map(([poller_id, r]) => ({
      poller_id,
      reported_at: new Date(r.at).toISOString(),
      connection: r.counters.connection,
      last_error_class: r.counters.last_error_class,
    }));
    return { counters: sum, pollers };
  }
}
