/**
 * Reading an address-to-AS table out of a MaxMind DB (MMDB) file: GeoLite2-ASN, ipinfo's ASN databases, and the
 * iptoasn-derived ones (https://maxmind.github.io/MaxMind-DB/ is the format).
 *
 * The `maxmind` Reader parses the metadata and decodes the data records; it has no way to list the networks, so the
 * search tree is walked here, on the file's bytes, from the metadata's node count and record size. Each network (a
 * record of the tree that points into the data section) becomes one prefix: those under ::/96 of an IPv6 tree as IPv4
 * prefixes, and the aliases that point back at the IPv4 subtree (::ffff:0:0/96, 2002::/16) are not walked again. A
 * record is decoded once per data offset, through the Reader's public lookup of the network's first address.
 *
 * Any fault (not an MMDB file, a truncated one, a tree that points outside itself, records that are no maps, an AS
 * number that is not one, no AS number at all) is an `AsnTableError` whose message says what is wrong; nothing else
 * is thrown.
 */
import { Reader } from "maxmind";

/** A table that cannot be read; the message is one sentence for the operator. */
export class AsnTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AsnTableError";
  }
}

export interface AsnRow {
  prefix: string;
  asn: number;
  name: string | null;
}

/** The field names read, in order of preference (compared in lower case). Documented in docs/flows.md. */
export const ASN_FIELDS = ["autonomous_system_number", "asn", "as_number"] as const;
export const NAME_FIELDS = ["autonomous_system_organization", "as_name", "name", "as_description", "organization", "as_org", "as_organization"] as const;
export const DOMAIN_FIELDS = ["as_domain", "domain"] as const;

const MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from("MaxMind.com")]);
/** The metadata section is at most 128 KiB (the spec), so the marker is searched for there. */
const METADATA_MAX = 128 * 1024;
/** The longest name stored (the JSON route's limit too). */
export const NAME_MAX = 200;

/** Where the metadata marker starts, or -1: an MMDB file has it in its last 128 KiB. */
function markerAt(buf: Buffer): number {
  return buf.lastIndexOf(MARKER, buf.length - MARKER.length);
}

/** Whether the bytes look like an MMDB file (its metadata marker near the end). */
export function looksLikeMmdb(buf: Buffer): boolean {
  const at = markerAt(buf);
  return at >= 0 && buf.length - at <= METADATA_MAX;
}

export interface AsnMmdbInfo {
  databaseType: string;
  ipVersion: 4 | 6;
  nodeCount: number;
  recordSize: number;
  buildEpoch: number | null;
}

export interface AsnMmdbStats {
  /** Networks in the tree (records that point to data), aliases not counted. */
  networks: number;
  /** Rows produced (networks with an AS number other than 0). */
  rows: number;
  /** Networks skipped: no AS number field, an empty one, or AS 0. */
  skipped: number;
  /** Distinct data records decoded. */
  records: number;
}

type Decoded = { asn: number; name: string | null } | null;

/** An MMDB file opened as an AS table. `rows()` walks it; it may be walked more than once. */
export class AsnMmdb {
  readonly info: AsnMmdbInfo;
  private readonly reader: Reader<Record<string, unknown>>;
  private readonly nodeBytes: number;
  private readonly recordSize: number;
  private readonly dataStart: number;
  private readonly dataSize: number;
  private readonly bits: 32 | 128;
  private readonly ipv4Start: number;
  /** The last walk's figures (complete once `rows()` has finished). */
  stats: AsnMmdbStats = { networks: 0, rows: 0, skipped: 0, records: 0 };

  constructor(private readonly buf: Buffer) {
    if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) throw new AsnTableError("the file is gzip-compressed: extract the .mmdb file first");
    const marker = markerAt(buf);
    if (marker < 0 || buf.length - marker > METADATA_MAX) throw new AsnTableError("not an MMDB file (no MaxMind DB metadata marker at its end)");
    try {
      this.reader = new Reader<Record<string, unknown>>(buf);
    } catch (err) {
      throw new AsnTableError(`the MMDB metadata does not decode: ${oneLine(err)}`);
    }
    const m = this.reader.metadata;
    if (m.binaryFormatMajorVersion !== 2) throw new AsnTableError(`unsupported MMDB format version ${String(m.binaryFormatMajorVersion)} (2 is read)`);
    if (m.ipVersion !== 4 && m.ipVersion !== 6) throw new AsnTableError(`the MMDB metadata gives ip_version ${String(m.ipVersion)} (4 or 6)`);
    if (!Number.isInteger(m.nodeCount) || m.nodeCount < 1) throw new AsnTableError("the MMDB metadata gives no node_count");
    this.nodeBytes = m.nodeByteSize;
    this.recordSize = m.recordSize;
    this.dataStart = m.nodeCount * this.nodeBytes + 16;
    this.dataSize = marker - this.dataStart;
    if (this.dataSize < 0) throw new AsnTableError(`the file is truncated: its search tree of ${m.nodeCount} nodes does not fit before the metadata`);
    for (let i = this.dataStart - 16; i < this.dataStart; i++)
      if (buf[i] !== 0) throw new AsnTableError("the file is damaged: no 16-byte separator after the search tree");
    this.bits = m.ipVersion === 4 ? 32 : 128;
    this.info = {
      databaseType: typeof m.databaseType === "string" ? m.databaseType : "",
      ipVersion: m.ipVersion,
      nodeCount: m.nodeCount,
      recordSize: m.recordSize,
      buildEpoch: Number.isFinite(m.buildEpoch?.getTime()) ? m.buildEpoch.getTime() / 1000 : null,
    };
    // The IPv4 subtree of an IPv6 tree: the node 96 left turns down (none when the walk leaves the tree earlier).
    let node = 0;
    let depth = 0;
    if (m.ipVersion === 6) for (; depth < 96 && node < m.nodeCount; depth++) node = this.record(node, 0);
    this.ipv4Start = m.ipVersion === 6 && depth === 96 && node < m.nodeCount ? node : -1;
  }

  /** One side of a node of the search tree. */
  private record(node: number, side: 0 | 1): number {
    const o = node * this.nodeBytes;
    const b = this.buf;
    switch (this.recordSize) {
      case 24:
        return side ? b.readUIntBE(o + 3, 3) : b.readUIntBE(o, 3);
      case 28:
        return side ? (b[o + 3] & 0x0f) * 0x1000000 + b.readUIntBE(o + 4, 3) : (b[o + 3] >> 4) * 0x1000000 + b.readUIntBE(o, 3);
      default:
        return b.readUInt32BE(o + side * 4);
    }
  }

  /**
   * Every network with an AS number, each once. Throws `AsnTableError` at the first fault, and at the end when no record has an AS number at all.
   */
  *rows(): Generator<AsnRow, void, undefined> {
    const { nodeCount } = this.info;
    const bits = this.bits;
    const decoded = new Map<number, Decoded>();
    const stats: AsnMmdbStats = (this.stats = { networks: 0, rows: 0, skipped: 0, records: 0 });
    let withAsnField = 0;
    // Depth-first with an explicit stack. The address bits of the current path live in `path`: everything popped
    // between a node and one of its ancestors lies deeper in that ancestor's subtree, so the ancestors' bits are
    // still in place when a node is popped. A well-formed tree reaches each node once (aliases skipped); the bound
    // stops a damaged one whose records loop.
    const path = new Uint8Array(bits / 8);
    const nodes: number[] = [0];
    const steps: number[] = [0]; // depth × 2 + the bit taken to reach the node
    let visits = 0;
    while (nodes.length) {
      const node = nodes.pop()!;
      const step = steps.pop()!;
      const depth = step >> 1;
      if (depth > 0) setBit(path, depth - 1, step & 1);
      if (++visits > nodeCount * 2) throw new AsnTableError("the search tree is damaged: its records loop back on themselves");
      for (let side = 1; side >= 0; side--) {
        const r = this.record(node, side as 0 | 1);
        if (r === nodeCount) continue;
        const childDepth = depth + 1;
        setBit(path, depth, side);
        if (r < nodeCount) {
          if (childDepth >= bits) throw new AsnTableError(`the search tree is damaged: it goes deeper than ${bits} bits`);
          // An alias of the IPv4 subtree (::ffff:0:0/96, 2002::/16 and the like): the same networks again.
          if (r === this.ipv4Start && !(childDepth === 96 && zeroBits(path, 96))) continue;
          nodes.push(r);
          steps.push(childDepth * 2 + side);
          continue;
        }
        const network = this.network(path, childDepth);
        const offset = r - nodeCount - 16;
        if (offset < 0 || offset >= this.dataSize)
          throw new AsnTableError(`the search tree is damaged: a record points outside the data section (${network.prefix})`);
        stats.networks++;
        let entry = decoded.get(offset);
        if (entry === undefined && !decoded.has(offset)) {
          const value = this.decode(network);
          entry = interpret(value, network.prefix);
          if (entry !== null || hasAsnField(value)) withAsnField++;
          decoded.set(offset, entry);
          stats.records++;
        }
        if (!entry) {
          stats.skipped++;
          continue;
        }
        stats.rows++;
        yield { prefix: network.prefix, asn: entry.asn, name: entry.name };
      }
    }
    if (stats.networks === 0) throw new AsnTableError("the MMDB file holds no networks");
    if (withAsnField === 0)
      throw new AsnTableError(
        `no record has an AS number (looked for ${ASN_FIELDS.join(", ")}): is this an ASN database? (type ${JSON.stringify(this.info.databaseType)})`,
      );
  }

  /**
   * The network whose first `length` bits are in `path`: its prefix text (IPv4 for an IPv4 tree and under ::/96 of an
   * IPv6 one, else IPv6 in RFC 5952 form), its first address, and how long a prefix the Reader reports for it.
   */
  private network(path: Uint8Array, length: number): { prefix: string; address: string; readerLength: number } {
    const bytes = new Uint8Array(path.length);
    const whole = length >> 3;
    bytes.set(path.subarray(0, whole));
    if (length & 7) bytes[whole] = path[whole] & (0xff << (8 - (length & 7)));
    if (this.bits === 32) {
      const address = `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
      return { prefix: `${address}/${length}`, address, readerLength: length };
    }
    if (length >= 96 && zeroBits(bytes, 96)) {
      const address = `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
      return { prefix: `${address}/${length - 96}`, address, readerLength: length - 96 };
    }
    const address = ipv6Text(bytes);
    return { prefix: `${address}/${length}`, address, readerLength: length };
  }

  /** The record of a network, decoded by the Reader from a lookup of its first address. */
  private decode(network: { prefix: string; address: string; readerLength: number }): unknown {
    let value: unknown;
    let length: number;
    try {
      [value, length] = this.reader.getWithPrefixLength(network.address);
    } catch (err) {
      throw new AsnTableError(`the record of ${network.prefix} does not decode: ${oneLine(err)}`);
    }
    if (value === null || value === undefined || length !== network.readerLength)
      throw new AsnTableError(`the record of ${network.prefix} does not decode (the search tree is damaged)`);
    return value;
  }
}

function setBit(path: Uint8Array, index: number, bit: number): void {
  const mask = 0x80 >> (index & 7);
  if (bit) path[index >> 3] |= mask;
  else path[index >> 3] &= ~mask;
}

/** Whether the first `count` bits (a multiple of 8) are all zero. */
function zeroBits(path: Uint8Array, count: number): boolean {
  for (let i = 0; i < count >> 3; i++) if (path[i] !== 0) return false;
  return true;
}

/** Opens `buf` as an MMDB AS table (throws `AsnTableError`); nothing is walked yet. */
export function openAsnMmdb(buf: Buffer): AsnMmdb {
  return new AsnMmdb(buf);
}

/** An IPv6 address from its 16 bytes, in RFC 5952 form: the longest run of two or more zero groups (the first of equals) is "::". */
function ipv6Text(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}

function lowerKeys(value: Record<string, unknown>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(value)) if (!out.has(k.toLowerCase())) out.set(k.toLowerCase(), v);
  return out;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

function hasAsnField(value: unknown): boolean {
  if (!isMap(value)) return false;
  const fields = lowerKeys(value);
  return ASN_FIELDS.some((f) => fields.has(f));
}

/** The AS number and name of a record; null when it has no AS number (or 0). Throws on a record that is no map, or a bad AS number. */
function interpret(value: unknown, prefix: string): Decoded {
  if (!isMap(value)) throw new AsnTableError(`the record of ${prefix} is ${describe(value)}, not a map of fields: this is not an AS table`);
  const fields = lowerKeys(value);
  const field = ASN_FIELDS.find((f) => fields.has(f));
  if (!field) return null;
  const raw = fields.get(field);
  let asn: number;
  if (typeof raw === "number") asn = raw;
  else if (typeof raw === "bigint") asn = raw <= 0xffffffffn && raw >= 0n ? Number(raw) : NaN;
  else if (typeof raw === "string") {
    const t = raw.trim();
    if (!t) return null;
    asn = /^(AS)?\d{1,10}$/i.test(t) ? Number(t.replace(/^AS/i, "")) : NaN;
  } else if (raw === null || raw === undefined) return null;
  else asn = NaN;
  if (!Number.isInteger(asn) || asn < 0 || asn > 4294967295)
    throw new AsnTableError(`the record of ${prefix} has ${field} ${describe(raw)}, which is not an AS number`);
  if (asn === 0) return null;
  return { asn, name: nameOf(fields) };
}

function nameOf(fields: Map<string, unknown>): string | null {
  for (const f of [...NAME_FIELDS, ...DOMAIN_FIELDS]) {
    const v = fields.get(f);
    if (typeof v !== "string") continue;
    // Text PostgreSQL can store: no NUL, no other control characters; at most NAME_MAX characters.
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    const clean = v.replace(/[\u0000-\u001f\u007f]/g, " ").trim();
    if (clean) return [...clean].slice(0, NAME_MAX).join("");
  }
  return null;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return "empty";
  if (Array.isArray(value)) return "an array";
  if (Buffer.isBuffer(value)) return "bytes";
  if (typeof value === "string") return JSON.stringify(value.slice(0, 40));
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return `${typeof value} ${String(value)}`;
  return "a map";
}

function oneLine(err: unknown): string {
  return String((err as Error)?.message ?? err)
    .split("\n")[0]
    .slice(0, 200);
}
