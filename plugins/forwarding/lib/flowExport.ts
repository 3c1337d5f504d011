/**
 * Re-export of decoded flow records as NetFlow v9 (RFC 3954): what a `flow_udp` destination with `verbatim: false`
 * sends. Whatever the exporters spoke (v5, v9, IPFIX, any template), the far end sees one exporter (this service)
 * with two fixed templates, one for IPv4 and one for IPv6 records, sent in the first datagram and then again every
 * `templateEvery` datagrams or `templateEveryMs`, whichever comes first (a collector that starts later, or lost a
 * datagram, learns them again).
 *
 * Octet and packet counts are the records' estimates (already multiplied by the exporter's sampling rate): the
 * re-export is unsampled. Flow times are carried as FIRST_SWITCHED / LAST_SWITCHED relative to this exporter's
 * sysUptime, as v9 defines them; a record without times gets the datagram's own.
 */
import { isIPv4, isIPv6 } from "node:net";
import type { FlowRecord } from "../../flows/contract.js";

/** A v9 field: its type (IANA element id, RFC 3954 §8) and length. */
interface Field {
  type: number;
  length: number;
}

const IPV4_SRC_ADDR = 8;
const IPV4_DST_ADDR = 12;
const IPV6_SRC_ADDR = 27;
const IPV6_DST_ADDR = 28;

/** The fields both templates share, after the two addresses. */
const COMMON: readonly Field[] = [
  { type: 7, length: 2 }, // L4_SRC_PORT
  { type: 11, length: 2 }, // L4_DST_PORT
  { type: 4, length: 1 }, // PROTOCOL
  { type: 6, length: 1 }, // TCP_FLAGS
  { type: 1, length: 8 }, // IN_BYTES
  { type: 2, length: 8 }, // IN_PKTS
  { type: 16, length: 4 }, // SRC_AS
  { type: 17, length: 4 }, // DST_AS
  { type: 10, length: 4 }, // INPUT_SNMP
  { type: 14, length: 4 }, // OUTPUT_SNMP
  { type: 22, length: 4 }, // FIRST_SWITCHED
  { type: 21, length: 4 }, // LAST_SWITCHED
  { type: 32, length: 2 }, // ICMP_TYPE (type * 256 + code; collectors read ICMP from it, not from the port)
];

export const V4_TEMPLATE_ID = 256;
export const V6_TEMPLATE_ID = 257;

const TEMPLATES: readonly { id: number; fields: readonly Field[] }[] = [
  { id: V4_TEMPLATE_ID, fields: [{ type: IPV4_SRC_ADDR, length: 4 }, { type: IPV4_DST_ADDR, length: 4 }, ...COMMON] },
  { id: V6_TEMPLATE_ID, fields: [{ type: IPV6_SRC_ADDR, length: 16 }, { type: IPV6_DST_ADDR, length: 16 }, ...COMMON] },
];

const recordLength = (id: number) => TEMPLATES.find((t) => t.id === id)!.fields.reduce((n, f) => n + f.length, 0);
const V4_LENGTH = recordLength(V4_TEMPLATE_ID);
const V6_LENGTH = recordLength(V6_TEMPLATE_ID);

const HEADER = 20;
const UPTIME_BACK_MS = 7 * 86_400_000;

export interface V9ExporterOptions {
  /** Largest datagram it builds (bytes, header included); keep it under the path MTU. */
  maxDatagram?: number;
  /** The v9 source id the datagrams carry. */
  sourceId?: number;
  templateEvery?: number;
  templateEveryMs?: number;
  /** The clock (Unix ms); tests pass their own. */
  now?: () => number;
}

/** Writes an IPv4 or IPv6 address (text) into `buf` at `at`; false when it is neither. */
function writeAddress(buf: Buffer, at: number, text: string, v6: boolean): void {
  if (!v6) {
    const parts = text.split(".");
    for (let i = 0; i < 4; i++) buf[at + i] = Number(parts[i]);
    return;
  }
  const [head, tail = ""] = text.includes("::") ? text.split("::") : [text, ""];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  for (let i = 0; i < 8; i++) buf.writeUInt16BE(parseInt(groups[i], 16) || 0, at + i * 2);
}

/** Which template a record goes out with, or null when it has no addresses of one family (nothing to re-export). */
export function templateFor(r: Pick<FlowRecord, "src" | "dst">): number | null {
  if (isIPv4(r.src) && isIPv4(r.dst)) return V4_TEMPLATE_ID;
  if (isIPv6(r.src) && isIPv6(r.dst) && !r.src.includes(".") && !r.dst.includes(".")) return V6_TEMPLATE_ID;
  return null;
}

const u32 = (n: number) => (n >>> 0) % 0x1_0000_0000;

/** Turns flow records into NetFlow v9 export datagrams. One per destination: it keeps the sequence and template timers. */
export class V9Exporter {
  private readonly maxDatagram: number;
  private readonly sourceId: number;
  private readonly templateEvery: number;
  private readonly templateEveryMs: number;
  private readonly now: () => number;
  private readonly bootMs: number;
  private sequence = 0;
  private sinceTemplates = Infinity;
  private templatesAtMs = -Infinity;

  constructor(o: V9ExporterOptions = {}) {
    this.maxDatagram = Math.max(HEADER + 4 + V6_LENGTH + 200, o.maxDatagram ?? 1400);
    this.sourceId = o.sourceId ?? 0;
    this.templateEvery = o.templateEvery ?? 20;
    this.templateEveryMs = o.templateEveryMs ?? 30_000;
    this.now = o.now ?? Date.now;
    // sysUptime starts a week back, so records up to a week old still have a FIRST_SWITCHED after "boot".
    this.bootMs = this.now() - UPTIME_BACK_MS;
  }

  /** Records this exporter cannot carry (no addresses of one family) are left out and counted in `skipped`. */
  encode(records: readonly FlowRecord[]): { datagrams: Buffer[]; skipped: number } {
    const v4: FlowRecord[] = [];
    const v6: FlowRecord[] = [];
    let skipped = 0;
    for (const r of records) {
      const t = templateFor(r);
      if (t === V4_TEMPLATE_ID) v4.push(r);
      else if (t === V6_TEMPLATE_ID) v6.push(r);
      else skipped++;
    }
    const datagrams: Buffer[] = [];
    let queue: { id: number; len: number; recs: FlowRecord[] }[] = [
      { id: V4_TEMPLATE_ID, len: V4_LENGTH, recs: v4 },
      { id: V6_TEMPLATE_ID, len: V6_LENGTH, recs: v6 },
    ].filter((q) => q.recs.length > 0);
    while (queue.length > 0) {
      const nowMs = this.now();
      const parts: Buffer[] = [];
      let size = HEADER;
      let count = 0;
      if (this.sinceTemplates >= this.templateEvery || nowMs - this.templatesAtMs >= this.templateEveryMs) {
        const t = this.templateSet();
        parts.push(t.buf);
        size += t.buf.length;
        count += t.count;
        this.sinceTemplates = 0;
        this.templatesAtMs = nowMs;
      }
      for (const q of queue) {
        const room = Math.floor((this.maxDatagram - size - 4 - 3) / q.len);
        if (room <= 0) break;
        const take = q.recs.splice(0, room);
        const set = this.dataSet(q.id, q.len, take, nowMs);
        parts.push(set);
        size += set.length;
        count += take.length;
      }
      queue = queue.filter((q) => q.recs.length > 0);
      datagrams.push(Buffer.concat([this.header(count, nowMs), ...parts]));
      this.sinceTemplates++;
    }
    return { datagrams, skipped };
  }

  private header(count: number, nowMs: number): Buffer {
    const h = Buffer.alloc(HEADER);
    h.writeUInt16BE(9, 0);
    h.writeUInt16BE(count, 2);
    h.writeUInt32BE(u32(nowMs - this.bootMs), 4);
    h.writeUInt32BE(u32(Math.floor(nowMs / 1000)), 8);
    h.writeUInt32BE(u32(this.sequence++), 12);
    h.writeUInt32BE(u32(this.sourceId), 16);
    return h;
  }

  /** The template flowset (id 0) with both templates. */
  private templateSet(): { buf: Buffer; count: number } {
    const length = 4 + TEMPLATES.reduce((n, t) => n + 4 + t.fields.length * 4, 0);
    const buf = Buffer.alloc(length);
    buf.writeUInt16BE(0, 0);
    buf.writeUInt16BE(length, 2);
    let at = 4;
    for (const t of TEMPLATES) {
      buf.writeUInt16BE(t.id, at);
      buf.writeUInt16BE(t.fields.length, at + 2);
      at += 4;
      for (const f of t.fields) {
        buf.writeUInt16BE(f.type, at);
        buf.writeUInt16BE(f.length, at + 2);
        at += 4;
      }
    }
    return { buf, count: TEMPLATES.length };
  }

  private dataSet(id: number, len: number, records: readonly FlowRecord[], nowMs: number): Buffer {
    const body = 4 + records.length * len;
    const length = body + ((4 - (body % 4)) % 4);
    const buf = Buffer.alloc(length);
    buf.writeUInt16BE(id, 0);
    buf.writeUInt16BE(length, 2);
    const v6 = id === V6_TEMPLATE_ID;
    const uptime = (ms: number | null) => u32(Math.max(0, (ms ?? nowMs) - this.bootMs));
    let at = 4;
    for (const r of records) {
      writeAddress(buf, at, r.src, v6);
      writeAddress(buf, at + (v6 ? 16 : 4), r.dst, v6);
      at += v6 ? 32 : 8;
      buf.writeUInt16BE(r.src_port & 0xffff, at);
      buf.writeUInt16BE(r.dst_port & 0xffff, at + 2);
      buf[at + 4] = r.proto & 0xff;
      buf[at + 5] = (r.tcp_flags ?? 0) & 0xff;
      buf.writeBigUInt64BE(BigInt(Math.max(0, Math.trunc(r.bytes))), at + 6);
      buf.writeBigUInt64BE(BigInt(Math.max(0, Math.trunc(r.packets))), at + 14);
      buf.writeUInt32BE(u32(r.src_as), at + 22);
      buf.writeUInt32BE(u32(r.dst_as), at + 26);
      buf.writeUInt32BE(u32(r.in_if ?? 0), at + 30);
      buf.writeUInt32BE(u32(r.out_if ?? 0), at + 34);
      buf.writeUInt32BE(uptime(r.first_ms ?? r.last_ms), at + 38);
      buf.writeUInt32BE(uptime(r.last_ms ?? r.first_ms), at + 42);
      buf.writeUInt16BE(r.proto === 1 || r.proto === 58 ? r.dst_port & 0xffff : 0, at + 46);
      at += 48;
    }
    return buf;
  }
}
