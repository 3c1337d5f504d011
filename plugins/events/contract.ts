/** The events plugin's public contract: the bus event other plugins (forwarding) subscribe to. */
import type { Inbound } from "./lib/types.js";

export type { EventKind, Inbound, SyslogMessage, TrapMessage, Varbind, SdElement } from "./lib/types.js";

declare module "../../core/bus/EventBus.js" {
  interface BusEvents {
    /** Messages as received (before attribution), batched per flush; the forwarding tee subscribes to it. */
    "events.received": { events: readonly Inbound[] };
  }
}
