/**
 * Syslog listeners: UDP (one datagram = one message), TCP and TLS (RFC 6587 framing, see framing.ts).
 *
 * Hardened for hostile peers: socket handlers never throw, every stream connection has an idle
 * timeout and counts against a per-address and a total limit (a connection over a limit is closed
 * at once and counted as dropped), oversized messages are skipped and counted, and a message that
 * does not parse is still handed on (malformed, with its text as `raw`) so nothing vanishes silently.
 */
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import { startUdpReader, sumMirrorCounts, type UdpReader } from "../../../core/worker.js";
import type { BoundListener, Inbound, ListenerCounters, Transport } from "../lib/types.js";
import { SyslogFrameDecoder, type FrameSink } from "./framing.js";
import { parseSyslog, rawText } from "./parse.js";

export interface SyslogListenerLog {
  warn(msg: string, meta?: object): void;
}

export interface SyslogListenerOptions {
  /** Address to bind (default 127.0.0.1; "::" or "0.0.0.0" for all). */
  host?: string;
  /** Ports: 0 = any free port, null = that listener is off. */
  udp: number | null;
  tcp: number | null;
  tls: number | null;
  /** PEM certificate chain and key of the TLS listener (required when `tls` is not null). */
  tlsCert?: string;
  tlsKey?: string;
  /** Largest message accepted (default 8192 bytes); longer ones are counted as dropped and skipped. */
  maxMessageBytes?: number;
  /** Receive buffer each UDP socket asks for (default 8 MiB; forced past net.core.rmem_max where the process may). */
  udpReceiveBufferBytes?: number;
  /** A TCP/TLS connection silent this long is closed (default 60000 ms). */
  idleTimeoutMs?: number;
  /** Open TCP+TLS connections allowed per source address, per listener (default 32). */
  maxConnectionsPerAddress?: number;
  /** Open connections allowed per listener (default 1024). */
  maxConnections?: number;
  /** Receives every message, parsed or malformed. Must not block; a throw counts the message as dropped. */
  /** Returns false when it refused the message (counted as dropped). */
  onMessage: (m: Inbound) => unknown;
  /**
   * Receive on a port other threads bind too (SO_REUSEPORT: the kernel spreads senders over the sockets, one sender's
   * address and port always to the same one): the ingest workers each bind every listener this way.
   */
  reusePort?: boolean;
  /** With reusePort: UDP sockets (each read by a thread of its own) this listener binds on its port. Default 1. */
  udpSockets?: number;
  /**
   * Takes each message's bytes as received instead of parsing it here (onMessage is then not called): the ingest
   * workers journal them first. `truncated`: a stream frame cut short (the connection ended inside it). Returns false
   * when it refused the message (counted as dropped).
   */
  onFrame?: (data: Buffer, sourceIp: string, transport: Transport, truncated: boolean, mirrorGen: number) => boolean;
  log?: SyslogListenerLog;
}

const DEFAULT_MAX_MESSAGE_BYTES = 8192;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_PER_ADDRESS = 32;
const DEFAULT_MAX_CONNECTIONS = 1024;
/** UDP receive buffer asked for (the kernel caps it at net.core.rmem_max): bursts outrun the event loop. */
const UDP_RECV_BUFFER = 8 << 20;
/** At most one warning per listener per this many ms (a flood of junk must not flood the log). */
const WARN_INTERVAL_MS = 10_000;

/** A v4-mapped IPv6 address ("::ffff:1.2.3.4") as IPv4. */
export function normaliseAddress(address: string | undefined): string {
  if (!address) return "";
  if (address.length > 7 && address.charCodeAt(0) === 58 && address.startsWith("::ffff:") && address.indexOf(".") > 0) return address.slice(7);
  return address;
}

/** Per-listener state shared by its connections: counters, delivery and warnings. */
class ListenerCore {
  readonly counters: ListenerCounters = { received: 0, dropped: 0, malformed: 0 };
  private lastWarnAt = 0;
  private suppressed = 0;

  constructor(
    readonly name: string,
    readonly transport: Transport,
    readonly maxMessageBytes: number,
    private readonly onMessage: (m: Inbound) => unknown,
    private readonly log: SyslogListenerLog | undefined,
    private readonly onFrame?: SyslogListenerOptions["onFrame"],
  ) {}

  /** Parses one message and hands it on; a failure to parse is delivered as malformed raw text. `mirrorGen`: see Inbound. */
  deliver(data: Buffer, sourceIp: string, mirrorGen = 0): void {
    this.counters.received++;
    if (this.onFrame) {
      this.frameOn(data, sourceIp, false, mirrorGen);
      return;
    }
    const now = Date.now();
    const r = parseSyslog(data, now);
    let m: Inbound;
    if (r.ok) {
      m = {
        kind: "syslog",
        transport: this.transport,
        listener: this.name,
        source_ip: sourceIp,
        received_at_ms: now,
        syslog: r.msg,
        trap: null,
        raw: null,
        malformed: false,
        bytes: data,
        mirror_gen: mirrorGen,
      };
    } else {
      this.counters.malformed++;
      if (r.raw === null) return; // empty: nothing to store
      m = {
        kind: "syslog",
        transport: this.transport,
        listener: this.name,
        source_ip: sourceIp,
        received_at_ms: now,
        syslog: null,
        trap: null,
        raw: r.raw,
        malformed: true,
        bytes: data,
        mirror_gen: mirrorGen,
      };
    }
    this.handOn(m);
  }

  /** Hands the bytes of a message on unparsed (onFrame); a refusal or a throw counts as dropped. */
  private frameOn(data: Buffer, sourceIp: string, truncated: boolean, mirrorGen: number): void {
    try {
      if (!this.onFrame!(data, sourceIp, this.transport, truncated, mirrorGen)) this.counters.dropped++;
    } catch (err) {
      this.counters.dropped++;
      this.warn("syslog message handler failed", { error: String(err) });
    }
  }

  /** Hands a message on; the consumer refusing it (false: its queue is full) or throwing counts as dropped. */
  private handOn(m: Inbound): void {
    try {
      if (this.onMessage(m) === false) this.counters.dropped++;
    } catch (err) {
      this.counters.dropped++;
      this.warn("syslog message handler failed", { error: String(err) });
    }
  }

  /** A message read but refused here (over the size limit). */
  dropped(): void {
    this.counters.received++;
    this.counters.dropped++;
  }

  /** A message cut short or unreadable: counted and, when there are bytes, delivered as malformed raw text. */
  malformedRaw(data: Buffer | null, sourceIp: string): void {
    this.counters.received++;
    this.counters.malformed++;
    if (data === null || data.length === 0) return;
    if (this.onFrame) {
      this.frameOn(data, sourceIp, true, 0);
      return;
    }
    const raw = rawText(data, this.maxMessageBytes);
    if (raw.length === 0) return;
    const m: Inbound = {
      kind: "syslog",
      transport: this.transport,
      listener: this.name,
      source_ip: sourceIp,
      received_at_ms: Date.now(),
      syslog: null,
      trap: null,
      raw,
      malformed: true,
      bytes: data,
    };
    this.handOn(m);
  }

  warn(msg: string, meta?: object): void {
    if (!this.log) return;
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_INTERVAL_MS) {
      this.suppressed++;
      return;
    }
    const suppressed = this.suppressed;
    this.lastWarnAt = now;
    this.suppressed = 0;
    try {
      this.log.warn(msg, { listener: this.name, ...meta, ...(suppressed > 0 ? { suppressed } : {}) });
    } catch {
      // a broken logger must not break the listener
    }
  }
}

/**
 * Binds the listeners asked for (UDP, TCP, TLS). Rejects, after closing whatever was bound, when a
 * port cannot be bound or TLS lacks its certificate; the error names the protocol, address and port.
 */
export async function startSyslogListeners(opts: SyslogListenerOptions): Promise<BoundListener[]> {
  const host = opts.host ?? "127.0.0.1";
  const max = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const bound: BoundListener[] = [];
  try {
    if (opts.udp !== null) bound.push(await startUdp(host, opts.udp, new ListenerCore("syslog.udp", "udp", max, opts.onMessage, opts.log, opts.onFrame), opts));
    if (opts.tcp !== null)
      bound.push(await startStream(host, opts.tcp, "tcp", opts, new ListenerCore("syslog.tcp", "tcp", max, opts.onMessage, opts.log, opts.onFrame)));
    if (opts.tls !== null) {
      if (!opts.tlsCert || !opts.tlsKey) throw new Error(`syslog tls listener on ${host}:${opts.tls}: tlsCert and tlsKey (PEM) are required`);
      bound.push(await startStream(host, opts.tls, "tls", opts, new ListenerCore("syslog.tls", "tls", max, opts.onMessage, opts.log, opts.onFrame)));
    }
  } catch (err) {
    await Promise.allSettled(bound.map((l) => l.close()));
    throw err;
  }
  return bound;
}

function bindError(protocol: string, host: string, port: number, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException)?.code;
  const why = code === "EADDRINUSE" ? "the port is in use" : code === "EACCES" ? "permission denied" : String((err as Error)?.message ?? err);
  // The errno code stays on the error: the caller says what to do about EACCES or EADDRINUSE.
  return Object.assign(new Error(`syslog ${protocol} listener cannot bind ${host}:${port}: ${why}`, { cause: err }), { code });
}

// ---- UDP ---------------------------------------------------------------------------------------

/**
 * The UDP listener reads its socket in a worker thread (the core's UdpReader): the main thread's stalls (a batch
 * written to PostgreSQL, a garbage collection) no longer overflow the kernel's buffer; the worker holds what the
 * main thread has not taken yet, up to 64 MiB, and counts what it drops past that.
 */
async function startUdp(host: string, port: number, core: ListenerCore, opts: SyslogListenerOptions): Promise<BoundListener> {
  const readers: UdpReader[] = [];
  const one = (p: number) =>
    startUdpReader({
      type: host.includes(":") ? "udp6" : "udp4",
      host,
      port: p,
      reusePort: opts.reusePort,
      recvBufferSize: opts.udpReceiveBufferBytes ?? UDP_RECV_BUFFER,
      onDatagram: (msg, address, _port, gen) => onDatagram(core, msg, address, gen),
      onError: (err) => core.warn("syslog udp socket error", { error: err.message }),
      onBacklogDrops: (n) => {
        core.counters.received += n;
        core.counters.dropped += n;
        core.warn("syslog udp datagrams dropped: the pipeline is behind", { dropped: n });
      },
    });
  try {
    readers.push(await one(port));
    // More sockets on the same port (SO_REUSEPORT): the kernel spreads senders over them, each with a buffer and a reader
    // thread of its own, so one sender's burst fills one buffer and the others keep theirs.
    const more = opts.reusePort ? Math.max(1, opts.udpSockets ?? 1) - 1 : 0;
    for (let i = 0; i < more; i++) readers.push(await one(readers[0].port));
  } catch (err) {
    await Promise.allSettled(readers.map((r) => r.close()));
    throw bindError("udp", host, port, err);
  }
  return {
    name: core.name,
    stream: "syslog",
    protocol: "udp",
    address: host,
    port: readers[0].port,
    counters: core.counters,
    mirror: (targets, generation) => {
      for (const r of readers) r.mirror(targets, generation);
    },
    mirrorCounts: () => sumMirrorCounts(readers.map((r) => r.mirrorCounts())),
    close: async () => {
      await Promise.all(readers.map((r) => r.close()));
    },
  };
}

/** One datagram: an RFC 6587 octet count in front ("123 <13>...", some senders add it over UDP too) is stripped. */
function onDatagram(core: ListenerCore, msg: Buffer, address: string, mirrorGen: number): void {
  try {
    let start = 0;
    const first = msg.length > 0 ? msg[0] : 0;
    if (first >= 49 && first <= 57) {
      let i = 1;
      while (i < msg.length && i < 10 && msg[i] >= 48 && msg[i] <= 57) i++;
      if (i < msg.length - 1 && msg[i] === 32 && msg[i + 1] === 60) start = i + 1;
    }
    if (msg.length - start > core.maxMessageBytes) {
      core.dropped();
      core.warn("syslog datagram over the size limit dropped", { source_ip: normaliseAddress(address), bytes: msg.length - start });
      return;
    }
    core.deliver(start === 0 ? msg : msg.subarray(start), normaliseAddress(address), mirrorGen);
  } catch (err) {
    core.warn("syslog datagram handling failed", { error: String(err) });
  }
}

// ---- TCP / TLS ---------------------------------------------------------------------------------

/** One stream connection: its decoder and the sink the decoder reports to. */
class Connection implements FrameSink {
  readonly decoder: SyslogFrameDecoder;
  constructor(
    private readonly core: ListenerCore,
    readonly sourceIp: string,
  ) {
    this.decoder = new SyslogFrameDecoder({ maxMessageBytes: core.maxMessageBytes });
  }
  frame(data: Buffer): void {
    this.core.deliver(data, this.sourceIp);
  }
  oversized(bytes: number): void {
    this.core.dropped();
    this.core.warn("syslog message over the size limit skipped", { source_ip: this.sourceIp, bytes });
  }
  truncated(data: Buffer): void {
    this.core.malformedRaw(data, this.sourceIp);
  }
}

/**
 * Whether the process was started with an OpenSSL configuration (config/openssl.cnf turns TLS 1.3 session tickets off;
 * Node reads it only at start: `--openssl-config`, in the arguments or NODE_OPTIONS, or OPENSSL_CONF).
 */
function ticketsOffConfigured(): boolean {
  const flag = (a: string) => a.startsWith("--openssl-config");
  return process.execArgv.some(flag) || (process.env.NODE_OPTIONS ?? "").split(/\s+/).some(flag) || Boolean(process.env.OPENSSL_CONF);
}

function startStream(host: string, port: number, protocol: "tcp" | "tls", opts: SyslogListenerOptions, core: ListenerCore): Promise<BoundListener> {
  const idleMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxPerAddress = opts.maxConnectionsPerAddress ?? DEFAULT_MAX_PER_ADDRESS;
  const maxTotal = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const sockets = new Set<Socket>();
  const perAddress = new Map<string, number>();

  /** Wires a readable stream (the TCP socket, or the TLS socket over it) to a decoder. */
  const attach = (stream: Socket | TLSSocket, sourceIp: string) => {
    const conn = new Connection(core, sourceIp);
    stream.on("data", (chunk: Buffer) => {
      try {
        if (!conn.decoder.push(chunk, conn)) {
          core.malformedRaw(null, sourceIp);
          core.warn("syslog stream framing broken, connection closed", { source_ip: sourceIp, reason: conn.decoder.error });
          stream.destroy();
        }
      } catch (err) {
        core.warn("syslog stream handling failed", { error: String(err) });
        stream.destroy();
      }
    });
    stream.once("close", () => {
      try {
        conn.decoder.finish(conn);
      } catch (err) {
        core.warn("syslog stream handling failed", { error: String(err) });
      }
    });
    stream.on("error", () => undefined); // resets and TLS errors end the connection; nothing to do
  };

  /** Every raw connection (TCP, or the TCP under TLS): limits, idle timeout, bookkeeping. */
  const onConnection = (socket: Socket) => {
    try {
      socket.on("error", () => undefined);
      const sourceIp = normaliseAddress(socket.remoteAddress);
      const open = perAddress.get(sourceIp) ?? 0;
      if (sockets.size >= maxTotal || open >= maxPerAddress) {
        core.counters.dropped++;
        core.warn("syslog connection over the limit closed", { source_ip: sourceIp, open_from_address: open, open_total: sockets.size });
        socket.destroy();
        return;
      }
      sockets.add(socket);
      perAddress.set(sourceIp, open + 1);
      socket.once("close", () => {
        sockets.delete(socket);
        const left = (perAddress.get(sourceIp) ?? 1) - 1;
        if (left > 0) perAddress.set(sourceIp, left);
        else perAddress.delete(sourceIp);
      });
      socket.setTimeout(idleMs, () => socket.destroy());
      socket.setKeepAlive(true, 60_000);
      if (protocol === "tcp") attach(socket, sourceIp);
    } catch (err) {
      core.warn("syslog connection handling failed", { error: String(err) });
      socket.destroy();
    }
  };

  let server: Server;
  if (protocol === "tls") {
    if (!ticketsOffConfigured())
      core.warn(
        "syslog tls: TLS 1.3 session tickets are on (start node with --openssl-config=config/openssl.cnf): a sender that closes without reading loses the messages it had not sent yet when the service is behind",
      );
    const tls = createTlsServer({ cert: opts.tlsCert, key: opts.tlsKey, minVersion: "TLSv1.2", handshakeTimeout: Math.min(idleMs, 30_000) });
    tls.on("secureConnection", (s: TLSSocket) => {
      // A connection closed at the limit never gets here: its raw socket is gone before the handshake ends.
      if (s.destroyed) return;
      attach(s, normaliseAddress(s.remoteAddress));
    });
    tls.on("tlsClientError", (err: Error) => core.warn("syslog tls handshake failed", { error: err.message }));
    server = tls;
  } else {
    server = createTcpServer();
  }
  server.on("connection", onConnection);

  return new Promise<BoundListener>((resolve, reject) => {
    const onBindError = (err: Error) => {
      server.close();
      reject(bindError(protocol, host, port, err));
    };
    server.once("error", onBindError);
    server.listen(opts.reusePort ? { port, host, reusePort: true } : { port, host, exclusive: true }, () => {
      server.off("error", onBindError);
      server.on("error", (err) => core.warn(`syslog ${protocol} server error`, { error: err.message }));
      const address = server.address();
      let closed: Promise<void> | null = null;
      resolve({
        name: core.name,
        stream: "syslog",
        protocol,
        address: host,
        port: typeof address === "object" && address ? address.port : port,
        counters: core.counters,
        close: () =>
          (closed ??= new Promise<void>((done) => {
            server.close(() => done());
            for (const s of sockets) s.destroy();
          })),
      });
    });
  });
}
