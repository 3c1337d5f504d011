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
/** The mirror generations a record can carry (SyslogMirror.set, Inbound.mirror_gen): 1 to this; 0 = relayed nowhere. */
export const MIRROR_GENERATIONS = 127;

export abstract class SyslogMirror {
  /**
   * The targets (IP literals) to relay to, replacing the previous list; [] stops. Kept for listeners bound later.
   * `generation` (1 to MIRROR_GENERATIONS, the caller's count of its changes) comes back as `mirror_gen` on each Inbound the readers
   * read under these targets, so the caller knows which targets already have it.
   */
  abstract set(targets: readonly MirrorTarget[], generation: number): void;
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
