import type { KernelConfig } from "./Config.js";

/** What the request pipeline needs to know about this deployment (injected into Ts.ED by class token). */
export class KernelRuntime {
  constructor(readonly config: KernelConfig) {}

  get skeleton(): boolean {
    return this.config.mode === "skeleton";
  }

  get publicDashboard(): boolean {
    return this.config.publicDashboard;
  }
}
