/**
 * NetFlow / IPFIX peers on loopback for the flow decoder tests:
 * - a pcap writer (Ethernet + IPv4/IPv6 + TCP/UDP/ICMP, built byte by byte) and a generator of flows with known totals;
 * - softflowd reading such a pcap (-r) and exporting v5, v9 or IPFIX to a UDP port, then exiting;
 * - nfcapd (nfdump's collector) storing to a temporary folder, read back with nfdump -o csv;
 * - nfreplay re-sending what nfcapd stored, as v5 or v9;
 * - a UDP sink that keeps every datagram it receives.
 * Processes are stopped by their own pid; folders are removed by the caller (cleanupFlowPeers() in afterAll).
 *
 * Needs the Debian packages softflowd (1.1.0) and nfdump (1.7.1). softflowd traps: never pass -c with -r (it blocks in
 * accept() forever); v9 needs -a and IPFIX -A milli when reading a pcap, or first/last are 2^32 ms off.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const LOOPBACK = "127.0.0.1";

// ---- pcap writing -----------------------------------------------------------------------------------------------------

export type Proto = "tcp" | "udp" | "icmp";

export interface PcapPacket {
  /** Capture time, Unix ms. */
  tsMs: number;
  /** IPv4 or IPv6 text (both ends the same family). */
  src: string;
  dst: string;
  proto: Proto;
  sport?: number;
  dport?: number;
  /** TCP flags byte (SYN 0x02, ACK 0x10, FIN 0x01, PSH 0x08). */
  flags?: number;
  /** ICMP type/code (echo request 8/0 by default). */
  icmpType?: number;
  icmpCode?: number;
  /** Payload bytes after the transport header. */
  payload: number;
}

function ipv4Bytes(s: string): number[] {
  const parts = s.split(".").map(Number);
  if (parts.length !== 4 || parts.some((n) => !(n >= 0 && n <= 255))) throw new Error(`not IPv4: ${s}`);
  return parts;
}

function ipv6Bytes(s: string): number[] {
  const [head, tail] = s.includes("::") ? s.split("::") : [s, undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill("0"), ...t];
  if (groups.length !== 8) throw new Error(`not IPv6: ${s}`);
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 255];
  });
}

function checksum(b: Buffer, from: number, to: number, seed = 0): number {
  let sum = seed;
  for (let i = from; i < to; i += 2) sum += (b[i] << 8) | (i + 1 < to ? b[i + 1] : 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

const PROTO_NUM: Record<Proto, number> = { tcp: 6, udp: 17, icmp: 1 };

/** The IP protocol number a packet carries (ICMP over IPv6 is 58). */
export function protoNumber(p: Pick<PcapPacket, "proto" | "src">): number {
  return p.proto === "icmp" && p.src.includes(":") ? 58 : PROTO_NUM[p.proto];
}

function transportLength(p: PcapPacket): number {
  return (p.proto === "tcp" ? 20 : 8) + p.payload;
}

/** What exporters count as the packet's bytes: the IP total length (IPv4 header + transport), or IPv6 40 + payload length. */
export function ipLength(p: PcapPacket): number {
  return (p.src.includes(":") ? 40 : 20) + transportLength(p);
}

/** One Ethernet frame. */
export function frame(p: PcapPacket): Buffer {
  const v6 = p.src.includes(":");
  const l4 = transportLength(p);
  const ipLen = v6 ? 40 : 20;
  const b = Buffer.alloc(14 + ipLen + l4);
  Buffer.from([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]).copy(b, 0);
  b.writeUInt16BE(v6 ? 0x86dd : 0x0800, 12);
  const proto = protoNumber(p);
  const ip = 14;
  const srcB = v6 ? ipv6Bytes(p.src) : ipv4Bytes(p.src);
  const dstB = v6 ? ipv6Bytes(p.dst) : ipv4Bytes(p.dst);
  if (v6) {
    b.writeUInt32BE(0x60000000, ip);
    b.writeUInt16BE(l4, ip + 4);
    b[ip + 6] = proto;
    b[ip + 7] = 64;
    Buffer.from(srcB).copy(b, ip + 8);
    Buffer.from(dstB).copy(b, ip + 24);
  } else {
    b[ip] = 0x45;
    b.writeUInt16BE(20 + l4, ip + 2);
    b.writeUInt16BE(0x4000, ip + 6);
    b[ip + 8] = 64;
    b[ip + 9] = proto;
    Buffer.from(srcB).copy(b, ip + 12);
    Buffer.from(dstB).copy(b, ip + 16);
    b.writeUInt16BE(checksum(b, ip, ip + 20), ip + 10);
  }
  const t = ip + ipLen;
  if (p.proto === "tcp") {
    b.writeUInt16BE(p.sport ?? 0, t);
    b.writeUInt16BE(p.dport ?? 0, t + 2);
    b.writeUInt32BE(1000, t + 4);
    b[t + 12] = 0x50;
    b[t + 13] = p.flags ?? 0x10;
    b.writeUInt16BE(65535, t + 14);
  } else if (p.proto === "udp") {
    b.writeUInt16BE(p.sport ?? 0, t);
    b.writeUInt16BE(p.dport ?? 0, t + 2);
    b.writeUInt16BE(l4, t + 4);
  } else {
    b[t] = p.icmpType ?? (v6 ? 128 : 8);
    b[t + 1] = p.icmpCode ?? 0;
    b.writeUInt16BE(1, t + 4);
    b.writeUInt16BE(1, t + 6);
  }
  b.fill(0x61, t + (p.proto === "tcp" ? 20 : 8));
  // Transport checksums: exporters do not check them; the IPv4 header checksum above is real.
  return b;
}

/** A pcap file (libpcap 2.4, microsecond timestamps, Ethernet link type) of the packets, in the order given. */
export function pcapBytes(packets: readonly PcapPacket[]): Buffer {
  const parts: Buffer[] = [];
  const g = Buffer.alloc(24);
  g.writeUInt32LE(0xa1b2c3d4, 0);
  g.writeUInt16LE(2, 4);
  g.writeUInt16LE(4, 6);
  g.writeUInt32LE(65535, 16);
  g.writeUInt32LE(1, 20);
  parts.push(g);
  for (const p of packets) {
    const f = frame(p);
    const h = Buffer.alloc(16);
    h.writeUInt32LE(Math.floor(p.tsMs / 1000), 0);
    h.writeUInt32LE(Math.round((p.tsMs % 1000) * 1000), 4);
    h.writeUInt32LE(f.length, 8);
    h.writeUInt32LE(f.length, 12);
    parts.push(h, f);
  }
  return Buffer.concat(parts);
}

export function writePcap(path: string, packets: readonly PcapPacket[]): void {
  writeFileSync(path, pcapBytes(packets));
}

/** Key of a unidirectional flow, as the tests aggregate records and packets: "src dst proto sport dport". */
export function flowKey(src: string, dst: string, proto: number, sport: number, dport: number): string {
  return `${src} ${dst} ${proto} ${sport} ${dport}`;
}

export interface Totals {
  flows: number;
  packets: number;
  bytes: number;
}

/** Adds one flow's counts under its key. */
export function addTo(m: Map<string, Totals>, key: string, flows: number, packets: number, bytes: number): void {
  const t = m.get(key);
  if (t) {
    t.flows += flows;
    t.packets += packets;
    t.bytes += bytes;
  } else m.set(key, { flows, packets, bytes });
}

export function sumTotals(m: Map<string, Totals>): Totals {
  const s = { flows: 0, packets: 0, bytes: 0 };
  for (const t of m.values()) {
    s.flows += t.flows;
    s.packets += t.packets;
    s.bytes += t.bytes;
  }
  return s;
}

export interface GeneratedTraffic {
  packets: PcapPacket[];
  /** Per unidirectional flow key (ICMP: ports 0 and type*256+code, as softflowd and nfdump report them): packets and bytes. */
  expected: Map<string, Totals>;
  startMs: number;
  endMs: number;
}

/**
 * `n` conversations with RFC 5737 (IPv4) and RFC 3849 (IPv6, every `v6Every`-th) documentation addresses: 60 % TCP
 * (handshake, data both ways, FIN), 30 % UDP (2 requests, 1 answer), 10 % ICMP echo and reply; deterministic sizes;
 * spread over `spreadMs` from `startMs`. Each conversation is two unidirectional flows.
 */
export function generateTraffic(n: number, opts: { startMs?: number; spreadMs?: number; v6Every?: number; seed?: number } = {}): GeneratedTraffic {
  const startMs = opts.startMs ?? Date.now() - 180_000;
  const spread = opts.spreadMs ?? 60_000;
  let seed = opts.seed ?? 42;
  const rnd = (lo: number, hi: number): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return lo + (seed % (hi - lo + 1));
  };
  const packets: PcapPacket[] = [];
  const add = (p: PcapPacket): void => void packets.push(p);
  for (let i = 0; i < n; i++) {
    const v6 = opts.v6Every ? i % opts.v6Every === opts.v6Every - 1 : false;
    // IPv6 text already in RFC 5952 form (what the decoder prints): no zero group next to "::".
    const a = v6 ? `2001:db8::${(1 + (i % 65000)).toString(16)}:1` : `192.0.2.${1 + (i % 254)}`;
    const b = v6 ? `2001:db8:1::${(1 + ((i >> 4) % 65000)).toString(16)}` : `${i % 2 ? "198.51.100" : "203.0.113"}.${1 + (Math.floor(i / 254) % 254)}`;
    const sport = 1024 + ((i * 7) % 60000);
    const t = startMs + Math.floor((spread * i) / n);
    const kind = i % 10;
    if (kind < 6) {
      const dport = [80, 443, 22, 25, 3306, 8080][i % 6];
      add({ tsMs: t, src: a, dst: b, proto: "tcp", sport, dport, flags: 0x02, payload: 0 });
      add({ tsMs: t + 1, src: b, dst: a, proto: "tcp", sport: dport, dport: sport, flags: 0x12, payload: 0 });
      add({ tsMs: t + 2, src: a, dst: b, proto: "tcp", sport, dport, flags: 0x18, payload: rnd(40, 1400) });
      add({ tsMs: t + 10, src: b, dst: a, proto: "tcp", sport: dport, dport: sport, flags: 0x18, payload: rnd(100, 1400) });
      add({ tsMs: t + 20, src: a, dst: b, proto: "tcp", sport, dport, flags: 0x11, payload: 0 });
      add({ tsMs: t + 21, src: b, dst: a, proto: "tcp", sport: dport, dport: sport, flags: 0x11, payload: 0 });
    } else if (kind < 9) {
      const dport = [53, 123, 514, 161][i % 4];
      add({ tsMs: t, src: a, dst: b, proto: "udp", sport, dport, payload: rnd(20, 200) });
      add({ tsMs: t + 1, src: b, dst: a, proto: "udp", sport: dport, dport: sport, payload: rnd(40, 500) });
      add({ tsMs: t + 500, src: a, dst: b, proto: "udp", sport, dport, payload: rnd(20, 200) });
    } else {
      add({ tsMs: t, src: a, dst: b, proto: "icmp", icmpType: v6 ? 128 : 8, payload: 56 });
      add({ tsMs: t + 1, src: b, dst: a, proto: "icmp", icmpType: v6 ? 129 : 0, payload: 56 });
    }
  }
  packets.sort((x, y) => x.tsMs - y.tsMs);
  const expected = new Map<string, Totals>();
  const seen = new Set<string>();
  for (const p of packets) {
    const proto = protoNumber(p);
    const key =
      p.proto === "icmp"
        ? flowKey(p.src, p.dst, proto, 0, ((p.icmpType ?? 0) << 8) | (p.icmpCode ?? 0))
        : flowKey(p.src, p.dst, proto, p.sport ?? 0, p.dport ?? 0);
    addTo(expected, key, seen.has(key) ? 0 : 1, 1, ipLength(p));
    seen.add(key);
  }
  return { packets, expected, startMs, endMs: packets.length ? packets[packets.length - 1].tsMs : startMs };
}

// ---- UDP sink ---------------------------------------------------------------------------------------------------------

export interface Datagram {
  data: Buffer;
  from: string;
}

export interface UdpSink {
  port: number;
  datagrams: Datagram[];
  /** Resolves once at least `min` datagrams arrived and none for `quietMs` (or rejects after `timeoutMs`). */
  settle(min: number, quietMs?: number, timeoutMs?: number): Promise<Datagram[]>;
  close(): Promise<void>;
}

/** A UDP socket on 127.0.0.1 (a free port chosen by the kernel, kept open: no race) that keeps every datagram. */
export function udpSink(): Promise<UdpSink> {
  return new Promise((resolve, reject) => {
    const s: Socket = createSocket({ type: "udp4", recvBufferSize: 8 << 20 });
    const datagrams: Datagram[] = [];
    let lastAt = Date.now();
    s.on("message", (data, rinfo) => {
      datagrams.push({ data, from: rinfo.address });
      lastAt = Date.now();
    });
    s.once("error", reject);
    s.bind(0, LOOPBACK, () => {
      resolve({
        port: s.address().port,
        datagrams,
        settle: async (min, quietMs = 300, timeoutMs = 20_000) => {
          const until = Date.now() + timeoutMs;
          for (;;) {
            if (datagrams.length >= min && Date.now() - lastAt >= quietMs) return datagrams;
            if (Date.now() > until) throw new Error(`udp sink: ${datagrams.length} datagrams, wanted ${min}`);
            await new Promise((r) => setTimeout(r, 50));
          }
        },
        close: () => new Promise<void>((r) => s.close(() => r())),
      });
    });
  });
}

/** Sends datagrams to 127.0.0.1:port, paced (every `batch` datagrams a macrotask pause) so a local receiver keeps up. */
export async function sendDatagrams(port: number, datagrams: readonly Buffer[], batch = 16): Promise<void> {
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, LOOPBACK, () => r()));
  try {
    for (let i = 0; i < datagrams.length; i++) {
      await new Promise<void>((res, rej) => s.send(datagrams[i], port, LOOPBACK, (err) => (err ? rej(err) : res())));
      if (i % batch === batch - 1) await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    await new Promise<void>((r) => s.close(() => r()));
  }
}

// ---- folders and processes ------------------------------------------------------------------------------------------

const folders = new Set<string>();
const children = new Set<ChildProcess>();

process.once("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

/** A temporary folder removed by cleanupFlowPeers(). */
export function flowTempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "nms-flows-"));
  folders.add(d);
  return d;
}

/** Stops what is still running (by pid) and removes the folders (afterAll). */
export async function cleanupFlowPeers(): Promise<void> {
  for (const c of children) c.kill("SIGKILL");
  children.clear();
  for (const d of folders) rmSync(d, { recursive: true, force: true });
  folders.clear();
}

// ---- softflowd --------------------------------------------------------------------------------------------------------

export interface SoftflowdRun {
  version: 5 | 9 | 10;
  pcap: string;
  port: number;
  /** -s: periodical sampling, 1 packet in `sampling`. */
  sampling?: number;
}

/**
 * softflowd -d -r PCAP -n 127.0.0.1:PORT -v V (v9: -a; IPFIX: -A milli): reads the pcap, expires every flow at its end,
 * exports and exits. Returns its output ("Flows exported" etc.).
 */
export async function runSoftflowd(o: SoftflowdRun): Promise<string> {
  const dir = flowTempDir();
  const args = ["-d", "-r", o.pcap, "-n", `${LOOPBACK}:${o.port}`, "-v", String(o.version), "-p", join(dir, "softflowd.pid")];
  if (o.version === 9) args.push("-a");
  if (o.version === 10) args.push("-A", "milli");
  if (o.sampling) args.push("-s", String(o.sampling));
  const { stdout, stderr } = await run("softflowd", args, { timeout: 60_000 });
  return stdout + stderr;
}

// ---- nfcapd / nfdump / nfreplay -----------------------------------------------------------------------------------------

export interface Nfcapd {
  port: number;
  dir: string;
  /** SIGTERM: nfcapd closes its current file; resolves when it exited. */
  stop(): Promise<void>;
}

/** nfcapd -b 127.0.0.1 -p PORT -w DIR: the reference collector, storing to a fresh folder. */
export async function startNfcapd(port: number): Promise<Nfcapd> {
  const dir = flowTempDir();
  const child = spawn("nfcapd", ["-b", LOOPBACK, "-p", String(port), "-w", dir, "-t", "3600", "-B", "4194304"], { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once("exit", () => (children.delete(child), r())));
  // nfcapd is ready once its socket is bound.
  const until = Date.now() + 10_000;
  while (!udpListening(port)) {
    if (Date.now() > until || child.exitCode !== null) throw new Error(`nfcapd did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    dir,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Whether a UDP socket is bound to 127.0.0.1:port, from /proc/net/udp (probing by binding would race nfcapd's own bind). */
function udpListening(port: number): boolean {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return readFileSync("/proc/net/udp", "utf8")
    .split("\n")
    .some((l) => l.trim().split(/\s+/)[1] === local);
}

/** nfcapd's stored files in a folder. */
export function nfcapdFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith("nfcapd.") && !f.startsWith("nfcapd.current"))
    .map((f) => join(dir, f));
}

export interface NfdumpFlow {
  src: string;
  dst: string;
  proto: number;
  sport: number;
  dport: number;
  packets: number;
  bytes: number;
  /** Flow start, Unix ms (nfdump's %tsr). */
  firstMs: number;
}

const NFDUMP_FMT = "fmt:%tsr|%sa|%da|%sp|%dp|%pr|%pkt|%byt";

/** Every flow nfdump reads from a folder: nfdump -R DIR -q -N -o "fmt:%tsr|%sa|%da|%sp|%dp|%pr|%pkt|%byt" (-N: plain numbers). */
export async function nfdumpFlows(dir: string): Promise<NfdumpFlow[]> {
  const { stdout } = await run("nfdump", ["-R", dir, "-q", "-N", "-o", NFDUMP_FMT], { maxBuffer: 256 << 20 });
  return parseNfdump(stdout);
}

/** Lines of the format above (fields padded with spaces; the protocol as a number, or a name for a few). */
export function parseNfdump(text: string): NfdumpFlow[] {
  const out: NfdumpFlow[] = [];
  for (const line of text.split("\n")) {
    const f = line.split("|").map((x) => x.trim());
    if (f.length !== 8 || !/^\d+(\.\d+)?$/.test(f[0])) continue;
    out.push({
      firstMs: Math.round(Number(f[0]) * 1000),
      src: f[1],
      dst: f[2],
      sport: Number(f[3]),
      dport: Number(f[4]),
      proto: protoFromText(f[5]),
      packets: Number(f[6]),
      bytes: Number(f[7]),
    });
  }
  return out;
}

function protoFromText(s: string): number {
  const names: Record<string, number> = { ICMP: 1, TCP: 6, UDP: 17, ICMP6: 58 };
  return names[s.toUpperCase()] ?? Number(s);
}

/** nfreplay -r FILE -H 127.0.0.1 -p PORT -v 5|9 -d 0, for each stored file of `dir`. */
export async function runNfreplay(dir: string, port: number, version: 5 | 9, delayUs = 100): Promise<void> {
  for (const f of nfcapdFiles(dir))
    await run("nfreplay", ["-r", f, "-H", LOOPBACK, "-p", String(port), "-v", String(version), "-d", String(delayUs)], { timeout: 60_000 });
}

// ---- hand-built v9 / IPFIX packets (for cases no exporter here produces) ------------------------------------------------

export interface FieldSpec {
  id: number;
  length: number;
  enterprise?: number;
}

/**
 * The fields of a plain IPv4 flow record (IPFIX element ids): sourceIPv4Address, destinationIPv4Address, protocolIdentifier,
 * sourceTransportPort, destinationTransportPort, octetDeltaCount (8), packetDeltaCount (8), flowEndSeconds. Build a record with
 * `ip4(src), ip4(dst), u(1, proto), u(2, sport), u(2, dport), u(8, bytes), u(8, packets), u(4, endSecs)`.
 */
export const IPV4_FLOW_FIELDS: readonly FieldSpec[] = [
  { id: 8, length: 4 },
  { id: 12, length: 4 },
  { id: 4, length: 1 },
  { id: 7, length: 2 },
  { id: 11, length: 2 },
  { id: 1, length: 8 },
  { id: 2, length: 8 },
  { id: 151, length: 4 },
];

/** A big-endian unsigned integer of `len` bytes (8-byte values as bigint or number). */
export function u(len: number, value: number | bigint): Buffer {
  const b = Buffer.alloc(len);
  let v = BigInt(value);
  for (let i = len - 1; i >= 0; i--, v >>= 8n) b[i] = Number(v & 255n);
  return b;
}

export function ip4(s: string): Buffer {
  return Buffer.from(ipv4Bytes(s));
}

export function ip6(s: string): Buffer {
  return Buffer.from(ipv6Bytes(s));
}

/** An IPFIX variable-length value: 1-byte length, or 255 + 2-byte length from 255 bytes on. */
export function varlen(data: Buffer): Buffer {
  return data.length < 255 ? Buffer.concat([u(1, data.length), data]) : Buffer.concat([u(1, 255), u(2, data.length), data]);
}

function specs(fields: readonly FieldSpec[], ipfix: boolean): Buffer {
  return Buffer.concat(
    fields.map((f) =>
      ipfix && f.enterprise ? Buffer.concat([u(2, f.id | 0x8000), u(2, f.length), u(4, f.enterprise)]) : Buffer.concat([u(2, f.id), u(2, f.length)]),
    ),
  );
}

function set(id: number, body: Buffer, padTo4 = false): Buffer {
  const pad = padTo4 ? (4 - ((body.length + 4) % 4)) % 4 : 0;
  return Buffer.concat([u(2, id), u(2, body.length + 4 + pad), body, Buffer.alloc(pad)]);
}

/** Template set: v9 flowset 0 / IPFIX set 2. A template with no fields is an IPFIX withdrawal. */
export function templateSet(version: 9 | 10, templates: readonly { id: number; fields: readonly FieldSpec[] }[]): Buffer {
  return set(version === 9 ? 0 : 2, Buffer.concat(templates.map((t) => Buffer.concat([u(2, t.id), u(2, t.fields.length), specs(t.fields, version === 10)]))));
}

/** Options template set: v9 flowset 1 (scope/option lengths in bytes) / IPFIX set 3 (field count, scope count). */
export function optionsTemplateSet(version: 9 | 10, id: number, scope: readonly FieldSpec[], fields: readonly FieldSpec[]): Buffer {
  if (version === 9) return set(1, Buffer.concat([u(2, id), u(2, scope.length * 4), u(2, fields.length * 4), specs(scope, false), specs(fields, false)]), true);
  return set(3, Buffer.concat([u(2, id), u(2, scope.length + fields.length), u(2, scope.length), specs([...scope, ...fields], true)]));
}

/** A data set of records (each the concatenation of its field values), padded to 4 bytes. */
export function dataSet(templateId: number, records: readonly Buffer[]): Buffer {
  return set(templateId, Buffer.concat(records), true);
}

export function v9Packet(o: { sourceId: number; uptimeMs: number; unixSecs: number; seq?: number }, sets: readonly Buffer[]): Buffer {
  return Buffer.concat([u(2, 9), u(2, sets.length), u(4, o.uptimeMs), u(4, o.unixSecs), u(4, o.seq ?? 0), u(4, o.sourceId), ...sets]);
}

export function ipfixMessage(o: { domain: number; exportSecs: number; seq?: number }, sets: readonly Buffer[]): Buffer {
  const body = Buffer.concat(sets);
  return Buffer.concat([u(2, 10), u(2, 16 + body.length), u(4, o.exportSecs), u(4, o.seq ?? 0), u(4, o.domain), body]);
}
