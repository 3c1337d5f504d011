import type { KernelConfig } from "./Config.js";

/**
 * Where the kernel is in its life: `starting` from the first phase until every plugin and the job scheduler run,
 * `ready` while it serves, `stopping` from the moment a stop begins. Only a ready kernel takes API requests; the others
 * answer 503 (see HttpApp), so a balancer that sends traffic early, or to a replica that is stopping, never sees a 500.
 */
export type Readiness = "starting" | "ready" | "stopping";

/** What the request pipeline needs to know about this deployment (injected into Ts.ED by class token). */
export class KernelRuntime {
  phase: Readiness = "starting";
  /**
   * Set when a stop begins with http.stopDrainMs > 0: the health routes already say `stopping` (a balancer takes the
   * replica out of rotation) while `phase` stays `ready` and requests are still served, until the drain time is over.
   */
  draining = false;

  /** What the health routes report: `stopping` from the start of a drain. */
  get reported(): Readiness {
    return this.draining && this.phase === "ready" ? "stopping" : this.phase;
  }

  constructor(readonly config: KernelConfig) {}

  get skeleton(): boolean {
    return this.config.mode === "skeleton";
  }

  get publicDashboard(): boolean {
    return this.config.publicDashboard;
  }
}
