/**
 * A UDP socket for the threads that only read (the syslog and trap readers, the flows readers), and relay what they
 * read. Node's `dgram` hands over one datagram per callback and sends one per call (on Node 24 here 2.8 µs of CPU a
 * datagram received and 6.9 µs received and relayed, against 1.6 and 2.4 µs batched); rsyslog and nfcapd read with
 * `recvmmsg`. Where the prebuilt
 * `koffi` FFI package loads (Linux on x86-64 or arm64, installed without build tools), the socket is still `dgram`'s
 * and Node still reads it (its options, errors and address are Node's, and Node closes it with the thread however the
 * thread ends), but each datagram Node hands over is followed by a drain of the socket's queue with `recvmmsg` (up to
 * 64 datagrams a call, in the same callback), and each batch is relayed with one `sendmmsg` per destination. So a flood
 * costs one Node callback per turn instead of one per datagram, and no handle foreign to Node is ever left for a
 * thread's teardown (koffi's own poll handle aborted the process when a thread was terminated with it open). The
 * descriptor comes from `dgram`'s internal handle (its `fd`, Node 24); where it is missing, or elsewhere, or with
 * `NMS_UDP_BATCH=0`, the same interface runs on `dgram` alone.
 *
 * Both paths give the reader the same thing: each datagram with its sender's address written as Node writes it
 * (`127.0.0.1`, `::ffff:127.0.0.1`, `::1`), a bind error with its errno `code` (`EADDRINUSE`, `EACCES`), and relays
 * that count what they sent and the send errors (an ICMP "port unreachable" comes back as `ECONNREFUSED`).
 */
import dgram from "node:dgram";
import { createRequire } from "node:module";
import { isIPv4 } from "node:net";
import { constants } from "node:os";

export interface DatagramSocketOptions {
  type: "udp4" | "udp6";
  /** The address to bind (a name is resolved by `dgram`). */
  host: string;
  /** 0 = any free port. */
  port: number;
  /** With udp6 on "::": also IPv4 (dual stack) unless true. */
  ipv6Only?: boolean;
  /** SO_REUSEPORT: the kernel spreads senders over every socket bound to the port, by address and port. */
  reusePort?: boolean;
  /**
   * SO_RCVBUF to ask for. The kernel caps it at net.core.rmem_max; where the batched socket loads and the process has
   * CAP_NET_ADMIN (root), it is forced past that cap (SO_RCVBUFFORCE), as rsyslog's imudp forces its rcvbufSize.
   */
  recvBufferSize?: number;
  /** `false`: `dgram` even where the batched socket is available. */
  batched?: boolean;
  /**
   * With reusePort, on the batched path: give each datagram to one of the first `spreadOver` sockets bound on the port,
   * at random (a classic BPF program attached to the port's group, SO_ATTACH_REUSEPORT_CBPF), instead of the kernel's
   * hash of the sender's address and port, so one sender's burst is read by every socket's thread. Datagrams from one
   * sender may then be read out of order. Set on the first socket of the port; until the others are bound the kernel
   * falls back to its hash. See `spread` for whether it took.
   */
  spreadOver?: number;
  /**
   * Each datagram, in order. `msg` is only valid during the call (copy what you keep). Absent: the socket only relays
   * (and counts `received`); the batched path then makes nothing per datagram.
   */
  onMessage?(msg: Buffer, address: string, port: number): void;
  /** A socket error after the bind (the socket stays open). */
  onError(err: NodeJS.ErrnoException): void;
}

/** A destination every datagram read is relayed to, from a socket of its own connected to it. */
export interface Relay {
  readonly address: string;
  readonly port: number;
  /** Datagrams relayed to it (the refused ones too). */
  readonly sent: number;
  /** Send errors, ICMP refusals included. */
  readonly errors: number;
  close(): void;
}

export interface DatagramSocket {
  /** True when read with recvmmsg (the batched path), false on `dgram`. */
  readonly batched: boolean;
  /** Datagrams read so far. */
  readonly received: number;
  /** Whether `spreadOver` was attached (false on dgram, or when the kernel refused it). */
  readonly spread: boolean;
  address(): { address: string; port: number };
  /** The receive buffer the kernel granted, as it accounts it (twice what was asked for). */
  recvBufferSize(): number;
  /** Relays every datagram read from now on to these (replacing the list; [] stops). */
  setRelays(relays: readonly Relay[]): void;
  /** Opens a relay to an IP literal and port (not yet relaying: see setRelays). */
  relay(address: string, port: number): Relay;
  /** Sends from the listening socket itself (an answer its sender expects from the port it wrote to). */
  send(data: Uint8Array, port: number, address: string): void;
  close(): Promise<void>;
}

// ---- libc through koffi ---------------------------------------------------------------------------------------------

const AF_INET = 2;
const MSG_DONTWAIT = 0x40;
const SOL_SOCKET = 1;
const SO_RCVBUFFORCE = 33;
const SO_ATTACH_REUSEPORT_CBPF = 51;
const EAGAIN = 11;
const EINTR = 4;
/** Datagrams a recvmmsg call may take. */
const BATCH = 64;
/** Bytes per datagram slot: the largest UDP payload fits. */
const SLOT = 65536;
const HDR = 64; // struct mmsghdr on LP64: msghdr (56) + msg_len + padding
const IOV = 16;
const NAME = 32; // sockaddr_in6 is 28
/** recvmmsg calls per readable event before the loop gets a turn (libuv's poll is level-triggered: it comes back). */
const CALLS_PER_EVENT = 16;

const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([name, n]) => [n, name]));

interface Libc {
  koffi: Koffi;
  setsockopt(fd: number, level: number, name: number, value: Buffer, len: number): number;
  recvmmsg(fd: number, vec: number, vlen: number, flags: number, timeout: number): number;
  sendmmsg(fd: number, vec: number, vlen: number, flags: number): number;
  send(fd: number, data: Uint8Array, len: number, flags: number): number;
}

/** The part of koffi used here (typed locally: the package is optional). */
interface Koffi {
  load(path: string): { func(decl: string): (...args: unknown[]) => unknown };
  address(p: unknown): bigint;
  errno(): number;
}

/** What is used of dgram's internal handle. */
interface UdpHandle {
  fd?: number;
}
/** dgram keeps its handle under a symbol described "state symbol" (its `_handle` getter warns that it is deprecated). */
function handleOf(s: dgram.Socket): UdpHandle | undefined {
  const key = Object.getOwnPropertySymbols(s).find((k) => k.description === "state symbol");
  return key ? (s as unknown as Record<symbol, { handle?: UdpHandle } | undefined>)[key]?.handle : undefined;
}

let libc: Libc | null | undefined;

/** libc through koffi, or null where it does not load (not Linux, no prebuilt binary, NMS_UDP_BATCH=0). */
function loadLibc(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== "linux" || process.env.NMS_UDP_BATCH === "0" || !["x64", "arm64"].includes(process.arch)) return libc;
  try {
    const koffi = createRequire(import.meta.url)("koffi") as Koffi;
    const c = koffi.load("libc.so.6");
    const f = (decl: string) => c.func(decl) as never;
    libc = {
      koffi,
      setsockopt: f("int setsockopt(int, int, int, void *, uint32_t)"),
      // Pointers into the socket's own block go as plain addresses.
      recvmmsg: f("int recvmmsg(int, uintptr_t, uint32_t, int, uintptr_t)"),
      sendmmsg: f("int sendmmsg(int, uintptr_t, uint32_t, int)"),
      send: f("intptr_t send(int, void *, uintptr_t, int)"),
    };
  } catch {
    libc = null;
  }
  return libc;
}

/** Whether this process reads UDP with recvmmsg (koffi loaded and not turned off). */
export function batchedUdpAvailable(): boolean {
  return loadLibc() !== null;
}

function errnoError(c: Libc, what: string): NodeJS.ErrnoException {
  const n = c.koffi.errno();
  const code = ERRNO_NAMES.get(n) ?? `E${n}`;
  return Object.assign(new Error(`${what} ${code}`), { code, errno: -n, syscall: what.split(" ")[0] });
}

/** An IPv6 address as libuv writes it (RFC 5952 with ISC's embedded-IPv4 rule: ::ffff:a.b.c.d and ::a.b.c.d). */
function ipv6Text(b: Uint8Array, at: number): string {
  const w: number[] = [];
  for (let i = 0; i < 8; i++) w.push((b[at + i * 2] << 8) | b[at + i * 2 + 1]);
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (w[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && w[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) best = -1;
  if (best === 0 && (bestLen === 6 || (bestLen === 5 && w[5] === 0xffff))) {
    const v4 = `${b[at + 12]}.${b[at + 13]}.${b[at + 14]}.${b[at + 15]}`;
    return bestLen === 6 ? `::${v4}` : `::ffff:${v4}`;
  }
  let s = "";
  for (let i = 0; i < 8; i++) {
    if (i === best) {
      s += i === 0 ? "::" : ":";
      i += bestLen - 1;
      continue;
    }
    s += w[i].toString(16) + (i < 7 ? ":" : "");
  }
  return s;
}

/** Sender addresses already written, keyed by their bytes (most traffic comes from few senders). */
class AddressTexts {
  private v4 = new Map<number, string>();
  private v6 = new Map<string, string>();

  text(b: Uint8Array, dv: DataView, at: number): string {
    const family = dv.getUint16(at, true);
    if (family === AF_INET) {
      const key = dv.getUint32(at + 4);
      let t = this.v4.get(key);
      if (t === undefined) {
        if (this.v4.size >= 10_000) this.v4.clear();
        t = `${b[at + 4]}.${b[at + 5]}.${b[at + 6]}.${b[at + 7]}`;
        this.v4.set(key, t);
      }
      return t;
    }
    const key = `${dv.getUint32(at + 8)},${dv.getUint32(at + 12)},${dv.getUint32(at + 16)},${dv.getUint32(at + 20)}`;
    let t = this.v6.get(key);
    if (t === undefined) {
      if (this.v6.size >= 10_000) this.v6.clear();
      t = ipv6Text(b, at + 8);
      this.v6.set(key, t);
    }
    return t;
  }
}

/**
 * A relay: a dgram socket of its own connected to the destination (no address handling per datagram, and a closed
 * port's ICMP answer comes back to it as an error). Until the connect completes (a moment after it opens), datagrams
 * leave from a socket shared by the unconnected relays of the family (`unconnected`).
 */
abstract class ConnectedRelay implements Relay {
  sent = 0;
  errors = 0;
  protected readonly socket: dgram.Socket;
  protected readonly onSent = (err: Error | null) => {
    if (err) this.errors++;
  };

  constructor(
    readonly address: string,
    readonly port: number,
    protected readonly unconnected: () => dgram.Socket,
  ) {
    this.socket = dgram.createSocket(isIPv4(address) ? "udp4" : "udp6");
    this.socket.on("error", () => this.errors++);
    this.socket.connect(port, address, () => this.connected());
  }

  protected abstract connected(): void;

  close(): void {
    this.socket.close();
  }
}

/** Once connected, sent to with sendmmsg on its descriptor (dgram's: Node closes it with the thread). */
class NativeRelay extends ConnectedRelay {
  /** -1 until connected. */
  fd = -1;

  protected connected(): void {
    this.fd = handleOf(this.socket)?.fd ?? -1;
  }

  /** Until connected: one datagram, copied (the block is read again at once). */
  sendOne(msg: Uint8Array): void {
    this.unconnected().send(Buffer.from(msg), this.port, this.address, this.onSent);
  }

  override close(): void {
    this.fd = -1;
    super.close();
  }
}

/** What the batched socket and the dgram one share: dgram's socket, the relays, the shared unconnected senders. */
abstract class BoundSocket<R extends Relay> {
  protected relays: R[] = [];
  received = 0;
  spread = false;
  private senders: { udp4?: dgram.Socket; udp6?: dgram.Socket } = {};

  constructor(protected readonly socket: dgram.Socket) {}

  address(): { address: string; port: number } {
    const a = this.socket.address();
    return { address: a.address, port: a.port };
  }

  recvBufferSize(): number {
    return this.socket.getRecvBufferSize();
  }

  /** The shared unconnected socket of the family of `address`, made when first needed. */
  protected unconnected(address: string): () => dgram.Socket {
    const type = isIPv4(address) ? "udp4" : "udp6";
    return () => (this.senders[type] ??= dgram.createSocket(type));
  }

  send(data: Uint8Array, port: number, address: string): void {
    this.socket.send(data, port, address, (err) => err && this.socket.emit("error", err));
  }

  /** Stops relaying and closes the senders and the socket. */
  protected closeSockets(): Promise<void> {
    this.relays = [];
    for (const s of Object.values(this.senders)) s?.close();
    return new Promise((done) => this.socket.close(() => done()));
  }
}

/**
 * The batched socket: after each datagram Node hands over, the rest of the queue is read with recvmmsg into one block
 * (held by this object, so freed with it) that holds BATCH receive headers, their buffers, and the send headers of the
 * relays.
 */
class BatchedSocket extends BoundSocket<NativeRelay> implements DatagramSocket {
  readonly batched = true;
  private readonly mem: Buffer;
  private readonly base: number;
  private readonly dv: DataView;
  private readonly oIov = BATCH * HDR;
  private readonly oName = this.oIov + BATCH * IOV;
  private readonly oData = this.oName + BATCH * NAME;
  private readonly oSendHdr = this.oData + BATCH * SLOT;
  private readonly oSendIov = this.oSendHdr + BATCH * HDR;
  private readonly texts = new AddressTexts();
  private closed = false;

  constructor(
    private readonly c: Libc,
    socket: dgram.Socket,
    private readonly fd: number,
    private readonly o: DatagramSocketOptions,
  ) {
    super(socket);
    // Its own ArrayBuffer (never moved by the garbage collector), zeroed: unused header fields must be 0.
    this.mem = Buffer.alloc(this.oSendIov + BATCH * IOV);
    this.base = Number(c.koffi.address(this.mem));
    this.dv = new DataView(this.mem.buffer, this.mem.byteOffset, this.mem.length);
    const at = (off: number) => BigInt(this.base + off);
    for (let i = 0; i < BATCH; i++) {
      const h = i * HDR;
      this.dv.setBigUint64(h, at(this.oName + i * NAME), true);
      this.dv.setUint32(h + 8, NAME, true);
      this.dv.setBigUint64(h + 16, at(this.oIov + i * IOV), true);
      this.dv.setBigUint64(h + 24, 1n, true);
      this.dv.setBigUint64(this.oIov + i * IOV, at(this.oData + i * SLOT), true);
      this.dv.setBigUint64(this.oIov + i * IOV + 8, BigInt(SLOT), true);
      // A relay's headers: no name (its socket is connected), the same buffers, each datagram's own length.
      const s = this.oSendHdr + i * HDR;
      this.dv.setBigUint64(s + 16, at(this.oSendIov + i * IOV), true);
      this.dv.setBigUint64(s + 24, 1n, true);
      this.dv.setBigUint64(this.oSendIov + i * IOV, at(this.oData + i * SLOT), true);
    }
    socket.on("message", (msg, rinfo) => {
      this.received++;
      if (this.relays.length > 0) this.relayOne(msg);
      try {
        o.onMessage?.(msg, rinfo.address, rinfo.port);
      } catch (err) {
        o.onError(err as NodeJS.ErrnoException);
      }
      this.drain();
    });
  }

  /** Reads what the socket holds behind the datagram Node just handed over, a batch a call, up to CALLS_PER_EVENT calls. */
  private drain(): void {
    const { c, dv, o } = this;
    for (let k = 0; k < CALLS_PER_EVENT && !this.closed; k++) {
      const n = c.recvmmsg(this.fd, this.base, BATCH, MSG_DONTWAIT, 0);
      if (n < 0) {
        const e = c.koffi.errno();
        if (e !== EAGAIN && e !== EINTR) o.onError(errnoError(c, "recvmmsg"));
        return;
      }
      if (n === 0) return;
      this.received += n;
      if (this.relays.length > 0) this.relayBatch(n);
      for (let i = 0; i < n; i++) {
        const h = i * HDR;
        // The kernel wrote the sender's address length: the next call needs the full size again.
        dv.setUint32(h + 8, NAME, true);
        if (!o.onMessage) continue;
        const len = dv.getUint32(h + 56, true);
        const name = this.oName + i * NAME;
        try {
          o.onMessage(
            Buffer.from(this.mem.buffer, this.mem.byteOffset + this.oData + i * SLOT, len),
            this.texts.text(this.mem, dv, name),
            dv.getUint16(name + 2),
          );
        } catch (err) {
          o.onError(err as NodeJS.ErrnoException);
        }
      }
      if (n < BATCH) return;
    }
  }

  private relayOne(msg: Buffer): void {
    for (const r of this.relays) {
      r.sent++;
      if (r.fd < 0) r.sendOne(msg);
      else if (this.c.send(r.fd, msg, msg.length, MSG_DONTWAIT) < 0) r.errors++;
    }
  }

  private relayBatch(n: number): void {
    const { c, dv } = this;
    for (let i = 0; i < n; i++) dv.setUint32(this.oSendIov + i * IOV + 8, dv.getUint32(i * HDR + 56, true), true);
    for (const r of this.relays) {
      // Counted as dgram counts them: every datagram handed over is sent; the ones refused are also errors.
      r.sent += n;
      if (r.fd < 0) {
        for (let i = 0; i < n; i++) r.sendOne(this.mem.subarray(this.oData + i * SLOT, this.oData + i * SLOT + dv.getUint32(i * HDR + 56, true)));
        continue;
      }
      let done = 0;
      while (done < n) {
        const k = c.sendmmsg(r.fd, this.base + this.oSendHdr + done * HDR, n - done, MSG_DONTWAIT);
        if (k > 0) {
          done += k;
          continue;
        }
        // The first datagram of the rest failed (a refusal, a full buffer): counted, and the rest tried.
        r.errors++;
        done++;
      }
    }
  }

  relay(address: string, port: number): Relay {
    return new NativeRelay(address, port, this.unconnected(address));
  }

  setRelays(relays: readonly Relay[]): void {
    this.relays = relays.filter((r): r is NativeRelay => r instanceof NativeRelay);
  }

  close(): Promise<void> {
    this.closed = true;
    return this.closeSockets();
  }
}

// ---- dgram --------------------------------------------------------------------------------------------------------

class DgramRelay extends ConnectedRelay {
  private isConnected = false;

  protected connected(): void {
    this.isConnected = true;
  }

  send(msg: Buffer): void {
    this.sent++;
    if (this.isConnected) this.socket.send(msg, this.onSent);
    else this.unconnected().send(msg, this.port, this.address, this.onSent);
  }
}

class DgramSocket extends BoundSocket<DgramRelay> implements DatagramSocket {
  readonly batched = false;

  constructor(socket: dgram.Socket, o: DatagramSocketOptions) {
    super(socket);
    socket.on("message", (msg, rinfo) => {
      this.received++;
      for (let i = 0; i < this.relays.length; i++) this.relays[i].send(msg);
      o.onMessage?.(msg, rinfo.address, rinfo.port);
    });
  }

  relay(address: string, port: number): Relay {
    return new DgramRelay(address, port, this.unconnected(address));
  }

  setRelays(relays: readonly Relay[]): void {
    this.relays = relays.filter((r): r is DgramRelay => r instanceof DgramRelay);
  }

  close(): Promise<void> {
    return this.closeSockets();
  }
}

/**
 * Attaches to the socket's SO_REUSEPORT group a classic BPF program that answers a random index below `n` for each
 * datagram: `ld rand; mod #n; ret a` (the kernel takes the answer as the index of the group's socket, in the order they
 * were bound, and falls back to its hash when there is no such socket yet).
 */
function attachRandomSpread(c: Libc, fd: number, n: number): boolean {
  const filter = Buffer.alloc(3 * 8);
  const insn = (i: number, code: number, k: number) => {
    filter.writeUInt16LE(code, i * 8);
    filter.writeUInt32LE(k >>> 0, i * 8 + 4);
  };
  insn(0, 0x20, 0xfffff000 + 56); // BPF_LD|BPF_W|BPF_ABS, SKF_AD_OFF + SKF_AD_RANDOM
  insn(1, 0x94, n); // BPF_ALU|BPF_MOD|BPF_K
  insn(2, 0x16, 0); // BPF_RET|BPF_A
  // struct sock_fprog on LP64: unsigned short len, padding, struct sock_filter *filter.
  const prog = Buffer.alloc(16);
  prog.writeUInt16LE(3, 0);
  prog.writeBigUInt64LE(c.koffi.address(filter), 8);
  return c.setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, prog, prog.length) === 0;
}

/** Binds a UDP socket, batched where it can be; rejects with the errno `code` kept when it cannot be bound. */
export async function bindDatagramSocket(o: DatagramSocketOptions): Promise<DatagramSocket> {
  const socket = dgram.createSocket({ type: o.type, ipv6Only: o.ipv6Only === true, reusePort: o.reusePort === true });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(o.port, o.host, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  socket.on("error", (err) => o.onError(err));
  if (o.recvBufferSize) {
    try {
      socket.setRecvBufferSize(o.recvBufferSize);
    } catch {
      // The kernel grants what net.core.rmem_max allows; a refusal leaves the default.
    }
  }
  const c = o.batched === false ? null : loadLibc();
  const h = handleOf(socket);
  if (c && o.recvBufferSize && typeof h?.fd === "number" && h.fd >= 0) {
    // Past net.core.rmem_max where the process may (CAP_NET_ADMIN, root), as rsyslog's imudp does; elsewhere what was granted stays.
    const size = Buffer.alloc(4);
    size.writeInt32LE(Math.min(o.recvBufferSize, 0x3fffffff));
    c.setsockopt(h.fd, SOL_SOCKET, SO_RCVBUFFORCE, size, 4);
  }
  if (c && typeof h?.fd === "number" && h.fd >= 0) {
    const b = new BatchedSocket(c, socket, h.fd, o);
    if (o.reusePort && o.spreadOver && o.spreadOver > 1) b.spread = attachRandomSpread(c, h.fd, o.spreadOver);
    return b;
  }
  return new DgramSocket(socket, o);
}
