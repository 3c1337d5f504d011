/**
 * A cheap structural check of an SNMP datagram before net-snmp decodes it. net-snmp's BER reader
 * does not check that a SEQUENCE's declared length fits the bytes (a truncated trap decodes with
 * its last varbinds silently missing) and accepts any version number; this walk rejects both, so
 * every truncation of a real trap is counted as malformed rather than delivered short.
 */

const MAX_DEPTH = 16;

/** One TLV at `pos` within `end`: [tag, content start, content end], or null when it does not fit or is not DER-ish. */
function tlv(buf: Buffer, pos: number, end: number): [number, number, number] | null {
  if (pos + 2 > end) return null;
  const tag = buf[pos];
  if ((tag & 0x1f) === 0x1f) return null; // multi-byte tags are not used by SNMP
  let len = buf[pos + 1];
  let p = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > end) return null; // indefinite or absurd lengths
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p++];
  }
  if (p + len > end) return null;
  return [tag, p, p + len];
}

/** True when [pos, end) is a run of TLVs that fill it exactly, constructed ones recursively. */
function wellFormed(buf: Buffer, pos: number, end: number, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  while (pos < end) {
    const t = tlv(buf, pos, end);
    if (!t) return false;
    if (t[0] & 0x20 && !wellFormed(buf, t[1], t[2], depth + 1)) return false;
    pos = t[2];
  }
  return true;
}

/** Reads a small non-negative INTEGER's content, or -1. */
function smallInt(buf: Buffer, start: number, end: number): number {
  if (end - start < 1 || end - start > 4 || buf[start] & 0x80) return -1;
  let v = 0;
  for (let i = start; i < end; i++) v = v * 256 + buf[i];
  return v;
}

/**
 * The version (0, 1 or 3) of a well-formed SNMP message (one SEQUENCE filling the datagram), or null. For v3 the security parameters (a SEQUENCE inside an OCTET STRING) are checked as well.
 */
export function messageVersion(buf: Buffer): number | null {
  const top = tlv(buf, 0, buf.length);
  if (!top || top[0] !== 0x30 || top[2] !== buf.length) return null;
  if (!wellFormed(buf, top[1], top[2], 1)) return null;
  const ver = tlv(buf, top[1], top[2]);
  if (!ver || ver[0] !== 0x02) return null;
  const version = smallInt(buf, ver[1], ver[2]);
  if (version === 0 || version === 1) {
    const c = tlv(buf, ver[2], top[2]);
    return c && c[0] === 0x04 ? version : null;
  }
  if (version !== 3) return null;
  const header = tlv(buf, ver[2], top[2]);
  const sec = header && tlv(buf, header[2], top[2]);
  if (!sec || sec[0] !== 0x04 || !wellFormed(buf, sec[1], sec[2], 1)) return null;
  return version;
}

/** At most `maxBytes` bytes as `0x<hex>`, with a readable v1/v2c community overwritten by `*` (it is a secret). */
export function rawHex(buf: Buffer, maxBytes = 512): string {
  const out = Buffer.from(buf.subarray(0, maxBytes));
  const head = communityRange(out, buf.length);
  if (head) out.fill(0x2a, head[0], Math.min(head[1], out.length));
  return "0x" + out.toString("hex");
}

/** Where the community would be in a (maybe broken) v1/v2c message: SEQUENCE, INTEGER, OCTET STRING; lengths need not fit. */
function communityRange(buf: Buffer, total: number): [number, number] | null {
  const lenAt = (pos: number): [number, number] | null => {
    if (pos >= buf.length) return null;
    const b = buf[pos];
    if (!(b & 0x80)) return [b, pos + 1];
    const n = b & 0x7f;
    if (n === 0 || n > 4 || pos + 1 + n > buf.length) return null;
    let len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[pos + 1 + i];
    return [len, pos + 1 + n];
  };
  if (buf[0] !== 0x30) return null;
  const seq = lenAt(1);
  if (!seq || buf[seq[1]] !== 0x02) return null;
  const ver = lenAt(seq[1] + 1);
  if (!ver) return null;
  const cPos = ver[1] + ver[0];
  if (buf[cPos] !== 0x04) return null;
  const c = lenAt(cPos + 1);
  if (!c) return null;
  return [c[1], Math.min(c[1] + c[0], total)];
}
