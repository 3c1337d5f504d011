/**
 * Relays datagrams, as received, to a list of UDP targets, counting what it sent and what failed per target id: the
 * forwarding relay's fast path where a receiver reads its socket (a UdpReader's thread, an ingest worker). Each
 * target gets a socket of its own connected to it: a connected send skips the address handling of every datagram,
 * and the ICMP answer of a closed port comes back to it (ECONNREFUSED), counted as an error. Until that socket is
 * connected (a moment after the target is set) the target's datagrams leave from a shared unconnected socket.
 */
import { createSocket, type Socket } from "node:dgram";
import type { MirrorCount, MirrorTarget } from "./udpReader.js";

interface Link {
  s: Socket;
  connected: boolean;
}

interface Mirror {
  port: number;
  address: string;
  v6: boolean;
  c: MirrorCount;
  link: Link;
  onSent: (err: Error | null) => void;
}

export class UdpMirror {
  private mirrors: Mirror[] = [];
  private links = new Map<string, Link>();
  private readonly counts = new Map<string, MirrorCount>();
  private sender4: Socket | null = null;
  private sender6: Socket | null = null;

  get active(): boolean {
    return this.mirrors.length > 0;
  }

  /** Replaces the targets ([] stops). A target that stays keeps its socket and its counts. */
  set(targets: readonly MirrorTarget[]): void {
    const next = new Map<string, Link>();
    this.mirrors = targets.map((t) => {
      let c = this.counts.get(t.id);
      if (!c) this.counts.set(t.id, (c = { sent: 0, errors: 0 }));
      const key = `${t.id} ${t.address} ${t.port}`;
      const link = next.get(key) ?? this.links.get(key) ?? this.connect(t, c);
      next.set(key, link);
      const counted = c;
      return { port: t.port, address: t.address, v6: t.address.includes(":"), c, link, onSent: (err) => void (err && counted.errors++) };
    });
    for (const [key, l] of this.links) if (!next.has(key)) l.s.close();
    this.links = next;
  }

  private connect(t: MirrorTarget, c: MirrorCount): Link {
    const l: Link = { s: createSocket(t.address.includes(":") ? "udp6" : "udp4"), connected: false };
    l.s.on("error", () => void c.errors++);
    l.s.connect(t.port, t.address, () => (l.connected = true));
    return l;
  }

  send(msg: Uint8Array): void {
    for (const m of this.mirrors) {
      m.c.sent++;
      if (m.link.connected) m.link.s.send(msg, m.onSent);
      else (m.v6 ? (this.sender6 ??= createSocket("udp6")) : (this.sender4 ??= createSocket("udp4"))).send(msg, m.port, m.address, m.onSent);
    }
  }

  /** Per target id: [id, sent, errors] since it was first set. */
  snapshot(): [string, number, number][] {
    return [...this.counts].map(([id, c]) => [id, c.sent, c.errors]);
  }

  close(): void {
    for (const s of [this.sender4, this.sender6]) s?.close();
    for (const l of this.links.values()) l.s.close();
    this.links.clear();
    this.mirrors = [];
  }
}
