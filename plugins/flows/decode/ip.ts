/** Address text for decoded records: IPv4 dotted quad, IPv6 per RFC 5952 (lower case, no leading zeros, longest zero run as "::"). */

/**
 * The texts of IPv4 addresses, cached: a two-way set-associative cache keyed by the address's 32 bits (a set holds the
 * last two addresses hashed to it; a new one goes first and pushes the older second one out; a hit writes nothing). A
 * collector sees the same addresses over and over: one string per address instead of one per record saves the
 * formatting and the garbage.
 */
const V4_SETS = 1 << 16;
const v4Keys = new Int32Array(V4_SETS * 2);
const v4Texts: (string | undefined)[] = new Array<string | undefined>(V4_SETS * 2).fill(undefined);

/** The dotted quad of a 32-bit address (signed or unsigned). */
export function ipv4Text(address: number): string {
  const n = address | 0;
  const a = ((Math.imul(n, 0x9e3779b1) >>> 16) & (V4_SETS - 1)) * 2;
  let text = v4Texts[a];
  if (text !== undefined && v4Keys[a] === n) return text;
  text = v4Texts[a + 1];
  if (text !== undefined && v4Keys[a + 1] === n) return text;
  text = `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  v4Keys[a + 1] = v4Keys[a];
  v4Texts[a + 1] = v4Texts[a];
  v4Keys[a] = n;
  v4Texts[a] = text;
  return text;
}

/** The dotted quad of the 4 bytes at `o`. */
export function ipv4(v: DataView, o: number): string {
  return ipv4Text(v.getInt32(o));
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
