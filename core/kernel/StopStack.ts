import type { Logger } from "../logging/Logger.js";

/**
 * What undoes each boot phase, undone last-in-first-out: on shutdown, and when a later phase fails at boot.
 * A failing step is logged by name and the others still run.
 */
export class StopStack {
  private readonly steps: { name: string; stop: () => Promise<void> }[] = [];

  constructor(private readonly log: Logger) {}

  push(name: string, stop: () => Promise<void>): void {
    this.steps.push({ name, stop });
  }

  async unwind(): Promise<void> {
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        this.log.debug("stopping", { step: step.name });
        await step.stop();
      } catch (err) {
        this.log.error(`${step.name} stop failed`, { error: err });
      }
    }
  }
}
