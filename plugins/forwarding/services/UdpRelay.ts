/**
 * The relay port (config `relay`): UDP sockets whose reader threads relay every datagram, as received, to the
 * destinations the UDP fast path relays to, and hand nothing over: nothing is parsed, journaled or stored. It serves the
 * tee as a mirror, as the events plugin's UDP syslog listener does (Tee's `mirror`), and counts per destination.
 */
import { Inject, Injectable } from "@tsed/di";
import { startUdpReader, sumMirrorCounts, type ListenerCounters, type MirrorCount, type MirrorTarget, type UdpReader } from "../../../core/index.js";
import { FORWARDING_CONTEXT, type ForwardingContext } from "../context.js";

export const RELAY_LISTENER = "relay.udp";
/** Sockets when `relay.sockets` is null: as many as the syslog listener's (ingest.udpSocketsPerWorker's default). */
const DEFAULT_SOCKETS = 8;

@Injectable()
export class UdpRelay {
  @Inject(FORWARDING_CONTEXT)
  private ctx: ForwardingContext;

  private readers: UdpReader[] = [];
  private targets: readonly MirrorTarget[] = [];
  /** What readers that have since closed read and relayed (so a count never goes back). */
  private closedReceived = 0;
  private closedCounts = new Map<string, MirrorCount>();
  /** GET /listeners reads them live: `received` sums the readers' reports. */
  private readonly counters = Object.defineProperty({ dropped: 0, malformed: 0 }, "received", {
    get: () => this.readers.reduce((n, r) => n + r.received(), this.closedReceived),
    enumerable: true,
  }) as ListenerCounters;

  /** Binds the relay port's sockets (nothing when `relay.udp` is null); a port that cannot be bound is logged, as the listeners' are. */
  async start(): Promise<void> {
    const cfg = this.ctx.config.relay;
    if (cfg.udp === null) return;
    const any = cfg.bindAddress === "0.0.0.0";
    const sockets = cfg.sockets ?? DEFAULT_SOCKETS;
    const open = (port: number, first: boolean) =>
      startUdpReader({
        type: any || cfg.bindAddress.includes(":") ? "udp6" : "udp4",
        host: any ? "::" : cfg.bindAddress,
        port,
        ipv6Only: false,
        reusePort: true,
        recvBufferSize: cfg.receiveBufferBytes,
        // The program that spreads each datagram goes on the first socket, for the port's whole group.
        spreadOver: first && cfg.spread === "datagram" ? sockets : undefined,
        onError: (err) => this.ctx.log.warn("forwarding: relay port socket error", { error: err.message }),
      });
    try {
      // The first socket takes the port (any free one when 0); the others join it.
      this.readers.push(await open(cfg.udp, true));
      const port = this.readers[0].port;
      for (let i = 1; i < sockets; i++) this.readers.push(await open(port, false));
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      this.ctx.log.error(`forwarding: listener ${RELAY_LISTENER} not bound: ${e.code === "EADDRINUSE" ? `port ${cfg.udp} is in use` : e.message}`, {
        port: cfg.udp,
      });
      await this.stop();
      return;
    }
    for (const r of this.readers) r.mirror(this.targets);
    const port = this.readers[0].port;
    this.ctx.reportListener(RELAY_LISTENER, { bound: true, port, address: cfg.bindAddress, counters: this.counters });
    const spread = this.readers[0].spread ? "each datagram to a socket at random" : "each sender to one socket";
    this.ctx.log.info(`forwarding: relay port ${port}/udp on ${cfg.bindAddress} (${this.readers.length} sockets, ${spread})`);
  }

  /** Whether the port's datagrams are spread over its sockets at random (`relay.spread`, where the batched socket runs). */
  get spread(): boolean {
    return this.readers[0]?.spread ?? false;
  }

  async stop(): Promise<void> {
    const readers = this.readers;
    if (readers.length === 0) return;
    await Promise.all(readers.map((r) => r.close()));
    // Their last reports (sent as they closed), kept.
    this.closedReceived = readers.reduce((n, r) => n + r.received(), this.closedReceived);
    this.closedCounts = this.sum(readers);
    this.readers = [];
    this.ctx.reportListener(RELAY_LISTENER, { bound: false, port: null });
  }

  /** The targets (IP literals) to relay to, replacing the previous list; [] stops. Kept for sockets bound later. */
  set(targets: readonly MirrorTarget[]): void {
    this.targets = targets;
    for (const r of this.readers) r.mirror(targets);
  }

  /** Per target id: datagrams relayed and send errors since the target was first set. */
  counts(): Map<string, MirrorCount> {
    return this.sum(this.readers);
  }

  private sum(readers: readonly UdpReader[]): Map<string, MirrorCount> {
    return sumMirrorCounts([this.closedCounts, ...readers.map((r) => r.mirrorCounts())]);
  }
}
