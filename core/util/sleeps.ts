/**
 * Delays that can all be cut short at once: a restart waiting out its backoff ends at once when the service closes.
 * The timers never keep the process alive.
 */
export class WakeableSleeps {
  private readonly sleepers = new Set<() => void>();

  /** Resolves after `ms`, or at wakeAll(). */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.sleepers.add(done);
    });
  }

  /** Ends every sleep under way now. */
  wakeAll(): void {
    for (const wake of [...this.sleepers]) wake();
  }
}
