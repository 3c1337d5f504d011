/* global fetch */
// Export packets, a paced multi-exporter sender and the nfcapd reference for the flows benchmarks (bench/flows-*.mjs).
//
// The packets are built here, field by field, from RFC 3954 (NetFlow v9) and RFC 7011 (IPFIX): one template set and
// data sets of many IPv4 records each (addresses, ports, protocol, TCP flags, interfaces, bytes, packets, start/end
// times, source/destination AS, and for v9 the ToS and next hop). The sender runs in a child process (this file run as
// `node bench/lib/flows-peers.mjs send <json>`) so that it does not share an event loop with anything it measures; it
// binds one socket per exporter on its own 127.0.1.x address (all of 127/8 is loopback on Linux), sends each
// exporter's templates first, then paces data datagrams round-robin over the exporters by the clock (every ~1 ms tick it
// sends what is due), patching the header's time and sequence number in a copy of each datagram. Everything targets
// 127.0.0.1 only; nfcapd is stopped by its own pid, never by name.
import { execFileSync, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The exporter addresses: 127.0.1.1, 127.0.1.2, … (n ≤ 254 per /24, then 127.0.2.x). */
export const exporterAddresses = (n) => Array.from({ length: n }, (_, i) => `127.0.${1 + Math.floor(i / 254)}.${1 + (i % 254)}`);

// ---- packet building -------------------------------------------------------------------------------------------------

const TEMPLATE_ID = 256;
/** NetFlow v9 template: [field type, length]; 47 bytes per record. */
const V9_FIELDS = [
  [8, 4], // IPV4_SRC_ADDR
  [12, 4], // IPV4_DST_ADDR
  [7, 2], // L4_SRC_PORT
  [11, 2], // L4_DST_PORT
  [4, 1], // PROTOCOL
  [6, 1], // TCP_FLAGS
  [5, 1], // SRC_TOS
  [10, 2], // INPUT_SNMP
  [14, 2], // OUTPUT_SNMP
  [1, 4], // IN_BYTES
  [2, 4], // IN_PKTS
  [22, 4], // FIRST_SWITCHED (sysUptime ms)
  [21, 4], // LAST_SWITCHED
  [16, 4], // SRC_AS
  [17, 4], // DST_AS
  [15, 4], // IPV4_NEXT_HOP
];
/** IPFIX template: [IE, length] (reduced-size encodings for interfaces and counters); 50 bytes per record. */
const IPFIX_FIELDS = [
  [8, 4], // sourceIPv4Address
  [12, 4], // destinationIPv4Address
  [7, 2], // sourceTransportPort
  [11, 2], // destinationTransportPort
  [4, 1], // protocolIdentifier
  [6, 1], // tcpControlBits (reduced)
  [10, 2], // ingressInterface (reduced)
  [14, 2], // egressInterface (reduced)
  [1, 4], // octetDeltaCount (reduced)
  [2, 4], // packetDeltaCount (reduced)
  [152, 8], // flowStartMilliseconds
  [153, 8], // flowEndMilliseconds
  [16, 4], // bgpSourceAsNumber
  [17, 4], // bgpDestinationAsNumber
];
export const RECORDS_PER_PACKET = { 9: 30, 10: 28 };
const UPTIME_MS = 86_400_000; // the v9 exporters' sysUptime in every header: up one day

/** A small deterministic PRNG (the same pool on every run). */
function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const ipv4 = (buf, off, a, b, c, d) => {
  buf[off] = a;
  buf[off + 1] = b;
  buf[off + 2] = c;
  buf[off + 3] = d;
};

/** One synthetic flow: inside hosts 10.<e>.x.y talk to outside hosts 198.18-19.x.y (RFC 2544), 60 % TCP, 30 % UDP, 10 % ICMP. */
function flow(rand, e, nowMs) {
  const r = rand();
  const proto = r < 0.6 ? 6 : r < 0.9 ? 17 : 1;
  const services = proto === 6 ? [443, 80, 22, 25, 993, 8080] : [53, 123, 161, 514, 4789];
  const bytesPerPkt = 60 + Math.floor(rand() * 1400);
  const packets = 1 + Math.floor(rand() ** 3 * 5000);
  const durMs = Math.floor(rand() * 60000);
  const endMs = nowMs - 1000 - Math.floor(rand() * 4000);
  return {
    src: [10, e & 0xff, Math.floor(rand() * 16), 1 + Math.floor(rand() * 250)],
    dst: [198, 18 + Math.floor(rand() * 2), Math.floor(rand() * 64), 1 + Math.floor(rand() * 250)],
    sport: 1024 + Math.floor(rand() * 60000),
    dport: proto === 1 ? 0x0800 : services[Math.floor(rand() * services.length)],
    proto,
    flags: proto === 6 ? 0x1b : 0,
    tos: 0,
    ifIn: 1 + Math.floor(rand() * 48),
    ifOut: 1 + Math.floor(rand() * 48),
    bytes: bytesPerPkt * packets,
    packets,
    startMs: endMs - durMs,
    endMs,
    srcAs: 64512 + (e % 1000),
    dstAs: 13335 + Math.floor(rand() * 200),
  };
}

function writeV9Record(buf, o, f, nowMs) {
  const up = (ms) => UPTIME_MS - (nowMs - ms);
  ipv4(buf, o, ...f.src);
  ipv4(buf, o + 4, ...f.dst);
  buf.writeUInt16BE(f.sport, o + 8);
  buf.writeUInt16BE(f.dport, o + 10);
  buf[o + 12] = f.proto;
  buf[o + 13] = f.flags;
  buf[o + 14] = f.tos;
  buf.writeUInt16BE(f.ifIn, o + 15);
  buf.writeUInt16BE(f.ifOut, o + 17);
  buf.writeUInt32BE(f.bytes >>> 0, o + 19);
  buf.writeUInt32BE(f.packets, o + 23);
  buf.writeUInt32BE(up(f.startMs), o + 27);
  buf.writeUInt32BE(up(f.endMs), o + 31);
  buf.writeUInt32BE(f.srcAs, o + 35);
  buf.writeUInt32BE(f.dstAs, o + 39);
  ipv4(buf, o + 43, 10, f.src[1], 0, 1);
  return o + 47;
}

function writeIpfixRecord(buf, o, f) {
  ipv4(buf, o, ...f.src);
  ipv4(buf, o + 4, ...f.dst);
  buf.writeUInt16BE(f.sport, o + 8);
  buf.writeUInt16BE(f.dport, o + 10);
  buf[o + 12] = f.proto;
  buf[o + 13] = f.flags;
  buf.writeUInt16BE(f.ifIn, o + 14);
  buf.writeUInt16BE(f.ifOut, o + 16);
  buf.writeUInt32BE(f.bytes >>> 0, o + 18);
  buf.writeUInt32BE(f.packets, o + 22);
  buf.writeBigUInt64BE(BigInt(f.startMs), o + 26);
  buf.writeBigUInt64BE(BigInt(f.endMs), o + 34);
  buf.writeUInt32BE(f.srcAs, o + 42);
  buf.writeUInt32BE(f.dstAs, o + 46);
  return o + 50;
}

const pad4 = (n) => (n + 3) & ~3;

/** The template datagram of exporter `e` (header + one template set). */
export function templatePacket(version, e, nowMs, sequence = 0) {
  const fields = version === 9 ? V9_FIELDS : IPFIX_FIELDS;
  const setLen = 4 + 4 + fields.length * 4;
  const hdr = version === 9 ? 20 : 16;
  const buf = Buffer.alloc(hdr + setLen);
  writeHeader(buf, version, e, nowMs, sequence, 1);
  buf.writeUInt16BE(version === 9 ? 0 : 2, hdr);
  buf.writeUInt16BE(setLen, hdr + 2);
  buf.writeUInt16BE(TEMPLATE_ID, hdr + 4);
  buf.writeUInt16BE(fields.length, hdr + 6);
  fields.forEach(([t, l], i) => {
    buf.writeUInt16BE(t, hdr + 8 + i * 4);
    buf.writeUInt16BE(l, hdr + 10 + i * 4);
  });
  return buf;
}

/** v9: version, count, sysUptime, unix secs, sequence (datagrams), source id; IPFIX: version, length, export time, sequence (records), domain. */
export function writeHeader(buf, version, e, nowMs, sequence, count) {
  if (version === 9) {
    buf.writeUInt16BE(9, 0);
    buf.writeUInt16BE(count, 2);
    buf.writeUInt32BE(UPTIME_MS, 4);
    buf.writeUInt32BE(Math.floor(nowMs / 1000), 8);
    buf.writeUInt32BE(sequence >>> 0, 12);
    buf.writeUInt32BE(e, 16);
  } else {
    buf.writeUInt16BE(10, 0);
    buf.writeUInt16BE(buf.length, 2);
    buf.writeUInt32BE(Math.floor(nowMs / 1000), 4);
    buf.writeUInt32BE(sequence >>> 0, 8);
    buf.writeUInt32BE(e, 12);
  }
}

/** `n` data datagrams of exporter `e` (header + one data set of RECORDS_PER_PACKET[version] records each). */
export function dataPackets(version, e, n, nowMs) {
  const rand = prng(0x9e3779b9 ^ (e * 7919 + version));
  const per = RECORDS_PER_PACKET[version];
  const recLen = version === 9 ? 47 : 50;
  const hdr = version === 9 ? 20 : 16;
  const setLen = pad4(4 + per * recLen);
  return Array.from({ length: n }, () => {
    const buf = Buffer.alloc(hdr + setLen);
    writeHeader(buf, version, e, nowMs, 0, per);
    buf.writeUInt16BE(TEMPLATE_ID, hdr);
    buf.writeUInt16BE(setLen, hdr + 2);
    let o = hdr + 4;
    for (let i = 0; i < per; i++) {
      const f = flow(rand, e, nowMs);
      o = version === 9 ? writeV9Record(buf, o, f, nowMs) : writeIpfixRecord(buf, o, f);
    }
    return buf;
  });
}

// ---- the sender (child process) ----------------------------------------------------------------------------------------

/** CPU seconds (user + system) a process has used, from /proc (0 when it is gone). */
export function procCpuSecs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
    return (Number(rest[11]) + Number(rest[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * Sends `secs` seconds of v9 or IPFIX data at `recordsPerSec` from `exporters` exporters (127.0.1.x) to
 * 127.0.0.1:`port`, from a child process. Resolves with {datagrams, records, errors, secs, records_per_sec, cpuSecs}.
 */
export function sendFlows({ port, version, exporters, recordsPerSec, secs, poolPerExporter = 8 }) {
  const spec = JSON.stringify({ port, version, exporters, recordsPerSec, secs, poolPerExporter });
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "send", spec], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (c) => (out += c));
  let cpuSecs = 0;
  const poll = setInterval(() => (cpuSecs = procCpuSecs(child.pid) || cpuSecs), 100);
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => {
      clearInterval(poll);
      if (code !== 0) return reject(new Error(`flow sender exited ${code}: ${out}`));
      resolve({ ...JSON.parse(out.trim().split("\n").pop()), cpuSecs });
    }),
  );
}

async function sendMain(spec) {
  const { port, version, exporters, recordsPerSec, secs, poolPerExporter } = spec;
  const now = Date.now();
  const addrs = exporterAddresses(exporters);
  const per = RECORDS_PER_PACKET[version];
  const socks = await Promise.all(
    addrs.map(async (addr) => {
      const s = createSocket("udp4");
      s.on("error", () => undefined);
      await new Promise((r) => s.bind(0, addr, r));
      s.setSendBufferSize(1 << 20);
      s.connect(port, "127.0.0.1");
      await new Promise((r) => s.once("connect", r));
      return s;
    }),
  );
  const pools = addrs.map((_, e) => dataPackets(version, e + 1, poolPerExporter, now));
  const seq = new Array(exporters).fill(0);
  // Templates first, every exporter; again every TEMPLATE_EVERY datagrams of an exporter (exporters refresh them).
  const TEMPLATE_EVERY = 1000;
  // v9 counts every export datagram in the sequence (a template datagram too); IPFIX counts data records only.
  const sendTemplate = (e) => {
    if (version === 9) seq[e]++;
    socks[e].send(templatePacket(version, e + 1, Date.now(), seq[e]));
  };
  for (let e = 0; e < exporters; e++) sendTemplate(e);
  await sleep(300);
  const pps = recordsPerSec / per;
  const total = Math.max(1, Math.round(pps * secs));
  let sent = 0;
  let errors = 0;
  let done = 0;
  let templates = exporters;
  const t0 = performance.now();
  await new Promise((resolve) => {
    const onSent = (err) => {
      if (err) errors++;
      if (++done === total) resolve();
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * pps));
      const nowMs = Date.now();
      while (sent < due) {
        const e = sent % exporters;
        const n = Math.floor(sent / exporters);
        if (n > 0 && n % TEMPLATE_EVERY === 0 && n !== templates) {
          sendTemplate(e);
          if (e === exporters - 1) templates = n;
        }
        const src = pools[e][n % poolPerExporter];
        const buf = Buffer.allocUnsafe(src.length);
        src.copy(buf);
        // v9: sequence counts datagrams; IPFIX: data records sent before this message
        if (version === 9) seq[e]++;
        writeHeader(buf, version, e + 1, nowMs, seq[e], per);
        if (version === 10) seq[e] += per;
        socks[e].send(buf, onSent);
        sent++;
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const took = (performance.now() - t0) / 1000;
  for (const s of socks) s.close();
  console.log(JSON.stringify({ datagrams: sent, records: sent * per, errors, secs: took, records_per_sec: Math.round((sent * per) / took) }));
}

// ---- UDP socket state ----------------------------------------------------------------------------------------------------

/** {queued, drops} of the UDP socket(s) bound to port on this host, from /proc/net/udp and udp6 (rx_queue bytes, drops). */
export function udpSocket(port) {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  let drops = 0;
  let queued = 0;
  for (const file of ["/proc/net/udp", "/proc/net/udp6"]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 12 && f[1].endsWith(hex)) {
        drops += Number(f[f.length - 1]);
        queued += parseInt(f[4].split(":")[1], 16);
      }
    }
  }
  return { queued, drops };
}

/** Waits until the socket's receive queue has been empty for `quietMs` (the receiver has read everything). */
export async function drained(port, { quietMs = 300, maxMs = 30000 } = {}) {
  const t0 = performance.now();
  let empty = null;
  while (performance.now() - t0 < maxMs) {
    if (udpSocket(port).queued === 0) {
      empty ??= performance.now();
      if (performance.now() - empty >= quietMs) return;
    } else empty = null;
    await sleep(50);
  }
}

// ---- nfcapd --------------------------------------------------------------------------------------------------------------

/**
 * Starts nfcapd (nfdump 1.7.1) on 127.0.0.1:port writing into a fresh directory, with an 8 MiB receive buffer asked
 * for (the kernel grants net.core.rmem_max). stop() sends SIGTERM (nfcapd flushes and closes its file) and resolves
 * with the flows nfdump counts in the directory (`nfdump -R dir -I`).
 */
export async function startNfcapd(port) {
  const dir = mkdtempSync(join(tmpdir(), "nms-bench-nfcapd-"));
  const child = spawn("nfcapd", ["-p", String(port), "-b", "127.0.0.1", "-w", dir, "-t", "3600", "-B", "8388608"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (out += c));
  const exited = new Promise((r) => child.once("exit", r));
  const t0 = performance.now();
  const hex = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  while (!readFileSync("/proc/net/udp", "utf8").includes(hex)) {
    if (child.exitCode !== null || performance.now() - t0 > 10000) throw new Error(`nfcapd did not bind ${port}: ${out}`);
    await sleep(50);
  }
  return {
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      try {
        const txt = execFileSync("nfdump", ["-R", dir, "-I"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
        const n = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(txt)?.[1] ?? 0);
        return { flows: n("Flows"), sequenceFailures: n("Sequence failures"), packets: n("Packets"), bytes: n("Bytes") };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    kill() {
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- the service ----------------------------------------------------------------------------------------------------------

/** Process ids below `pid` (children, grand-children …), from /proc. */
export function descendants(pid) {
  const kids = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {
      // gone
    }
  }
  const out = [];
  const walk = (p) => {
    for (const c of kids.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** CPU seconds of `pid` and everything below it (the service and its embedded PostgreSQL). */
export const treeCpuSecs = (pid) => [pid, ...descendants(pid)].reduce((s, p) => s + procCpuSecs(p), 0);

/** VmRSS of a process in MiB (null when it is gone). */
export function rssMb(pid) {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    return Math.round(kb / 1024);
  } catch {
    return null;
  }
}

/** A JSON API client for the service at `url` (paths under /api/v1) with a bearer token; non-2xx throws. */
export function apiClient(url, token) {
  return async (method, path, body) => {
    const res = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
}

/** The top self-time functions of the newest .cpuprofile in `dir` (V8's format): "pct% name (file:line)" lines. */
export function profileSummary(dir, top = 25) {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  if (!files.length) return ["no profile written"];
  const newest = files.map((f) => join(dir, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const prof = JSON.parse(readFileSync(newest, "utf8"));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  prof.samples.forEach((id, i) => {
    const dt = prof.timeDeltas[i] ?? 0;
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || "(anonymous)"} (${f.url.replace(/^.*\/(dist|node_modules)\//, "$1/")}:${f.lineNumber + 1})`;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [
    `file=${newest} total_ms=${Math.round(total / 1000)}`,
    ...[...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => `${((v / total) * 100).toFixed(1)}% ${k}`),
  ];
}

if (process.argv[2] === "send") await sendMain(JSON.parse(process.argv[3]));
