/**
 * A UDP socket read by a worker thread. A receiver that parses, evaluates and writes on the main thread stalls it now
 * and then (a batch written to PostgreSQL, a garbage collection, a burst of HTTP requests); a socket read on that
 * thread then overflows its kernel buffer and datagrams are lost although the process has CPU to spare. Here the
 * worker does nothing but read (with recvmmsg where it can, see datagramSocket.ts): it copies datagrams into one buffer
 * and hands them over (one exact-size buffer, transferred) once per turn of its own event loop, or under a flood at most
 * every millisecond, and holds up to `maxBacklogBytes` the main thread has not taken yet; past that it drops and counts.
 * The main thread gets each datagram as a Buffer view into the batch (no copy).
 */
import { Worker } from "node:worker_threads";
import type { DatagramSocketOptions } from "./datagramSocket.js";
import { compiledModuleUrl } from "./workerModule.js";

/** The socket's options are the reader thread's socket's (datagramSocket.ts); `port` 0 = any free port (see the reader's `port`). */
export interface UdpReaderOptions extends Pick<
  DatagramSocketOptions,
  "type" | "host" | "port" | "ipv6Only" | "reusePort" | "recvBufferSize" | "batched" | "spreadOver"
> {
  /** Bytes read but not yet taken by the main thread that the worker may hold; past it datagrams are dropped (counted). Default 64 MiB. */
  maxBacklogBytes?: number;
  /**
   * Called on the main thread for every datagram, in order. `data` is a view into a batch: copy it to keep it past the
   * batch's life. Absent: a relay-only reader, whose worker relays what it reads to the mirror targets and hands nothing
   * over (it reports how many it read, see `received`). `generation` is the mirror generation (see `mirror`) the worker
   * had when it read the datagram, so relayed it under: 0 when it relayed it nowhere.
   */
  onDatagram?(data: Buffer, address: string, port: number, generation: number): void;
  /** A socket error after the bind (logged by the caller; the socket stays open). */
  onError?(err: Error): void;
  /** `n` more datagrams were dropped by the worker (main thread behind by more than maxBacklogBytes). */
  onBacklogDrops?(n: number): void;
}

/** Where the worker relays every datagram as it reads it (before the main thread sees it): an IP literal and a port. */
export interface MirrorTarget {
  id: string;
  address: string;
  port: number;
}

/** What the worker relayed to one mirror target so far. */
export interface MirrorCount {
  sent: number;
  errors: number;
}

/** Per mirror target id: what several readers (or listeners) relayed, summed. */
export function sumMirrorCounts(parts: Iterable<ReadonlyMap<string, MirrorCount>>): Map<string, MirrorCount> {
  const sum = new Map<string, MirrorCount>();
  for (const part of parts)
    for (const [id, c] of part) {
      const t = sum.get(id) ?? { sent: 0, errors: 0 };
      sum.set(id, { sent: t.sent + c.sent, errors: t.errors + c.errors });
    }
  return sum;
}

export interface UdpReader {
  address: string;
  port: number;
  /** True when the worker reads with recvmmsg and relays with sendmmsg (datagramSocket.ts), false on `dgram`. */
  batched: boolean;
  /** Whether `spreadOver` took (the port's datagrams spread at random over its sockets). */
  spread: boolean;
  /** Datagrams the worker dropped because the main thread was behind by more than maxBacklogBytes. */
  backlogDrops(): number;
  /**
   * Relays every datagram, as received, to these targets straight from the worker (replacing the previous list; [] stops).
   * The main thread's stalls do not slow it, and what the worker relays it relays even when it must drop the datagram
   * for the main thread. `generation` (a number the caller picks; default 0) comes back with every datagram read under
   * these targets (onDatagram), so the caller knows where each one went.
   */
  mirror(targets: readonly MirrorTarget[], generation?: number): void;
  /** Per mirror target id: datagrams relayed and send errors since it was first mirrored (updated every ~250 ms). */
  mirrorCounts(): ReadonlyMap<string, MirrorCount>;
  /** Datagrams the socket read, as of the worker's last report (every ~250 ms while it mirrors, or always when relay-only). */
  received(): number;
  /**
   * Sends a datagram from the listening socket itself (an answer whose sender expects it from the port it wrote to:
   * an SNMP inform's acknowledgement, a USM report). The bytes are copied; a failure comes to `onError`.
   */
  send(data: Uint8Array, port: number, address: string): void;
  close(): Promise<void>;
}

/** The worker: plain JavaScript (run with eval, so it works from the TypeScript sources under test and from dist). */
const WORKER_SOURCE = `
const { parentPort, workerData: o } = require("node:worker_threads");
const CHUNK = 1 << 20;
let buf = new ArrayBuffer(CHUNK), view = new DataView(buf), bytes = new Uint8Array(buf), off = 0, count = 0;
let addrs = [], addrIndex = new Map(), inFlight = 0, dropped = 0, reported = 0, scheduled = false, lastFlush = 0;
let sock = null, gen = 0;
// A batch goes out at the end of the turn, or, when the previous one left less than COALESCE_MS ago, that much later:
// a trickle is handed over at once, a flood in batches of hundreds (each hand-over costs both threads a message).
const COALESCE_MS = 1;
function schedule() {
  if (scheduled) return;
  scheduled = true;
  if (performance.now() - lastFlush < COALESCE_MS) setTimeout(flush, COALESCE_MS);
  else setImmediate(flush);
}
function flush() {
  scheduled = false;
  lastFlush = performance.now();
  if (count === 0) {
    // Drops with nothing to deliver still reach the main thread.
    if (dropped !== reported) parentPort.postMessage({ t: "drops", dropped });
    reported = dropped;
    return;
  }
  reported = dropped;
  inFlight += off;
  // One scratch buffer is reused; the batch goes out as an exact-size copy (transferred): no 1 MiB allocation per turn.
  const out = buf.slice(0, off);
  parentPort.postMessage({ t: "batch", buf: out, off, count, addrs, dropped, gen }, [out]);
  off = 0; count = 0;
  addrs = []; addrIndex = new Map();
}
// Mirrors: every datagram relayed as read, by the socket (one connected relay socket per target: no address handling per
// datagram, and a closed port's ICMP answer comes back as an error), counted per target id across list changes.
let links = new Map(), mirrorTimer = null;
const retired = new Map();
function mirrorCounts() {
  const m = new Map(retired);
  for (const l of links.values()) {
    const c = m.get(l.id) ?? [0, 0];
    m.set(l.id, [c[0] + l.relay.sent, c[1] + l.relay.errors]);
  }
  return [...m].map(([id, c]) => [id, c[0], c[1]]);
}
// A target that is this socket's own port on this host would relay every datagram back to itself, forever.
const isLoopback = (x) => x.startsWith("127.") || x === "::1" || x.startsWith("::ffff:127.");
function isSelf(t) {
  const a = sock.address();
  if (t.port !== a.port) return false;
  if (t.address === a.address || (isLoopback(t.address) && isLoopback(a.address))) return true;
  if (a.address !== "0.0.0.0" && a.address !== "::") return false;
  if (isLoopback(t.address)) return true;
  const local = Object.values(require("node:os").networkInterfaces()).flat().map((i) => i.address);
  return local.includes(t.address) || local.includes(t.address.replace(/^::ffff:/, ""));
}
function setMirrors(targets, generation) {
  // What was read so far went to the old targets: handed over under the old generation.
  if (count > 0) flush();
  const next = new Map();
  for (const t of targets) {
    if (isSelf(t)) {
      parentPort.postMessage({ t: "error", code: "ELOOP", message: "mirror to " + t.address + ":" + t.port + " skipped: it is this socket itself" });
      continue;
    }
    const key = t.id + " " + t.address + " " + t.port;
    let l = next.get(key) ?? links.get(key);
    if (!l) {
      try { l = { id: t.id, relay: sock.relay(t.address, t.port) }; }
      catch (err) { parentPort.postMessage({ t: "error", code: err.code, message: "mirror to " + t.address + ": " + err.message }); continue; }
    }
    next.set(key, l);
  }
  for (const [key, l] of links) {
    if (next.has(key)) continue;
    const c = retired.get(l.id) ?? [0, 0];
    retired.set(l.id, [c[0] + l.relay.sent, c[1] + l.relay.errors]);
    l.relay.close();
  }
  links = next;
  sock.setRelays([...next.values()].map((l) => l.relay));
  gen = next.size > 0 ? generation : 0;
  if (next.size > 0) reportMirrors();
}
function reportMirrors() {
  mirrorTimer ??= setInterval(() => parentPort.postMessage({ t: "mirrored", counts: mirrorCounts(), received: sock.received }), 250);
}
function onMessage(msg, address, port) {
  const need = 8 + msg.length;
  if (inFlight + off + need > o.maxBacklogBytes || need > CHUNK) {
    dropped++;
    schedule();
    return;
  }
  if (off + need > CHUNK || addrs.length >= 65535) flush();
  let a = addrIndex.get(address);
  if (a === undefined) { a = addrs.length; addrs.push(address); addrIndex.set(address, a); }
  view.setUint32(off, msg.length); view.setUint16(off + 4, a); view.setUint16(off + 6, port);
  bytes.set(msg, off + 8);
  off += need; count++;
  schedule();
}
parentPort.on("message", (m) => {
  if (m.t === "ack") inFlight -= m.bytes;
  else if (m.t === "mirror") setMirrors(m.targets, m.gen);
  else if (m.t === "send") sock.send(new Uint8Array(m.buf), m.port, m.address);
  else if (m.t === "close") {
    if (mirrorTimer) clearInterval(mirrorTimer);
    parentPort.postMessage({ t: "mirrored", counts: mirrorCounts(), received: sock.received });
    for (const l of links.values()) l.relay.close();
    sock.close().then(() => parentPort.postMessage({ t: "closed" }));
  }
});
import(o.socketModule).then(async ({ bindDatagramSocket }) => {
  try {
    sock = await bindDatagramSocket({
      type: o.type, host: o.host, port: o.port, ipv6Only: o.ipv6Only === true, reusePort: o.reusePort === true,
      recvBufferSize: o.recvBufferSize, batched: o.batched, spreadOver: o.spreadOver, onMessage: o.relayOnly ? undefined : onMessage,
      onError: (err) => parentPort.postMessage({ t: "error", code: err.code, message: err.message }),
    });
  } catch (err) {
    parentPort.postMessage({ t: "bind-error", code: err.code, message: err.message });
    return;
  }
  const a = sock.address();
  if (o.relayOnly) reportMirrors();
  parentPort.postMessage({ t: "bound", address: a.address, port: a.port, batched: sock.batched, spread: sock.spread });
});
`;

type FromWorker =
  | { t: "bound"; address: string; port: number; batched: boolean; spread: boolean }
  | { t: "bind-error" | "error"; code?: string; message: string }
  | { t: "batch"; buf: ArrayBuffer; off: number; count: number; addrs: string[]; dropped: number; gen: number }
  | { t: "drops"; dropped: number }
  | { t: "mirrored"; counts: [string, number, number][]; received: number }
  | { t: "closed" };

/** Binds the socket in a new worker; rejects (with the errno `code` kept) when it cannot be bound. */
export function startUdpReader(o: UdpReaderOptions): Promise<UdpReader> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      type: o.type,
      host: o.host,
      port: o.port,
      ipv6Only: o.ipv6Only,
      reusePort: o.reusePort,
      recvBufferSize: o.recvBufferSize,
      batched: o.batched,
      spreadOver: o.spreadOver,
      relayOnly: o.onDatagram === undefined,
      socketModule: compiledModuleUrl("./datagramSocket.js", import.meta.url).href,
      maxBacklogBytes: o.maxBacklogBytes ?? 64 << 20,
    },
  });
  // The worker never keeps the process alive by itself: close() is how it ends.
  worker.unref();
  let dropped = 0;
  let received = 0;
  let closing: Promise<void> | null = null;
  const mirrored = new Map<string, MirrorCount>();
  const countDrops = (total: number) => {
    if (total > dropped) o.onBacklogDrops?.(total - dropped);
    dropped = total;
  };
  const take = (m: Extract<FromWorker, { t: "batch" }>) => {
    countDrops(m.dropped);
    const view = new DataView(m.buf);
    let at = 0;
    for (let i = 0; i < m.count; i++) {
      const len = view.getUint32(at);
      const address = m.addrs[view.getUint16(at + 4)];
      const port = view.getUint16(at + 6);
      try {
        o.onDatagram?.(Buffer.from(m.buf, at + 8, len), address, port, m.gen);
      } catch (err) {
        o.onError?.(err as Error);
      }
      at += 8 + len;
    }
    worker.postMessage({ t: "ack", bytes: m.off });
  };
  return new Promise<UdpReader>((resolve, reject) => {
    worker.once("error", reject);
    worker.on("message", (m: FromWorker) => {
      switch (m.t) {
        case "batch":
          return take(m);
        case "drops":
          return countDrops(m.dropped);
        case "mirrored":
          for (const [id, sent, errors] of m.counts) mirrored.set(id, { sent, errors });
          received = m.received;
          return;
        case "bound":
          worker.off("error", reject);
          worker.on("error", (err) => o.onError?.(err));
          return resolve({
            address: m.address,
            port: m.port,
            batched: m.batched,
            spread: m.spread,
            backlogDrops: () => dropped,
            mirror: (targets, generation = 0) =>
              worker.postMessage({ t: "mirror", gen: generation, targets: targets.map((t) => ({ id: t.id, address: t.address, port: t.port })) }),
            mirrorCounts: () => mirrored,
            received: () => received,
            send: (data, port, address) => {
              // A compact copy, transferred: a Buffer's view may sit in a shared pool that cloning would copy whole.
              const copy = Uint8Array.prototype.slice.call(data).buffer as ArrayBuffer;
              worker.postMessage({ t: "send", buf: copy, port, address }, [copy]);
            },
            close: () =>
              (closing ??= new Promise<void>((done) => {
                worker.once("exit", () => done());
                worker.on("message", (x: FromWorker) => x.t === "closed" && void worker.terminate());
                worker.postMessage({ t: "close" });
              })),
          });
        case "bind-error":
          void worker.terminate();
          return reject(Object.assign(new Error(m.message), { code: m.code }));
        case "error":
          return o.onError?.(Object.assign(new Error(m.message), { code: m.code }));
      }
    });
  });
}
