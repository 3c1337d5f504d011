/**
 * The core's tee (see Tee): what this replica's own listeners receive — the `default` pool's, the pool of the core's
 * embedded poller — to every destination without a pool and to those of `default` (another pool's destinations are
 * teed by that pool's pollers, see poller/passive.ts), plus the tee's Prometheus metrics.
 */
import { Inject, Injectable } from "@tsed/di";
import { SyslogMirror } from "../../events/contract.js";
import { FORWARDING_CONTEXT, type ForwardingContext } from "../context.js";
import type { DestinationCounters } from "../lib/types.js";
import { CORE_POOL, Tee, type DestinationSource } from "./Tee.js";
import { UdpRelay } from "./UdpRelay.js";

export { CORE_POOL, TokenBucket, subjectOf, flowSubjectOf, type DestinationSource } from "./Tee.js";

@Injectable()
export class ForwardingTee {
  @Inject(FORWARDING_CONTEXT)
  private ctx: ForwardingContext;

  @Inject(SyslogMirror)
  private syslogMirror: SyslogMirror;

  @Inject(UdpRelay)
  private udpRelay: UdpRelay;

  private teeInstance: Tee | null = null;
  private metricsRegistered = false;

  private get tee(): Tee {
    this.teeInstance ??= new Tee({
      config: this.ctx.config,
      log: this.ctx.log,
      bus: this.ctx.bus,
      pool: CORE_POOL,
      // Verbatim, unfiltered UDP relays ride the events plugin's UDP listener (its reader thread relays them).
      mirror: this.ctx.config.udpFastPath ? this.syslogMirror : undefined,
      relayPort: this.ctx.config.relay.udp !== null ? this.udpRelay : undefined,
    });
    return this.teeInstance;
  }

  /**
   * The tee's metrics (once per kernel), read on scrape from each running destination's counters (label `destination`:
   * its id, bounded by the destination cap; a deleted destination's series go with it).
   */
  private registerMetrics(): void {
    if (this.metricsRegistered) return;
    this.metricsRegistered = true;
    const m = this.ctx.metrics;
    m.counter({
      name: "forwarded_total",
      help: "Messages, traps and flow datagrams or records sent per destination.",
      labelNames: ["destination"],
      collect: (report) => {
        for (const [id, r] of this.tee.running) report({ destination: id }, r.counters.forwarded);
      },
    });
    m.counter({
      name: "dropped_total",
      help: "What a destination did not send, by reason: filter (did not match), rate_limit, queue (its queue was full), error (a send failed).",
      labelNames: ["destination", "reason"],
      collect: (report) => {
        for (const [id, r] of this.tee.running) {
          const c = r.counters;
          report({ destination: id, reason: "filter" }, c.dropped_filter);
          report({ destination: id, reason: "rate_limit" }, c.dropped_rate_limit);
          report({ destination: id, reason: "queue" }, c.dropped_queue);
          report({ destination: id, reason: "error" }, c.send_errors);
        }
      },
    });
    m.gauge({
      name: "queued",
      help: "Messages waiting in a destination's queue (stream senders).",
      labelNames: ["destination"],
      collect: (g) => {
        for (const [id, r] of this.tee.running) g.set({ destination: id }, r.counters.queued);
      },
    });
  }

  /** This replica's counters for a destination (zeros when it has sent nothing yet). */
  status(id: string): DestinationCounters {
    return this.tee.status(id);
  }

  async start(source: DestinationSource): Promise<void> {
    this.registerMetrics();
    await this.tee.start(source);
  }

  stop(): Promise<void> {
    return this.tee.stop();
  }

  /** Re-reads the destinations now (tests, and a change made through this replica's API). */
  reload(): Promise<void> {
    return this.tee.reload();
  }
}
