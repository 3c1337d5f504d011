import type { Logger } from "../logging/Logger.js";

/**
 * Domain events between plugins. A plugin adds its events by declaration merging
 * on this module (only declared events can be emitted or listened to):
 *
 *   declare module "nms-core/bus" { interface BusEvents { "inventory.node.created": { id: string } } }
 *
 * (built-in plugins: `declare module "../../core/bus/EventBus.js"`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface BusEvents {}

type Handler<P> = (payload: P) => void | Promise<void>;
type EventName = keyof BusEvents & string;

/**
 * In-process, typed, asynchronous: `emit` returns once every handler settled;
 * a failing handler is logged and never breaks the emitter or its neighbours.
 */
export class EventBus {
  private handlers = new Map<string, Set<Handler<unknown>>>();
  private watchers = new Map<string, Set<(count: number) => void>>();

  constructor(private readonly log: Logger) {}

  on<E extends EventName>(event: E, handler: Handler<BusEvents[E]>): () => void {
    const set = this.handlers.get(event) ?? new Set();
    set.add(handler as Handler<unknown>);
    this.handlers.set(event, set);
    this.changed(event);
    return () => {
      if (set.delete(handler as Handler<unknown>)) this.changed(event);
    };
  }

  /**
   * Calls `fn` with the number of an event's handlers whenever it changes (and once now): an emitter whose payload is
   * costly to make (copied from a worker thread) makes it only while somebody listens. Returns the unsubscribe.
   */
  watchListeners(event: EventName, fn: (count: number) => void): () => void {
    const set = this.watchers.get(event) ?? new Set();
    set.add(fn);
    this.watchers.set(event, set);
    fn(this.listenerCount(event));
    return () => set.delete(fn);
  }

  private changed(event: string): void {
    const watchers = this.watchers.get(event);
    if (!watchers?.size) return;
    const count = this.listenerCount(event);
    for (const fn of watchers) {
      try {
        fn(count);
      } catch (err) {
        this.log.error("bus listener watcher failed", { event, error: err });
      }
    }
  }

  async emit<E extends EventName>(event: E, payload: BusEvents[E]): Promise<void> {
    const set = this.handlers.get(event);
    if (!set?.size) return;
    await Promise.all(
      [...set].map(async (h) => {
        try {
          await h(payload);
        } catch (err) {
          this.log.error("bus handler failed", { event, error: err });
        }
      }),
    );
  }

  listenerCount(event: string): number {
    return this.handlers.get(event)?.size ?? 0;
  }

  clear(): void {
    this.handlers.clear();
  }
}
