/**
 * FlowDecoder: NetFlow v5, v9 (RFC 3954) and IPFIX (RFC 7011) datagrams to FlowRecords. Pure and synchronous: no I/O,
 * no timers (the caller passes nowMs and calls expire()), never throws on input. Per datagram it allocates one DataView
 * and the result. Records are decoded into one scratch record handed to a sink: decode() without a sink copies each
 * into result.records; a caller that only reads them (the collector's aggregator) passes a sink and allocates nothing
 * per record.
 *
 * - Templates live in a TemplateCache keyed by (exporter, version, domain, template id).
 * - Data sets whose template is not known yet are held (a copy), bounded by count and age, and decoded when it arrives.
 * - Sampling: v5 from the header; v9/IPFIX from options records (IEs 34, 305+306, 48/302 sampler id, 50), remembered per
 *   (exporter, domain); a per-exporter override wins. bytes/packets are multiplied by the rate, raw_* keep the counts.
 * - Counters wider than 53 bits are clamped to Number.MAX_SAFE_INTEGER.
 */
import { Role, VARLEN, type Plan } from "./fields.js";
import { ipv4Text, ipv6 } from "./ip.js";
import { MAX_FIELDS, templateKeyText, type CachedTemplate, type TemplateCache } from "./templates.js";
import type { DecodeResult, DecoderStats, FlowRecord, RecordSink, TemplateField, TemplateJson, TemplateKey } from "./types.js";

export interface FlowDecoderOptions {
  templates: TemplateCache;
  /** How long a data set waits for its template (ms, default 5000). */
  pendingMaxMs?: number;
  /** Most data sets held for templates, over all exporters (default 10000); past it the oldest is dropped. */
  pendingMaxSets?: number;
  /** A sampling rate for an exporter that wins over what it reports (null/undefined = use the reported one). */
  samplingOverride?: (exporter: string) => number | null | undefined;
}

interface Pending {
  key: string;
  exporter: string;
  version: 9 | 10;
  domain: number;
  body: Buffer;
  uptime: number;
  exportMs: number;
  atMs: number;
  done: boolean;
}

/** What an exporter's domain told us in options records. */
interface DomainState {
  rate: number;
  samplers: Map<number, number> | null;
  sysInitMs: number | null;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const NTP_EPOCH_S = 2208988800;
const TWO32 = 4294967296;

/** Unsigned big-endian integer of 1-8 bytes; above 2^53 clamped. */
function uint(v: DataView, o: number, len: number): number {
  switch (len) {
    case 1:
      return v.getUint8(o);
    case 2:
      return v.getUint16(o);
    case 4:
      return v.getUint32(o);
    case 8: {
      const hi = v.getUint32(o);
      return hi >= 0x200000 ? MAX_SAFE : hi * TWO32 + v.getUint32(o + 4);
    }
    default: {
      let x = 0;
      for (let i = 0; i < len; i++) x = x * 256 + v.getUint8(o + i);
      return x > MAX_SAFE ? MAX_SAFE : x;
    }
  }
}

/** NTP timestamp (seconds since 1900 + 2^-32 fraction) to Unix ms. */
function ntpMs(v: DataView, o: number): number {
  return (v.getUint32(o) - NTP_EPOCH_S) * 1000 + Math.floor((v.getUint32(o + 4) / TWO32) * 1000);
}

function validRate(r: number | null | undefined): r is number {
  return typeof r === "number" && Number.isFinite(r) && r >= 1;
}

/**
 * What one data record's fields said, before its times and sampling are resolved: one per decoder, reset before each
 * record. Each member keeps one type so reading a record allocates nothing; absent is -1 (NaN for first/last, which
 * may be negative). The readers take one role group each (fields.ts).
 */
class RecordFields {
  src = "";
  dst = "";
  src4 = -1;
  dst4 = -1;
  proto = 0;
  sport = -1;
  dport = -1;
  icmp = -1;
  srcAs = 0;
  dstAs = 0;
  inIf = -1;
  outIf = -1;
  flags = -1;
  bytes = -1;
  packets = -1;
  outBytes = -1;
  outPackets = -1;
  totBytes = -1;
  totPackets = -1;
  first = NaN;
  last = NaN;
  firstUp = -1;
  lastUp = -1;
  sysInit = -1;
  samplerId = -1;
  rate = 0;

  reset(): void {
    this.src = "";
    this.dst = "";
    this.src4 = -1;
    this.dst4 = -1;
    this.proto = 0;
    this.sport = -1;
    this.dport = -1;
    this.icmp = -1;
    this.srcAs = 0;
    this.dstAs = 0;
    this.inIf = -1;
    this.outIf = -1;
    this.flags = -1;
    this.bytes = -1;
    this.packets = -1;
    this.outBytes = -1;
    this.outPackets = -1;
    this.totBytes = -1;
    this.totPackets = -1;
    this.first = NaN;
    this.last = NaN;
    this.firstUp = -1;
    this.lastUp = -1;
    this.sysInit = -1;
    this.samplerId = -1;
    this.rate = 0;
  }

  /** Bytes and packets: in, out and total. */
  counter(role: Role, v: DataView, q: number, len: number): void {
    switch (role) {
      case Role.BYTES:
        this.bytes = uint(v, q, len);
        break;
      case Role.PACKETS:
        this.packets = uint(v, q, len);
        break;
      case Role.OUT_BYTES:
        this.outBytes = uint(v, q, len);
        break;
      case Role.OUT_PACKETS:
        this.outPackets = uint(v, q, len);
        break;
      case Role.TOTAL_BYTES:
        this.totBytes = uint(v, q, len);
        break;
      case Role.TOTAL_PACKETS:
        this.totPackets = uint(v, q, len);
        break;
      default:
        break;
    }
  }

  /** The flow key: protocol, TCP flags, ports (or ICMP type/code), addresses, interfaces, AS numbers. */
  key(role: Role, v: DataView, q: number, len: number): void {
    switch (role) {
      case Role.PROTO:
        this.proto = uint(v, q, len);
        break;
      case Role.TCP_FLAGS:
        this.flags = uint(v, q, len);
        break;
      case Role.SRC_PORT:
      case Role.UDP_SRC_PORT:
      case Role.TCP_SRC_PORT:
        this.sport = uint(v, q, len);
        break;
      case Role.DST_PORT:
      case Role.UDP_DST_PORT:
      case Role.TCP_DST_PORT:
        this.dport = uint(v, q, len);
        break;
      case Role.ICMP_TYPE_CODE:
        this.icmp = uint(v, q, len);
        break;
      case Role.SRC4:
        this.src = "";
        this.src4 = v.getUint32(q);
        break;
      case Role.DST4:
        this.dst = "";
        this.dst4 = v.getUint32(q);
        break;
      case Role.SRC6:
        this.src = ipv6(v, q);
        this.src4 = -1;
        break;
      case Role.DST6:
        this.dst = ipv6(v, q);
        this.dst4 = -1;
        break;
      case Role.IN_IF:
        this.inIf = uint(v, q, len);
        break;
      case Role.OUT_IF:
        this.outIf = uint(v, q, len);
        break;
      case Role.SRC_AS:
        this.srcAs = uint(v, q, len);
        break;
      case Role.DST_AS:
        this.dstAs = uint(v, q, len);
        break;
      default:
        break;
    }
  }

  /** Start and end times (absolute, or uptime-relative for uptimeTimes); exportMs is the datagram's export time. */
  time(role: Role, v: DataView, q: number, len: number, exportMs: number): void {
    switch (role) {
      case Role.FIRST_UPTIME:
        this.firstUp = uint(v, q, len);
        break;
      case Role.LAST_UPTIME:
        this.lastUp = uint(v, q, len);
        break;
      case Role.START_SEC:
        this.first = uint(v, q, len) * 1000;
        break;
      case Role.END_SEC:
        this.last = uint(v, q, len) * 1000;
        break;
      case Role.START_MS:
        this.first = uint(v, q, len);
        break;
      case Role.END_MS:
        this.last = uint(v, q, len);
        break;
      case Role.START_US_NTP:
      case Role.START_NS_NTP:
        this.first = ntpMs(v, q);
        break;
      case Role.END_US_NTP:
      case Role.END_NS_NTP:
        this.last = ntpMs(v, q);
        break;
      case Role.START_DELTA_US:
        this.first = exportMs - Math.round(uint(v, q, len) / 1000);
        break;
      case Role.END_DELTA_US:
        this.last = exportMs - Math.round(uint(v, q, len) / 1000);
        break;
      case Role.SYS_INIT_MS:
        this.sysInit = uint(v, q, len);
        break;
      default:
        break;
    }
  }

  /** A data record's own sampling rate or sampler id (the packet interval/space pair counts in options records only). */
  sampling(role: Role, v: DataView, q: number, len: number): void {
    switch (role) {
      case Role.SAMPLER_ID:
        this.samplerId = uint(v, q, len);
        break;
      case Role.SAMPLING_INTERVAL:
      case Role.SAMPLER_RANDOM_INTERVAL:
        this.rate = uint(v, q, len);
        break;
      default:
        break;
    }
  }
}

export class FlowDecoder {
  private readonly templates: TemplateCache;
  private readonly pendingMaxMs: number;
  private readonly pendingMaxSets: number;
  private readonly samplingOverride?: (exporter: string) => number | null | undefined;

  private readonly domains = new Map<string, DomainState>();
  private readonly pendingByKey = new Map<string, Pending[]>();
  private pendingQueue: Pending[] = [];
  private pendingHead = 0;
  private pendingCount = 0;

  private readonly counters = {
    datagrams: 0,
    records: 0,
    malformed: 0,
    optionRecords: 0,
    pendingHeld: 0,
    pendingDecoded: 0,
    pendingDropped: 0,
    v5: 0,
    v9: 0,
    v10: 0,
  };

  // The datagram being decoded (set per datagram, and per held set when it is decoded later).
  private cExporter = "";
  private cVersion: 9 | 10 = 9;
  private cDomain = 0;
  private cUptime = 0;
  private cExportMs = 0;
  private cState: DomainState = { rate: 1, samplers: null, sysInitMs: null };
  private cOverride: number | null = null;
  /** Offset after the record last decoded, or -1 when it overran its set. */
  private next = 0;
  /** The record being decoded: every field is written for each record, and the sink sees it before the next one. */
  private readonly scratch: FlowRecord = {
    exporter: "",
    version: 9,
    domain: 0,
    src: "",
    dst: "",
    proto: 0,
    src_port: 0,
    dst_port: 0,
    src_as: 0,
    dst_as: 0,
    bytes: 0,
    packets: 0,
    raw_bytes: 0,
    raw_packets: 0,
    sampling: 1,
    first_ms: null,
    last_ms: null,
    in_if: null,
    out_if: null,
    tcp_flags: null,
  };
  /** The scratch record's IPv4 addresses as numbers (-1: not IPv4). */
  private src4 = -1;
  private dst4 = -1;
  /** What the record being decoded said, field by field. */
  private readonly fields = new RecordFields();
  /** Where this call's records go; counted on the way. */
  private sink: RecordSink = () => undefined;
  private emitted = 0;
  private dropped = 0;
  /** This datagram is read for its templates and options data only. */
  private learnOnly = false;

  constructor(opts: FlowDecoderOptions) {
    this.templates = opts.templates;
    this.pendingMaxMs = opts.pendingMaxMs ?? 5000;
    this.pendingMaxSets = Math.max(0, opts.pendingMaxSets ?? 10000);
    this.samplingOverride = opts.samplingOverride;
  }

  /**
   * Decodes one datagram. Without `sink` the records are copied into result.records; with it, result.records stays empty
   * and the sink is called once per record with a scratch record that is overwritten by the next one (copy what is kept).
   * With `learnOnly` only templates and options data are read (the datagram's flow records are another decoder's: the
   * ingest spreads one exporter over several); nothing is emitted or held.
   */
  decode(buf: Buffer, exporter: string, nowMs: number, sink?: RecordSink, learnOnly = false): DecodeResult {
    this.learnOnly = learnOnly;
    this.counters.datagrams++;
    this.dropped = 0;
    const result: DecodeResult = { records: [], templatesLearned: [], templatesWithdrawn: [], malformed: false, dropped: 0, pending: 0, version: null };
    this.begin(result, sink);
    if (this.pendingCount > 0) this.expireInto(nowMs);
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const version = buf.length >= 2 ? view.getUint16(0) : 0;
    const o = this.samplingOverride?.(exporter);
    this.cOverride = validRate(o) ? o : null;
    this.cExporter = exporter;
    let ok: boolean;
    if (version === 5) {
      result.version = 5;
      this.counters.v5++;
      ok = this.decodeV5(view, exporter);
    } else if (version === 9) {
      result.version = 9;
      this.counters.v9++;
      ok = this.decodeV9(view, exporter, nowMs, result);
    } else if (version === 10) {
      result.version = 10;
      this.counters.v10++;
      ok = this.decodeIpfix(view, exporter, nowMs, result);
    } else ok = false;
    if (!ok || result.malformed) {
      result.malformed = true;
      this.counters.malformed++;
    }
    this.counters.records += this.emitted;
    result.dropped = this.dropped;
    return result;
  }

  /**
   * Decodes the held data sets whose template is known now (templates imported from the store since they arrived).
   * Answers their records (copies); with `sink`, hands them to it as decode() does and answers an empty list.
   */
  releaseKnown(sink?: RecordSink): FlowRecord[] {
    const result: DecodeResult = { records: [], templatesLearned: [], templatesWithdrawn: [], malformed: false, dropped: 0, pending: 0, version: null };
    this.begin(result, sink);
    for (const key of [...this.pendingByKey.keys()]) if (this.templates.getByText(key)) this.release(key, result);
    this.counters.records += this.emitted;
    return result.records;
  }

  /** Points this call's records at `sink`, or at copies in result.records. */
  private begin(result: DecodeResult, sink: RecordSink | undefined): void {
    this.emitted = 0;
    this.sink = sink ?? ((r, src4, dst4) => void result.records.push(copyRecord(r, src4, dst4)));
  }

  /** Drops held data sets older than pendingMaxMs; returns how many. */
  expire(nowMs: number): number {
    this.dropped = 0;
    this.expireInto(nowMs);
    return this.dropped;
  }

  stats(): DecoderStats {
    const c = this.counters;
    return {
      datagrams: c.datagrams,
      records: c.records,
      malformed: c.malformed,
      optionRecords: c.optionRecords,
      pendingHeld: c.pendingHeld,
      pendingDecoded: c.pendingDecoded,
      pendingDropped: c.pendingDropped,
      pendingNow: this.pendingCount,
      templates: this.templates.size,
      byVersion: { v5: c.v5, v9: c.v9, v10: c.v10 },
    };
  }

  /** The sampling rate an exporter's domain reported (1 when none), without the override. */
  reportedSampling(exporter: string, domain: number): number {
    return this.domains.get(`${exporter}|${domain}`)?.rate ?? 1;
  }

  // ---- v5 ----------------------------------------------------------------------------------------------------------

  private decodeV5(v: DataView, exporter: string): boolean {
    if (v.byteLength < 24) return false;
    const count = v.getUint16(2);
    const uptime = v.getUint32(4);
    const nowMs = v.getUint32(8) * 1000 + Math.floor(v.getUint32(12) / 1e6);
    const si = v.getUint16(22);
    const interval = si & 0x3fff;
    // Sampling interval: low 14 bits (the top 2 are the mode); 0 or 1 = unsampled.
    const rate = this.cOverride ?? (interval > 1 ? interval : 1);
    const avail = Math.floor((v.byteLength - 24) / 48);
    const n = Math.min(count, avail);
    for (let i = 0; i < n; i++) {
      const o = 24 + i * 48;
      const pk = v.getUint32(o + 16);
      const by = v.getUint32(o + 20);
      const r = this.scratch;
      r.exporter = exporter;
      r.version = 5;
      r.domain = 0;
      r.src = "";
      r.dst = "";
      this.src4 = v.getUint32(o);
      this.dst4 = v.getUint32(o + 4);
      r.proto = v.getUint8(o + 38);
      r.src_port = v.getUint16(o + 32);
      r.dst_port = v.getUint16(o + 34);
      r.src_as = v.getUint16(o + 40);
      r.dst_as = v.getUint16(o + 42);
      r.bytes = by * rate;
      r.packets = pk * rate;
      r.raw_bytes = by;
      r.raw_packets = pk;
      r.sampling = rate;
      r.first_ms = nowMs - ((uptime - v.getUint32(o + 24)) | 0);
      r.last_ms = nowMs - ((uptime - v.getUint32(o + 28)) | 0);
      r.in_if = v.getUint16(o + 12);
      r.out_if = v.getUint16(o + 14);
      r.tcp_flags = v.getUint8(o + 37);
      this.emitted++;
      this.sink(r, this.src4, this.dst4);
    }
    return count === n && count <= 30 && v.byteLength === 24 + count * 48;
  }

  // ---- v9 ----------------------------------------------------------------------------------------------------------

  private decodeV9(v: DataView, exporter: string, nowMs: number, result: DecodeResult): boolean {
    const len = v.byteLength;
    if (len < 20) return false;
    const uptime = v.getUint32(4);
    const exportMs = v.getUint32(8) * 1000;
    const domain = v.getUint32(16);
    this.setContext(exporter, 9, domain, uptime, exportMs);
    let p = 20;
    while (p < len) {
      if (len - p < 4) return this.zeros(v, p, len);
      const id = v.getUint16(p);
      const setLen = v.getUint16(p + 2);
      if (setLen < 4 || p + setLen > len) return false;
      const end = p + setLen;
      let ok = true;
      if (id === 0) ok = this.templateSet(v, p + 4, end, false, nowMs, result);
      else if (id === 1) ok = this.optionsSetV9(v, p + 4, end, nowMs, result);
      else if (id >= 256) ok = this.dataSet(v, p + 4, end, id, nowMs, result);
      if (!ok) return false;
      p = end;
    }
    return true;
  }

  /** v9 options template flowset: id, scope length, option length (bytes), then the fields. */
  private optionsSetV9(v: DataView, q: number, end: number, nowMs: number, result: DecodeResult): boolean {
    while (end - q >= 6) {
      const id = v.getUint16(q);
      const scopeLen = v.getUint16(q + 2);
      const optLen = v.getUint16(q + 4);
      if (id === 0 && scopeLen === 0 && optLen === 0) return this.zeros(v, q, end);
      q += 6;
      if (id < 256 || scopeLen % 4 !== 0 || optLen % 4 !== 0 || scopeLen + optLen === 0 || q + scopeLen + optLen > end) return false;
      const n = (scopeLen + optLen) / 4;
      const fields: TemplateField[] = new Array(n);
      for (let i = 0; i < n; i++, q += 4) {
        const length = v.getUint16(q + 2);
        if (length === 0 || length === VARLEN) return false;
        fields[i] = { id: v.getUint16(q), length, enterprise: 0 };
      }
      this.learn(id, true, scopeLen / 4, fields, nowMs, result);
    }
    return this.zeros(v, q, end);
  }

  // ---- IPFIX -------------------------------------------------------------------------------------------------------

  private decodeIpfix(v: DataView, exporter: string, nowMs: number, result: DecodeResult): boolean {
    if (v.byteLength < 16) return false;
    const len = v.getUint16(2);
    if (len < 16 || len > v.byteLength) return false;
    const exportMs = v.getUint32(4) * 1000;
    const domain = v.getUint32(12);
    this.setContext(exporter, 10, domain, 0, exportMs);
    let p = 16;
    while (p < len) {
      if (len - p < 4) return false;
      const id = v.getUint16(p);
      const setLen = v.getUint16(p + 2);
      if (setLen < 4 || p + setLen > len) return false;
      const end = p + setLen;
      let ok = true;
      if (id === 2) ok = this.templateSet(v, p + 4, end, true, nowMs, result);
      else if (id === 3) ok = this.optionsSetIpfix(v, p + 4, end, nowMs, result);
      else if (id >= 256) ok = this.dataSet(v, p + 4, end, id, nowMs, result);
      else if (id < 2) ok = false;
      if (!ok) return false;
      p = end;
    }
    return len === v.byteLength;
  }

  /** Reads `count` field specifiers at q (IPFIX: enterprise bit + 4-byte PEN); null when they overrun or are invalid. */
  private fieldSpecs(v: DataView, q: number, end: number, count: number, ipfix: boolean): TemplateField[] | null {
    if (count > MAX_FIELDS || q + count * 4 > end) return null;
    const fields: TemplateField[] = new Array(count);
    for (let i = 0; i < count; i++) {
      if (q + 4 > end) return null;
      let id = v.getUint16(q);
      const length = v.getUint16(q + 2);
      q += 4;
      let enterprise = 0;
      if (ipfix && id & 0x8000) {
        if (q + 4 > end) return null;
        id &= 0x7fff;
        enterprise = v.getUint32(q);
        q += 4;
      }
      if (length === 0 || (!ipfix && length === VARLEN)) return null;
      fields[i] = { id, length, enterprise };
    }
    this.next = q;
    return fields;
  }

  /** Template set: v9 flowset 0 or IPFIX set 2 (IPFIX: field count 0 withdraws; template id 2 with count 0 withdraws all). */
  private templateSet(v: DataView, q: number, end: number, ipfix: boolean, nowMs: number, result: DecodeResult): boolean {
    while (end - q >= 4) {
      const id = v.getUint16(q);
      const count = v.getUint16(q + 2);
      if (count === 0) {
        if (ipfix && (id >= 256 || id === 2)) {
          this.withdraw(id, false, result);
          q += 4;
          continue;
        }
        if (id === 0) return this.zeros(v, q, end);
        return false;
      }
      if (id < 256) return false;
      const fields = this.fieldSpecs(v, q + 4, end, count, ipfix);
      if (!fields) return false;
      q = this.next;
      this.learn(id, false, 0, fields, nowMs, result);
    }
    return this.zeros(v, q, end);
  }

  /** IPFIX options template set 3: id, field count, scope field count, fields. */
  private optionsSetIpfix(v: DataView, q: number, end: number, nowMs: number, result: DecodeResult): boolean {
    while (end - q >= 4) {
      const id = v.getUint16(q);
      const count = v.getUint16(q + 2);
      if (count === 0) {
        if (id >= 256 || id === 3) {
          this.withdraw(id, true, result);
          q += 4;
          continue;
        }
        if (id === 0) return this.zeros(v, q, end);
        return false;
      }
      if (id < 256 || end - q < 6) return false;
      const scope = v.getUint16(q + 4);
      if (scope === 0 || scope > count) return false;
      const fields = this.fieldSpecs(v, q + 6, end, count, true);
      if (!fields) return false;
      q = this.next;
      this.learn(id, true, scope, fields, nowMs, result);
    }
    return this.zeros(v, q, end);
  }

  // ---- templates ---------------------------------------------------------------------------------------------------

  private learn(id: number, options: boolean, scope: number, fields: TemplateField[], nowMs: number, result: DecodeResult): void {
    const t: TemplateJson = { exporter: this.cExporter, version: this.cVersion, domain: this.cDomain, id, options, scope, fields, seen_ms: nowMs };
    const change = this.templates.set(t);
    if (change !== "same") result.templatesLearned.push({ exporter: this.cExporter, version: this.cVersion, domain: this.cDomain, id });
    if (this.pendingCount > 0) this.release(templateKeyText(this.cExporter, this.cVersion, this.cDomain, id), result);
  }

  private withdraw(id: number, options: boolean, result: DecodeResult): void {
    const e = this.cExporter;
    if (id === 2 || id === 3) {
      for (const k of this.templates.withdrawAll(e, this.cVersion, this.cDomain, options)) result.templatesWithdrawn.push(k);
    } else if (this.templates.withdraw(e, this.cVersion, this.cDomain, id)) {
      result.templatesWithdrawn.push({ exporter: e, version: this.cVersion, domain: this.cDomain, id });
    }
  }

  // ---- data --------------------------------------------------------------------------------------------------------

  private setContext(exporter: string, version: 9 | 10, domain: number, uptime: number, exportMs: number): void {
    this.cExporter = exporter;
    this.cVersion = version;
    this.cDomain = domain;
    this.cUptime = uptime;
    this.cExportMs = exportMs;
    const dk = `${exporter}|${domain}`;
    let st = this.domains.get(dk);
    if (!st) {
      st = { rate: 1, samplers: null, sysInitMs: null };
      this.domains.set(dk, st);
    }
    this.cState = st;
  }

  private dataSet(v: DataView, q: number, end: number, id: number, nowMs: number, result: DecodeResult): boolean {
    const key = templateKeyText(this.cExporter, this.cVersion, this.cDomain, id);
    const t = this.templates.getByText(key);
    if (this.learnOnly) return t?.json.options ? this.records(v, q, end, t) : true;
    if (!t) {
      this.hold(key, v, q, end, nowMs);
      result.pending++;
      return true;
    }
    return this.records(v, q, end, t);
  }

  /** Decodes the records of one data set; false when a variable-length field overran the set. */
  private records(v: DataView, q: number, end: number, t: CachedTemplate): boolean {
    const plan = t.plan;
    const min = plan.minLength;
    const options = t.json.options;
    while (end - q >= min) {
      if (options) this.optionRecord(v, q, end, plan);
      else if (this.record(v, q, end, plan)) {
        this.emitted++;
        this.sink(this.scratch, this.src4, this.dst4);
      }
      if (this.next < 0) return false;
      q = this.next;
    }
    return true;
  }

  /** Decodes one record into the scratch record; false when it overran its set. */
  private record(v: DataView, q: number, end: number, plan: Plan): boolean {
    const f = this.fields;
    f.reset();
    if (!this.readFields(v, q, end, plan, f)) return false;
    this.uptimeTimes(f);
    this.fill(f, this.samplingOf(f));
    return true;
  }

  /** Reads the fields of the record at q into f, each by its role's group, and sets next; false when it overran its set. */
  private readFields(v: DataView, q: number, end: number, plan: Plan, f: RecordFields): boolean {
    const roles = plan.roles;
    const lengths = plan.lengths;
    const n = roles.length;
    for (let i = 0; i < n; i++) {
      let len = lengths[i];
      if (len === VARLEN) {
        if (q >= end) return this.overrun();
        len = v.getUint8(q++);
        if (len === 255) {
          if (q + 2 > end) return this.overrun();
          len = v.getUint16(q);
          q += 2;
        }
      }
      if (q + len > end) return this.overrun();
      // Role groups are contiguous (fields.ts): counters < flow key < times < sampling.
      const role: Role = roles[i];
      if (role >= Role.FIRST_UPTIME) {
        if (role >= Role.SAMPLING_INTERVAL) f.sampling(role, v, q, len);
        else f.time(role, v, q, len, this.cExportMs);
      } else if (role >= Role.PROTO) f.key(role, v, q, len);
      else if (role !== Role.SKIP) f.counter(role, v, q, len);
      q += len;
    }
    this.next = q;
    return true;
  }

  /**
   * Uptime-relative times, where the record has no absolute one: v9 against the header's sysUpTime; IPFIX against
   * systemInitTimeMilliseconds (from the record or the domain's options).
   */
  private uptimeTimes(f: RecordFields): void {
    if (f.firstUp < 0 && f.lastUp < 0) return;
    if (this.cVersion === 9) {
      if (Number.isNaN(f.first) && f.firstUp >= 0) f.first = this.cExportMs - ((this.cUptime - f.firstUp) | 0);
      if (Number.isNaN(f.last) && f.lastUp >= 0) f.last = this.cExportMs - ((this.cUptime - f.lastUp) | 0);
    } else {
      const base = f.sysInit >= 0 ? f.sysInit : this.cState.sysInitMs;
      if (base !== null) {
        if (Number.isNaN(f.first) && f.firstUp >= 0) f.first = base + f.firstUp;
        if (Number.isNaN(f.last) && f.lastUp >= 0) f.last = base + f.lastUp;
      }
    }
  }

  /** The record's sampling rate: the override, else the record's own rate, else its sampler's, else the domain's. */
  private samplingOf(f: RecordFields): number {
    if (this.cOverride !== null) return this.cOverride;
    if (f.rate >= 1) return f.rate;
    const st = this.cState;
    if (f.samplerId >= 0 && st.samplers !== null) return st.samplers.get(f.samplerId) ?? st.rate;
    return st.rate;
  }

  /** Writes the scratch record (and the IPv4 numbers handed beside it) from what the fields said. */
  private fill(f: RecordFields, sampling: number): void {
    const rawBytes = f.bytes >= 0 ? f.bytes : f.totBytes >= 0 ? f.totBytes : f.outBytes >= 0 ? f.outBytes : 0;
    const rawPackets = f.packets >= 0 ? f.packets : f.totPackets >= 0 ? f.totPackets : f.outPackets >= 0 ? f.outPackets : 0;
    this.src4 = f.src4;
    this.dst4 = f.dst4;
    const r = this.scratch;
    r.exporter = this.cExporter;
    r.version = this.cVersion;
    r.domain = this.cDomain;
    r.src = f.src;
    r.dst = f.dst;
    r.proto = f.proto;
    r.src_port = f.sport < 0 ? 0 : f.sport;
    // Exporters that send ICMP type/code without ports: dst_port = type * 256 + code.
    r.dst_port = f.dport >= 0 ? f.dport : f.icmp >= 0 ? f.icmp : 0;
    r.src_as = f.srcAs;
    r.dst_as = f.dstAs;
    r.bytes = Math.min(rawBytes * sampling, MAX_SAFE);
    r.packets = Math.min(rawPackets * sampling, MAX_SAFE);
    r.raw_bytes = rawBytes;
    r.raw_packets = rawPackets;
    r.sampling = sampling;
    r.first_ms = Number.isNaN(f.first) ? null : f.first;
    r.last_ms = Number.isNaN(f.last) ? null : f.last;
    r.in_if = f.inIf < 0 ? null : f.inIf;
    r.out_if = f.outIf < 0 ? null : f.outIf;
    r.tcp_flags = f.flags < 0 ? null : f.flags;
  }

  private overrun(): false {
    this.next = -1;
    return false;
  }

  /** One options data record: sampling rates (per sampler id, or the domain's rate) and the system init time. */
  private optionRecord(v: DataView, q: number, end: number, plan: Plan): void {
    const roles = plan.roles;
    const lengths = plan.lengths;
    let samplerId = -1;
    let interval = -1;
    let pktInterval = -1;
    let pktSpace = -1;
    let sysInit = -1;
    for (let i = 0; i < roles.length; i++) {
      let len = lengths[i];
      if (len === VARLEN) {
        if (q >= end) return void this.overrun();
        len = v.getUint8(q++);
        if (len === 255) {
          if (q + 2 > end) return void this.overrun();
          len = v.getUint16(q);
          q += 2;
        }
      }
      if (q + len > end) return void this.overrun();
      switch (roles[i]) {
        case Role.SAMPLER_ID:
          samplerId = uint(v, q, len);
          break;
        case Role.SAMPLING_INTERVAL:
        case Role.SAMPLER_RANDOM_INTERVAL:
          interval = uint(v, q, len);
          break;
        case Role.SAMPLING_PKT_INTERVAL:
          pktInterval = uint(v, q, len);
          break;
        case Role.SAMPLING_PKT_SPACE:
          pktSpace = uint(v, q, len);
          break;
        case Role.SYS_INIT_MS:
          sysInit = uint(v, q, len);
          break;
        default:
          break;
      }
      q += len;
    }
    this.next = q;
    this.counters.optionRecords++;
    const st = this.cState;
    if (sysInit >= 0) st.sysInitMs = sysInit;
    let rate = 0;
    if (pktInterval > 0) rate = (pktInterval + Math.max(0, pktSpace)) / pktInterval;
    else if (interval >= 1) rate = interval;
    else if (interval === 0 || (pktInterval === 0 && pktSpace >= 0)) rate = 1;
    if (rate >= 1) {
      if (samplerId >= 0) (st.samplers ??= new Map()).set(samplerId, rate);
      else st.rate = rate;
    }
  }

  /** Trailing bytes of a set or datagram must be zero padding. */
  private zeros(v: DataView, q: number, end: number): boolean {
    for (; q < end; q++) if (v.getUint8(q) !== 0) return false;
    return true;
  }

  // ---- data before its template ------------------------------------------------------------------------------------

  private hold(key: string, v: DataView, q: number, end: number, nowMs: number): void {
    if (this.pendingMaxSets === 0) {
      this.drop(1);
      return;
    }
    const body = Buffer.from(new Uint8Array(v.buffer, v.byteOffset + q, end - q));
    const p: Pending = {
      key,
      exporter: this.cExporter,
      version: this.cVersion,
      domain: this.cDomain,
      body,
      uptime: this.cUptime,
      exportMs: this.cExportMs,
      atMs: nowMs,
      done: false,
    };
    let list = this.pendingByKey.get(key);
    if (!list) {
      list = [];
      this.pendingByKey.set(key, list);
    }
    list.push(p);
    this.pendingQueue.push(p);
    this.pendingCount++;
    this.counters.pendingHeld++;
    while (this.pendingCount > this.pendingMaxSets) this.dropOldest();
  }

  private dropOldest(): void {
    const q = this.pendingQueue;
    while (this.pendingHead < q.length) {
      const p = q[this.pendingHead++];
      if (p.done) continue;
      this.forget(p);
      this.drop(1);
      break;
    }
    this.compact();
  }

  private expireInto(nowMs: number): void {
    const q = this.pendingQueue;
    const limit = nowMs - this.pendingMaxMs;
    while (this.pendingHead < q.length) {
      const p = q[this.pendingHead];
      if (!p.done) {
        if (p.atMs > limit) break;
        this.forget(p);
        this.drop(1);
      }
      this.pendingHead++;
    }
    this.compact();
  }

  private forget(p: Pending): void {
    p.done = true;
    this.pendingCount--;
    const list = this.pendingByKey.get(p.key);
    if (!list) return;
    const i = list.indexOf(p);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.pendingByKey.delete(p.key);
  }

  private drop(n: number): void {
    this.dropped += n;
    this.counters.pendingDropped += n;
  }

  private compact(): void {
    if (this.pendingHead > 1024 && this.pendingHead * 2 > this.pendingQueue.length) {
      this.pendingQueue = this.pendingQueue.slice(this.pendingHead);
      this.pendingHead = 0;
    } else if (this.pendingHead === this.pendingQueue.length) {
      this.pendingQueue = [];
      this.pendingHead = 0;
    }
  }

  /** The template for `key` just arrived: decode the sets held for it (in arrival order) into this result. */
  private release(key: string, result: DecodeResult): void {
    const list = this.pendingByKey.get(key);
    if (!list) return;
    this.pendingByKey.delete(key);
    const t = this.templates.getByText(key);
    if (!t) return;
    // Held sets carry their own datagram's context; restore the current one afterwards.
    const saved = [this.cExporter, this.cVersion, this.cDomain, this.cUptime, this.cExportMs] as const;
    for (const p of list) {
      p.done = true;
      this.pendingCount--;
      this.counters.pendingDecoded++;
      this.setContext(p.exporter, p.version, p.domain, p.uptime, p.exportMs);
      const v = new DataView(p.body.buffer, p.body.byteOffset, p.body.byteLength);
      if (!this.records(v, 0, v.byteLength, t)) result.malformed = true;
    }
    this.setContext(saved[0], saved[1], saved[2], saved[3], saved[4]);
  }
}

/** A record a RecordSink was handed, as a complete record of its own (the IPv4 addresses' texts filled in). */
export function copyRecord(r: FlowRecord, src4: number, dst4: number): FlowRecord {
  return { ...r, src: src4 >= 0 ? ipv4Text(src4) : r.src, dst: dst4 >= 0 ? ipv4Text(dst4) : r.dst };
}

export type { DecodeResult, DecoderStats, FlowRecord, RecordSink, TemplateKey };
