/**
 * A flows reader thread (FlowIngest starts one per decoder, each on its own SO_REUSEPORT socket of the flows port). It
 * only receives (with recvmmsg where it can, core's datagramSocket.ts): each datagram is laid out as a journal record in a batch, and the batch goes, once per turn of this
 * thread's loop (at most every millisecond under a flood), to the decoder with the least in hand. So one exporter's
 * datagrams, which the kernel always puts on the same socket, are decoded on every core. A datagram every decoder
 * must see (templates, options data) ends the batch, goes whole to one decoder and as a learn-only copy to the
 * others, before any later batch. Past maxBacklogBytes not yet journaled by the decoders, datagrams are dropped and
 * counted.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { bindDatagramSocket, RECORD_HEADER_BYTES, type DatagramSocket } from "../../../core/worker.js";
import { TemplateSpread } from "./classify.js";
import { FLAG_LEARN_ONLY, metaBytes, writeMeta, type DecoderAck, type FromReader, type ReaderBatch, type ReaderData, type ToReader } from "./protocol.js";

const o = workerData as ReaderData;
const parent = parentPort!;
const post = (m: FromReader) => parent.postMessage(m);
const CHUNK = 1 << 20;
const COALESCE_MS = 1;
/** Most exporter domains whose options template ids are remembered (past it, forgotten and learned again). */
const MAX_DOMAINS = 100_000;

interface Target {
  /** Null while the decoder is down (it died; the main thread starts another). */
  port: MessagePort | null;
  /** Bytes sent and not yet journaled. */
  inHand: number;
}
const targets: Target[] = o.decoders.map((port) => ({ port, inHand: 0 }));
let backlog = 0;
const listen = (t: Target) =>
  t.port?.on("message", (m: DecoderAck) => {
    t.inHand -= m.bytes;
    backlog -= m.bytes;
  });
for (const t of targets) listen(t);

/** Decoder `index` died (port null) or was replaced: what it held is forgotten (its journal keeps what it had appended). */
function replaceDecoder(index: number, port: MessagePort | null): void {
  const old = targets[index];
  backlog -= old.inHand;
  old.port?.close();
  const t: Target = { port, inHand: 0 };
  targets[index] = t;
  listen(t);
}

const buf = new Uint8Array(CHUNK);
const view = new DataView(buf.buffer);
let off = 0;
let count = 0;
let scheduled = false;
let lastFlush = 0;
let received = 0;
let dropped = 0;
let spread = new TemplateSpread();
const v4mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;
const texts = new Map<string, string>();

/** The exporter's address as the collector keys it (an IPv4 sender on a dual-stack socket as IPv4). */
function exporterOf(address: string): string {
  let t = texts.get(address);
  if (t === undefined) {
    if (texts.size >= 10_000) texts.clear();
    t = v4mapped.exec(address)?.[1] ?? address.toLowerCase();
    texts.set(address, t);
  }
  return t;
}

let turn = 0;
/**
 * While the forwarding tee takes flows (the feed), everything goes to one decoder (each reader its own): the tee relays
 * datagrams in the order the decoders hand them over, and a collector behind it needs a template before its data.
 */
let feed = false;
/** The decoder with the least in hand; among equals, each in turn. */
function leastLoaded(): Target | null {
  if (feed) {
    // Its own decoder, or while that one is down the next that runs.
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(o.index + k) % targets.length];
      if (t.port) return t;
    }
    return null;
  }
  turn = (turn + 1) % targets.length;
  let best: Target | null = null;
  for (let k = 0; k < targets.length; k++) {
    const t = targets[(turn + k) % targets.length];
    if (t.port && (best === null || t.inHand < best.inHand)) best = t;
  }
  return best;
}

function send(t: Target | null, b: Uint8Array, bytes: number, n: number): void {
  if (!t?.port) {
    // Every decoder down: lost, counted.
    dropped += n;
    return;
  }
  // An exact-size copy, transferred: the scratch buffer is reused.
  const out = b.buffer.slice(0, bytes) as ArrayBuffer;
  t.inHand += bytes;
  backlog += bytes;
  t.port.postMessage({ t: "batch", buf: out, bytes, count: n } satisfies ReaderBatch, [out]);
}

function flush(): void {
  scheduled = false;
  lastFlush = performance.now();
  if (count === 0) return;
  send(leastLoaded(), buf, off, count);
  off = 0;
  count = 0;
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  if (performance.now() - lastFlush < COALESCE_MS) setTimeout(flush, COALESCE_MS);
  else setImmediate(flush);
}

/** Lays one datagram out as a record at `at` of `into`; answers the record's length. */
function frame(into: Uint8Array, intoView: DataView, at: number, msg: Buffer, exporter: string, flags: number): number {
  const payload = metaBytes(exporter) + msg.length;
  intoView.setUint32(at, payload);
  into.set(msg, writeMeta(into, at + RECORD_HEADER_BYTES, flags, exporter));
  return RECORD_HEADER_BYTES + payload;
}

function onMessage(msg: Buffer, address: string): void {
  received++;
  const exporter = exporterOf(address);
  const need = RECORD_HEADER_BYTES + metaBytes(exporter) + msg.length;
  if (backlog + off + need > o.maxBacklogBytes || need > CHUNK) {
    dropped++;
    return;
  }
  if (targets.length > 1 && spread.everyDecoder(msg, msg.length, exporter)) {
    // Whatever came before goes first; then the whole datagram to one decoder and its templates to every other.
    flush();
    if (spread.size > MAX_DOMAINS) spread = new TemplateSpread();
    const one = new Uint8Array(need);
    const oneView = new DataView(one.buffer);
    const whole = leastLoaded();
    for (const t of targets) {
      if (!t.port || !whole) continue;
      frame(one, oneView, 0, msg, exporter, t === whole ? 0 : FLAG_LEARN_ONLY);
      send(t, one, need, 1);
    }
    if (!whole) dropped++;
    return;
  }
  if (off + need > CHUNK) flush();
  off += frame(buf, view, off, msg, exporter, 0);
  count++;
  schedule();
}

let socket: DatagramSocket | null = null;
const statsTimer = setInterval(() => post({ t: "stats", received, dropped }), 250);
parent.on("message", (m: ToReader) => {
  if (m.t === "decoder") {
    flush();
    replaceDecoder(m.index, m.port);
    return;
  }
  if (m.t === "feed") {
    flush();
    feed = m.on;
    return;
  }
  flush();
  clearInterval(statsTimer);
  post({ t: "stats", received, dropped });
  // The ports stay open: the decoders close their ends once they have read what was sent.
  void (socket?.close() ?? Promise.resolve()).then(() => post({ t: "closed" }));
});
try {
  socket = await bindDatagramSocket({
    type: o.type,
    host: o.host,
    port: o.port,
    ipv6Only: o.ipv6Only,
    reusePort: true,
    recvBufferSize: o.recvBufferSize,
    onMessage,
    onError: (err) => post({ t: "error", code: err.code, message: err.message }),
  });
  const a = socket.address();
  post({ t: "bound", address: a.address, port: a.port, batched: socket.batched });
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  post({ t: "bind-error", code: e.code, message: e.message });
}
