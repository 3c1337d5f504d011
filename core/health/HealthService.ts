import type { Readiness } from "../config/KernelRuntime.js";
import type { ListenerStatus } from "../pluginhost/manifest.js";
import type { Store } from "../store/Store.js";
import { within } from "../util/within.js";

/** How long the health report waits for the store's `SELECT 1` before it says the store is down. */
export const HEALTH_STORE_TIMEOUT_MS = 2000;

export interface HealthReportData {
  /** ok: ready and the store answers; degraded: the store is down; starting / stopping: not taking API requests. */
  status: "ok" | "degraded" | "starting" | "stopping";
  /** Whether the API takes requests (every boot phase done, no stop begun) and the store answers. */
  ready: boolean;
  mode: "full" | "skeleton";
  public_dashboard: boolean;
  version: string;
  store: { kind: "external" | "embedded" | "none"; status: "ok" | "down" | "absent" };
  plugins: { id: string; version: string }[];
  /** Public: which listeners are bound where, without addresses or counters (GET /listeners has those). */
  listeners: Pick<ListenerStatus, "plugin" | "name" | "protocol" | "bound" | "port">[];
  uptime_secs: number;
}

export class HealthService {
  private readonly startedAt = Date.now();

  constructor(
    private readonly store: Store,
    private readonly info: {
      mode: "full" | "skeleton";
      publicDashboard: boolean;
      version: string;
      storeKind: "external" | "embedded" | "none";
      plugins: () => { id: string; version: string }[];
      listeners: () => ListenerStatus[];
      readiness: () => Readiness;
    },
  ) {}

  /** Every declared listener of every plugin, with its address and live counters. */
  listeners(): ListenerStatus[] {
    return this.info.listeners();
  }

  /** Seconds since the kernel began to boot. */
  uptimeSecs(): number {
    return Math.round((Date.now() - this.startedAt) / 1000);
  }

  /** Where the kernel is in its life (starting, ready, stopping). */
  phase(): Readiness {
    return this.info.readiness();
  }

  async report(): Promise<HealthReportData> {
    let status: "ok" | "down" | "absent" = "absent";
    if (this.store.available) {
      try {
        // A balancer's probe gets its answer in time: a store that has not answered within the bound counts as down
        // (while PostgreSQL restarts, a query can wait the pool's 5-s connect timeout, and more on a loaded machine).
        status = (await within(this.store.query("SELECT 1"), HEALTH_STORE_TIMEOUT_MS)) ? "ok" : "down";
      } catch {
        status = "down";
      }
    }
    const phase = this.info.readiness();
    const overall = phase !== "ready" ? phase : status === "down" ? "degraded" : "ok";
    return {
      status: overall,
      ready: overall === "ok",
      mode: this.info.mode,
      public_dashboard: this.info.publicDashboard,
      version: this.info.version,
      store: { kind: this.info.storeKind, status },
      plugins: this.info.plugins(),
      listeners: this.info.listeners().map(({ plugin, name, protocol, bound, port }) => ({ plugin, name, protocol, bound, port })),
      uptime_secs: this.uptimeSecs(),
    };
  }
}
