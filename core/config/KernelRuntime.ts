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

  constructor(readonly config: KernelConfig) {}

  get skeleton(): boolean {
    return this.config.mode === "skeleton";
  }

  get publicDashboard(): boolean {
    return this.config.publicDashboard;
  }
}
