/**
 * What the NetFlow v5 / v9 (RFC 3954) / IPFIX (RFC 7011) decoder produces. Plain data only, so records and
 * templates can be queued, stored and sent as they are.
 */

/** One unidirectional flow, as an exporter reported it. */
export interface FlowRecord {
  /** The exporter's address as text (the datagram's source address, as the caller passed it). */
  exporter: string;
  version: 5 | 9 | 10;
  /** v9 source id / IPFIX observation domain id; 0 for v5. */
  domain: number;
  /** IPv4 dotted quad or IPv6 text (RFC 5952: lower case, longest zero run compressed); "" when the record has no address. */
  src: string;
  dst: string;
  proto: number;
  src_port: number;
  dst_port: number;
  /** 0 = not reported. */
  src_as: number;
  dst_as: number;
  /**
   * Octets and packets ALREADY MULTIPLIED by `sampling` (the estimate of the real traffic); the exporter's own counts are
   * `raw_bytes` / `raw_packets`. 64-bit counters are read exactly up to 2^53 and clamped to Number.MAX_SAFE_INTEGER above.
   */
  bytes: number;
  packets: number;
  raw_bytes: number;
  raw_packets: number;
  /** The sampling rate applied (1 = unsampled): a per-exporter override, else what the exporter reported. */
  sampling: number;
  /** Flow start / end, Unix milliseconds; null when the record carries no usable time. */
  first_ms: number | null;
  last_ms: number | null;
  in_if: number | null;
  out_if: number | null;
  tcp_flags: number | null;
}

/** Identifies one template: an exporter's template ids are scoped by version and source id / observation domain. */
export interface TemplateKey {
  exporter: string;
  version: 9 | 10;
  domain: number;
  id: number;
}

/** One field of a template. `enterprise` is 0 for IANA elements (and always for v9). `length` 65535 = variable length (IPFIX). */
export interface TemplateField {
  id: number;
  length: number;
  enterprise: number;
}

/**
 * A template as plain JSON (what TemplateCache.export() returns and import() takes; it round-trips exactly through
 * JSON.stringify / JSON.parse). `scope` is the number of leading scope fields of an options template (0 for data templates).
 */
export interface TemplateJson extends TemplateKey {
  options: boolean;
  scope: number;
  fields: TemplateField[];
  /** When the template was last learned or refreshed (Unix ms, the decoder's nowMs); orders eviction. */
  seen_ms: number;
}

export interface DecodeResult {
  /** Flow records of this datagram, plus those of earlier held sets whose template arrived in it. */
  records: FlowRecord[];
  /** Templates new or changed by this datagram (a refresh with identical fields is not listed): persist these. */
  templatesLearned: TemplateKey[];
  /** Templates withdrawn by this datagram (IPFIX withdrawal): remove these from storage. */
  templatesWithdrawn: TemplateKey[];
  /** The datagram (or a part of it) was malformed; what could be decoded before the fault is still in `records`. */
  malformed: boolean;
  /** Held data sets dropped during this call (too old, or over the bound). */
  dropped: number;
  /** Data sets of this datagram held because their template is not known yet. */
  pending: number;
  /** 5, 9 or 10; null when the datagram is not NetFlow/IPFIX. */
  version: number | null;
}

export interface DecoderStats {
  datagrams: number;
  records: number;
  malformed: number;
  /** Options records read (sampling, system init time). */
  optionRecords: number;
  /** Data sets held for their template, decoded later, dropped (age or bound), and held now. */
  pendingHeld: number;
  pendingDecoded: number;
  pendingDropped: number;
  pendingNow: number;
  templates: number;
  byVersion: { v5: number; v9: number; v10: number };
}

/**
 * Takes the decoder's records one by one. The record is the decoder's scratch object, overwritten by the next record.
 * An IPv4 address comes as a number only: `src4` / `dst4` is the address as an unsigned 32-bit number and the record's
 * `src` / `dst` is then "" (ipv4Text() gives the text, and copyRecord() a complete copy); -1 when the address is not
 * IPv4, and `src` / `dst` holds it (or "" when the record has none). The hot path never formats an address it does not
 * keep.
 */
export type RecordSink = (record: FlowRecord, src4: number, dst4: number) => void;
