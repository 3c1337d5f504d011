/**
 * The senders of syslog destinations: UDP datagrams, and TCP or TLS streams with octet counting, a bounded
 * drop-oldest queue and reconnection with backoff. They update the destination's counters and never throw into
 * the tee: a failure is counted and classed (never logged with the target or a secret).
 */
import { createSocket, type Socket as DgramSocket } from "node:dgram";
import { lookup } from "node:dns/promises";
import { isIP, Socket as NetSocket, connect as netConnect } from "node:net";
import { connect as tlsConnect, rootCertificates } from "node:tls";
import type { DestinationCounters } from "../lib/types.js";
import { octetCounted } from "../lib/render.js";

export interface Sender {
  /** Hands one payload to the destination (the sender frames it); never throws, never waits. */
  send(payload: Buffer): void;
  close(): Promise<void>;
}

export interface SenderTarget {
  host: string;
  port: number;
  /** PEM certificates trusted besides the system roots (TLS). */
  caCert: string | null;
}

export interface StreamOptions {
  queueSize: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Connect (and TLS handshake) timeout. */
  connectTimeoutMs?: number;
}

/** A failure's class for the status route: never its message (which can name the target). */
export function errorClass(err: unknown): string {
  const code = String((err as { code?: unknown })?.code ?? "");
  if (code === "ECONNREFUSED") return "connect_refused";
  if (code === "ETIMEDOUT" || code === "timeout") return "timeout";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") return "dns";
  if (["ECONNRESET", "EPIPE", "ECONNABORTED", "ERR_STREAM_DESTROYED", "ERR_STREAM_WRITE_AFTER_END"].includes(code)) return "reset";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "unreachable";
  if (code === "unencodable") return "unencodable";
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/.test(code)) return "tls";
  return "send";
}

/** Counts a message lost to an error (send_errors) and keeps the error's class and time (never its message). */
export function failed(counters: DestinationCounters, err: unknown): void {
  counters.send_errors++;
  noteError(counters, err);
}

/**
 * Counts a failure of the connection itself (connection_errors: a connect refused, a reset, a socket error), which
 * is no message: what it costs in messages is counted where they are lost (send_errors, dropped_queue).
 */
export function connectionFailed(counters: DestinationCounters, err: unknown): void {
  counters.connection_errors++;
  noteError(counters, err);
}

function noteError(counters: DestinationCounters, err: unknown): void {
  counters.last_error_class = errorClass(err);
  counters.last_error_at = new Date().toISOString();
}

/** Strips the brackets of an IPv6 literal target (`[::1]`). */
const bare = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);

/** Messages a UDP destination holds while its host name resolves (then sent in order); past it they are dropped. */
const UDP_PENDING_MAX = 1000;

/**
 * syslog_udp: one datagram per message. An address target is used as is; a host name is resolved first (messages
 * wait, in order, bounded) and again after a send fails.
 */
export class UdpSender implements Sender {
  private socket: DgramSocket | null = null;
  private address: string | null = null;
  private pending: Buffer[] = [];
  private resolving = false;
  private closed = false;

  constructor(
    private readonly target: SenderTarget,
    private readonly counters: DestinationCounters,
  ) {
    const host = bare(target.host);
    if (isIP(host)) this.use(host);
    else counters.connection = "idle";
  }

  private use(address: string): void {
    this.socket?.close();
    const socket = createSocket(isIP(address) === 6 ? "udp6" : "udp4");
    // A send's own failure comes to its callback; what comes here is the socket's.
    socket.on("error", (err) => connectionFailed(this.counters, err));
    this.socket = socket;
    this.address = address;
    this.counters.connection = "ready";
  }

  private resolve(): void {
    if (this.resolving) return;
    this.resolving = true;
    lookup(bare(this.target.host)).then(
      ({ address }) => {
        this.resolving = false;
        if (this.closed) return;
        this.use(address);
        const waiting = this.pending;
        this.pending = [];
        for (const payload of waiting) this.sendNow(payload);
      },
      (err: unknown) => {
        this.resolving = false;
        failed(this.counters, err);
        this.counters.send_errors += this.pending.length - 1;
        this.pending = [];
      },
    );
  }

  send(payload: Buffer): void {
    if (this.closed) return;
    if (this.address) return this.sendNow(payload);
    if (this.pending.length >= UDP_PENDING_MAX) this.counters.dropped_queue++;
    else this.pending.push(payload);
    this.resolve();
  }

  private sendNow(payload: Buffer): void {
    this.socket!.send(payload, this.target.port, this.address!, (err) => {
      if (!err) return void this.counters.forwarded++;
      failed(this.counters, err);
      // A host name may point elsewhere now: resolve it again before the next send.
      if (!isIP(bare(this.target.host))) this.address = null;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const s = this.socket;
    this.socket = null;
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }
}

/**
 * syslog_tcp / syslog_tls: octet-counted frames on one connection. Messages wait in a bounded queue while the
 * connection is down or the peer reads slowly; when it is full the oldest is dropped (counted in dropped_queue).
 * A lost connection is re-established with exponential backoff. TLS verifies the peer against the system roots
 * plus the destination's `ca_cert`, and its name when the target is a host name.
 *
 * Every message handed to send() ends in exactly one counter: forwarded (the kernel took it), send_errors (the
 * connection lost it before that), dropped_queue (pushed out of a full queue, or still queued at close()); until
 * then it is in `queued` or being written. Connect failures and resets count apart, in connection_errors.
 */
export class StreamSender implements Sender {
  /** Frames from `head` on wait; the slots before it are spent (emptied) until compact() drops them. */
  private queue: (Buffer | null)[] = [];
  private head = 0;
  private socket: NetSocket | null = null;
  private writable = false;
  private backoffMs: number;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly tls: boolean,
    private readonly target: SenderTarget,
    private readonly counters: DestinationCounters,
    private readonly options: StreamOptions,
  ) {
    this.backoffMs = options.reconnectMinMs;
    counters.connection = "connecting";
    this.connect();
  }

  send(payload: Buffer): void {
    if (this.closed) return;
    if (this.pending() >= this.options.queueSize) {
      // Drop-oldest: the slot is emptied at once, and compacted away below, so a long outage holds queueSize frames.
      this.queue[this.head++] = null;
      this.counters.dropped_queue++;
      this.compact();
    }
    this.queue.push(octetCounted(payload));
    this.counters.queued = this.pending();
    if (this.writable) this.pump();
  }

  /** Slots the queue's array holds, spent ones included (bounded by about twice queueSize; tests read it). */
  get storedSlots(): number {
    return this.queue.length;
  }

  /** Drops the spent slots once they are at least half of the array (amortised O(1) per message). */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * A frame handed to the kernel counts as forwarded; one the connection lost before that (it closed with the
   * frame still in Node's buffer) counts as a send error. What the kernel had taken when a connection breaks is
   * TCP's to lose, as for any syslog sender.
   */
  private readonly written = (err?: Error | null) => {
    if (err) failed(this.counters, err);
    else this.counters.forwarded++;
  };

  private pending(): number {
    return this.queue.length - this.head;
  }

  /** Writes queued frames until the socket says its buffer is full; 'drain' resumes. */
  private pump(): void {
    const socket = this.socket;
    if (!socket) return;
    while (this.writable && this.head < this.queue.length) {
      const frame = this.queue[this.head]!;
      this.queue[this.head++] = null;
      if (!socket.write(frame, this.written)) this.writable = false;
    }
    this.compact();
    this.counters.queued = this.pending();
  }

  private connect(): void {
    if (this.closed) return;
    const host = bare(this.target.host);
    const timeout = this.options.connectTimeoutMs ?? 10_000;
    const socket = this.tls
      ? tlsConnect({
          host,
          port: this.target.port,
          servername: isIP(host) ? undefined : host,
          ca: this.target.caCert ? [...rootCertificates, this.target.caCert] : undefined,
          timeout,
        })
      : netConnect({ host, port: this.target.port, timeout });
    this.socket = socket;
    this.counters.connection = "connecting";
    socket.setNoDelay(true);
    socket.once(this.tls ? "secureConnect" : "connect", () => {
      socket.setTimeout(0);
      this.counters.connection = "connected";
      this.backoffMs = this.options.reconnectMinMs;
      this.writable = true;
      this.pump();
    });
    socket.on("drain", () => {
      this.writable = true;
      this.pump();
    });
    socket.on("timeout", () => socket.destroy(Object.assign(new Error("connect timeout"), { code: "ETIMEDOUT" })));
    // A syslog receiver sends nothing back; whatever it does send is read and ignored.
    socket.on("data", () => undefined);
    // The connection's failure (each frame it lost is counted by its write callback, in send_errors).
    socket.on("error", (err) => connectionFailed(this.counters, err));
    socket.once("close", () => {
      this.writable = false;
      if (this.socket === socket) this.socket = null;
      if (this.closed) return;
      this.counters.connection = "disconnected";
      this.timer = setTimeout(() => {
        this.timer = null;
        this.connect();
      }, this.backoffMs);
      this.backoffMs = Math.min(this.backoffMs * 2, this.options.reconnectMaxMs);
    });
  }

  /**
   * Stops: what is still queued is dropped and counted (dropped_queue); frames already written get a few seconds to
   * go out (their callbacks count them).
   */
  async close(): Promise<void> {
    if (!this.closed) {
      this.counters.dropped_queue += this.pending();
      this.queue = [];
      this.head = 0;
      this.counters.queued = 0;
    }
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const socket = this.socket;
    this.socket = null;
    if (!socket) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => (socket.destroy(), resolve()), 2000);
      socket.end(() => (clearTimeout(t), resolve()));
    });
  }
}
