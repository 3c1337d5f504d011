import type { BusEvents, EventBus } from "./EventBus.js";

type EventName = keyof BusEvents & string;

/**
 * Publishes items on the bus in batches, one batch per turn of the event loop (an item waits at most until the
 * next setImmediate, or until `maxBatch` items are waiting): for receivers that hand every datagram on and must
 * never wait. Free when the event has no subscriber (items are not even kept). The emit is not awaited: a slow
 * subscriber never slows the receiver, so subscribers keep their own bounded queues.
 */
export class TurnBatcher<E extends EventName, T> {
  private batch: T[] = [];
  private scheduled = false;

  constructor(
    private readonly bus: EventBus,
    private readonly event: E,
    private readonly payload: (items: T[]) => BusEvents[E],
    private readonly maxBatch = 5000,
  ) {}

  push(item: T): void {
    if (this.bus.listenerCount(this.event) === 0) return;
    this.batch.push(item);
    if (this.batch.length >= this.maxBatch) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.batch.length === 0) return;
    const items = this.batch;
    this.batch = [];
    void this.bus.emit(this.event, this.payload(items));
  }
}
