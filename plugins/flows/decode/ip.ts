/** Address text for decoded records: IPv4 dotted quad, IPv6 per RFC 5952 (lower case, no leading zeros, longest zero run as "::"). */

/**
 * The texts of recently decoded IPv4 addresses, in a direct-mapped cache keyed by the address's 32 bits (a slot holds
 * the last address hashed to it). A collector sees the same addresses over and over: one string per address instead of
 * one per record saves the formatting and the garbage, and the aggregator compares identical strings at once.
 */
const V4_SLOTS = 1 << 16;
const v4Keys = new Int32Array(V4_SLOTS);
const v4Texts: (string | undefined)[] = new Array<string | undefined>(V4_SLOTS).fill(undefined);

export function ipv4(v: DataView, o: number): string {
  const n = v.getInt32(o);
  const slot = (Math.imul(n, 0x9e3779b1) >>> 16) & (V4_SLOTS - 1);
  const cached = v4Texts[slot];
  if (cached !== undefined && v4Keys[slot] === n) return cached;
  const text = `${v.getUint8(o)}.${v.getUint8(o + 1)}.${v.getUint8(o + 2)}.${v.getUint8(o + 3)}`;
  v4Keys[slot] = n;
  v4Texts[slot] = text;
  return text;
}

export function ipv4FromUint(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export function ipv6(v: DataView, o: number): string {
  // The longest run of two or more zero groups (the first one on a tie) becomes "::".
  let bestAt = -1;
  let bestLen = 1;
  let runAt = -1;
  for (let i = 0; i < 8; i++) {
    if (v.getUint16(o + i * 2) === 0) {
      if (runAt < 0) runAt = i;
      if (i - runAt + 1 > bestLen) {
        bestLen = i - runAt + 1;
        bestAt = runAt;
      }
    } else runAt = -1;
  }
  // ::ffff:a.b.c.d (IPv4-mapped) keeps the dotted quad (RFC 5952 section 5).
  if (bestAt === 0 && bestLen === 5 && v.getUint16(o + 10) === 0xffff) return `::ffff:${ipv4(v, o + 12)}`;
  let s = "";
  for (let i = 0; i < 8; i++) {
    if (i === bestAt) {
      s += "::";
      i += bestLen - 1;
      continue;
    }
    if (s !== "" && !s.endsWith(":")) s += ":";
    s += v.getUint16(o + i * 2).toString(16);
  }
  return s;
}
