import type { EventBus } from "../../../core/index.js";
import type { Inbound } from "./types.js";

/** Most records one `events.received` batch carries; past it a turn's records start a new batch. */
const MAX_BATCH = 5000;

/**
 * Publishes what the listeners receive on the bus (`events.received`) for the forwarding tee: batched per turn of
 * the event loop (a record waits at most until the next setImmediate), and free when nobody subscribes. The bus
 * emit is not awaited: a slow subscriber never slows a receiver (the tee has its own bounded queues).
 */
export class ReceivedFeed {
  private batch: Inbound[] = [];
  private scheduled = false;

  constructor(private readonly bus: EventBus) {}

  push(m: Inbound): void {
    if (this.bus.listenerCount("events.received") === 0) return;
    this.batch.push(m);
    if (this.batch.length >= MAX_BATCH) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.batch.length === 0) return;
    const events = this.batch;
    this.batch = [];
    void this.bus.emit("events.received", { events });
  }
}
