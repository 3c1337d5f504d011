/** The events plugin's public contract: the bus event other plugins (forwarding) subscribe to. */
import type { Inbound } from "./lib/types.js";

export type { EventKind, Inbound, SyslogMessage, TrapMessage, Varbind, SdElement } from "./lib/types.js";
/** The UDP syslog fast path: datagrams relayed as received from the listener's reader thread (forwarding's verbatim, unfiltered destinations). */
export { SyslogUdpMirror } from "./services/SyslogUdpMirror.js";

declare module "../../core/bus/EventBus.js" {
  interface BusEvents {
    /**
     * What this replica's syslog and trap listeners received (before attribution; not HTTP ingest, not what remote
     * pollers forwarded), batched per turn of the event loop, each with its original `bytes`; the forwarding tee
     * subscribes to it. Published whether or not the store keeps up (the tee is independent of storage).
     */
    "events.received": { events: readonly Inbound[] };
  }
}

/** Read-only view for the reports plugin (migration 0900): events with kind, source (id, name), node, folder path and rule outcome (action). */
export const REPORT_EVENTS_VIEW = "events.report_events";
