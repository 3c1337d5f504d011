/**
 * The events plugin's UDP syslog fast path, for the forwarding tee (its contract): datagrams the UDP syslog listeners
 * receive are relayed as received to the given targets straight from the socket's reader thread, before they are
 * parsed — so a verbatim, unfiltered relay keeps up with the socket whatever the pipeline's pace. What it relays is
 * counted per target id.
 */
import { Inject, Injectable } from "@tsed/di";
import type { MirrorCount, MirrorTarget, SyslogMirror } from "../contract.js";
import { ListenerService } from "./ListenerService.js";

@Injectable()
export class SyslogUdpMirror implements SyslogMirror {
  @Inject(ListenerService)
  private listeners: ListenerService;

  /** The targets (IP literals) to relay to, replacing the previous list; [] stops; `generation`: see SyslogMirror. */
  set(targets: readonly MirrorTarget[], generation: number): void {
    this.listeners.mirrorSyslogUdp(targets, generation);
  }

  /** Per target id: datagrams relayed and send errors since the target was first set. */
  counts(): Map<string, MirrorCount> {
    return this.listeners.syslogUdpMirrorCounts();
  }
}
