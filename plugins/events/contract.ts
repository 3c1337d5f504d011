/**
 * The events plugin's public contract: the bus event other plugins (forwarding) subscribe to, and the SyslogMirror
 * token its manifest exports. Imports no service and no repository of the plugin.
 */
import type { MirrorCount, MirrorTarget } from "../../core/index.js";
import type { Inbound } from "./lib/types.js";

export type { EventKind, Inbound, SyslogMessage, TrapMessage, Varbind, SdElement } from "./lib/types.js";
export type { MirrorCount, MirrorTarget };

/**
 * The UDP syslog fast path: datagrams the UDP syslog listeners receive, relayed as received to the given targets
 * straight from the socket's reader thread, before they are parsed (forwarding's verbatim, unfiltered destinations).
 */
export abstract class SyslogMirror {
  /** The targets (IP literals) to relay to, replacing the previous list; [] stops. Kept for listeners bound later. */
  abstract set(targets: readonly MirrorTarget[]): void;
  /** Per target id: datagrams relayed and send errors since the target was first set. */
  abstract counts(): ReadonlyMap<string, MirrorCount>;
}

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
