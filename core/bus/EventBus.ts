import type { Logger } from "../logging/Logger.js";

/**
 * Domain events between plugins. Plugins add their events by declaration merging:
 *
 *   declare module "nms-core" { interface BusEvents { "inventory.node.created": { id: string } } }
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

  constructor(private readonly log: Logger) {}

  on<E extends EventName>(event: E, handler: Handler<BusEvents[E]>): () => void;
  on(event: string, handler: Handler<unknown>): () => void;
  on(event: string, handler: Handler<unknown>): () => void {
    const set = this.handlers.get(event) ?? new Set();
    set.add(handler);
    this.handlers.set(event, set);
    return () => set.delete(handler);
  }

  async emit<E extends EventName>(event: E, payload: BusEvents[E]): Promise<void>;
  async emit(event: string, payload: unknown): Promise<void>;
  async emit(event: string, payload: unknown): Promise<void> {
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
