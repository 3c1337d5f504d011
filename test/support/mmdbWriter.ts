/**
 * A small MaxMind DB (MMDB) writer for tests, written from the format's specification
 * (https://maxmind.github.io/MaxMind-DB/): a binary search tree of `recordSize`-bit records, 16 zero bytes, the data
 * section, the metadata marker and the metadata map. It writes IPv4 trees and IPv6 trees (IPv4 prefixes then sit at
 * `::a.b.c.d/(96+n)`, optionally aliased from `::ffff:0:0/96` and `2002::/16` as MaxMind's own databases are), record
 * sizes 24, 28 and 32, and every data type. Identical records are stored once, and repeated strings (map keys, names)
 * become pointers to their first copy, as in real databases.
 *
 * Plain JS values map to MMDB types: a string to utf8_string, a boolean to boolean, an integer 0..2^32-1 to uint32, a
 * negative integer to int32, another number to double, a bigint to uint64 (uint128 when larger), a Buffer to bytes,
 * an array to array, an object to map. `mmdbValue` forces a type (`mmdbValue("uint16", 13335)`).
 */
import { isIPv4, isIPv6 } from "node:net";

export type MmdbType = "utf8_string" | "double" | "bytes" | "uint16" | "uint32" | "map" | "int32" | "uint64" | "uint128" | "array" | "boolean" | "float";

/** A value with its MMDB type forced. */
export class MmdbTyped {
  constructor(
    readonly type: MmdbType,
    readonly value: number | bigint,
  ) {}
}

export const mmdbValue = (type: MmdbType, value: number | bigint): MmdbTyped => new MmdbTyped(type, value);

export type MmdbValue = string | number | bigint | boolean | Buffer | MmdbTyped | MmdbValue[] | { [key: string]: MmdbValue };

export interface MmdbEntry {
  /** `192.0.2.0/24` or `2001:db8::/32`; in an IPv4 tree only IPv4 prefixes are accepted. */
  prefix: string;
  record: MmdbValue;
}

export interface MmdbWriteOptions {
  ipVersion?: 4 | 6;
  recordSize?: 24 | 28 | 32;
  databaseType?: string;
  /** IPv6 trees: point ::ffff:0:0/96 and 2002::/16 at the IPv4 subtree (default true, as MaxMind's databases do). */
  aliasIpv4?: boolean;
  /** Store repeated strings once and point to them (default true). */
  pointers?: boolean;
  description?: string;
  buildEpoch?: number;
}

const TYPE_CODE: Record<MmdbType, number> = {
  utf8_string: 2,
  double: 3,
  bytes: 4,
  uint16: 5,
  uint32: 6,
  map: 7,
  int32: 8,
  uint64: 9,
  uint128: 10,
  array: 11,
  boolean: 14,
  float: 15,
};
const POINTER = 1;
export const METADATA_MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from("MaxMind.com")]);

/** Encodes MMDB data fields; `strings` remembers where each string was written so a repeat can be a pointer. */
class DataEncoder {
  private parts: Buffer[] = [];
  length = 0;
  private strings = new Map<string, number>();

  constructor(private readonly pointers: boolean) {}

  private push(buf: Buffer): void {
    this.parts.push(buf);
    this.length += buf.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }

  private control(type: number, size: number): void {
    const head: number[] = [];
    let sizeBits: number;
    const extra: number[] = [];
    if (size < 29) sizeBits = size;
    else if (size < 29 + 256) {
      sizeBits = 29;
      extra.push(size - 29);
    } else if (size < 285 + 65536) {
      sizeBits = 30;
      const v = size - 285;
      extra.push(v >> 8, v & 0xff);
    } else {
      sizeBits = 31;
      const v = size - 65821;
      if (v >= 1 << 24) throw new Error(`an MMDB field cannot hold ${size} items`);
      extra.push(v >> 16, (v >> 8) & 0xff, v & 0xff);
    }
    if (type < 8) head.push((type << 5) | sizeBits);
    else head.push(sizeBits, type - 7);
    this.push(Buffer.from([...head, ...extra]));
  }

  pointer(offset: number): void {
    if (offset < 2048) this.push(Buffer.from([(POINTER << 5) | (offset >> 8), offset & 0xff]));
    else if (offset < 2048 + 524288) {
      const v = offset - 2048;
      this.push(Buffer.from([(POINTER << 5) | (1 << 3) | (v >> 16), (v >> 8) & 0xff, v & 0xff]));
    } else if (offset < 526336 + 134217728) {
      const v = offset - 526336;
      this.push(Buffer.from([(POINTER << 5) | (2 << 3) | (v >> 24), (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff]));
    } else {
      const b = Buffer.alloc(5);
      b[0] = (POINTER << 5) | (3 << 3);
      b.writeUInt32BE(offset, 1);
      this.push(b);
    }
  }

  private unsigned(type: number, value: bigint, maxBytes: number): void {
    if (value < 0n) throw new Error("an MMDB unsigned integer cannot be negative");
    const bytes: number[] = [];
    for (let v = value; v > 0n; v >>= 8n) bytes.unshift(Number(v & 0xffn));
    if (bytes.length > maxBytes) throw new Error(`${value} does not fit in ${maxBytes} bytes`);
    this.control(type, bytes.length);
    this.push(Buffer.from(bytes));
  }

  string(s: string): void {
    const seen = this.strings.get(s);
    if (this.pointers && seen !== undefined && Buffer.byteLength(s) > 2) return this.pointer(seen);
    if (!this.strings.has(s)) this.strings.set(s, this.length);
    const b = Buffer.from(s, "utf8");
    this.control(TYPE_CODE.utf8_string, b.length);
    this.push(b);
  }

  value(v: MmdbValue): void {
    if (typeof v === "string") return this.string(v);
    if (typeof v === "boolean") return this.control(TYPE_CODE.boolean, v ? 1 : 0);
    if (typeof v === "bigint") return v < 1n << 64n ? this.unsigned(TYPE_CODE.uint64, v, 8) : this.unsigned(TYPE_CODE.uint128, v, 16);
    if (typeof v === "number") {
      if (Number.isInteger(v) && v >= 0 && v <= 0xffffffff) return this.unsigned(TYPE_CODE.uint32, BigInt(v), 4);
      if (Number.isInteger(v) && v < 0 && v >= -0x80000000) return this.typed(new MmdbTyped("int32", v));
      return this.typed(new MmdbTyped("double", v));
    }
    if (v instanceof MmdbTyped) return this.typed(v);
    if (Buffer.isBuffer(v)) {
      this.control(TYPE_CODE.bytes, v.length);
      return this.push(v);
    }
    if (Array.isArray(v)) {
      this.control(TYPE_CODE.array, v.length);
      for (const item of v) this.value(item);
      return;
    }
    const keys = Object.keys(v);
    this.control(TYPE_CODE.map, keys.length);
    for (const k of keys) {
      this.string(k);
      this.value(v[k]);
    }
  }

  private typed(t: MmdbTyped): void {
    const code = TYPE_CODE[t.type];
    switch (t.type) {
      case "uint16":
        return this.unsigned(code, BigInt(t.value), 2);
      case "uint32":
        return this.unsigned(code, BigInt(t.value), 4);
      case "uint64":
        return this.unsigned(code, BigInt(t.value), 8);
      case "uint128":
        return this.unsigned(code, BigInt(t.value), 16);
      case "int32": {
        const b = Buffer.alloc(4);
        b.writeInt32BE(Number(t.value));
        this.control(code, 4);
        return this.push(b);
      }
      case "double": {
        const b = Buffer.alloc(8);
        b.writeDoubleBE(Number(t.value));
        this.control(code, 8);
        return this.push(b);
      }
      case "float": {
        const b = Buffer.alloc(4);
        b.writeFloatBE(Number(t.value));
        this.control(code, 4);
        return this.push(b);
      }
      default:
        throw new Error(`mmdbValue cannot force type ${t.type}`);
    }
  }
}

/** A node of the tree being built: each side is another node, a data record (its index), or empty. */
interface Node {
  child: [Node | number | null, Node | number | null];
}

/** The address bits of a prefix in a tree of `bits` bits (IPv4 in an IPv6 tree at ::a.b.c.d). */
function prefixBits(prefix: string, bits: 32 | 128): { value: bigint; length: number } {
  const slash = prefix.lastIndexOf("/");
  const addr = prefix.slice(0, slash);
  const length = Number(prefix.slice(slash + 1));
  if (slash < 0 || !Number.isInteger(length)) throw new Error(`not a prefix: ${prefix}`);
  if (isIPv4(addr)) {
    if (length > 32) throw new Error(`not a prefix: ${prefix}`);
    const value = addr.split(".").reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n);
    return { value, length: bits === 128 ? length + 96 : length };
  }
  if (!isIPv6(addr) || bits === 32 || length > 128) throw new Error(`not a prefix for this tree: ${prefix}`);
  const [head, tail = ""] = addr.split("::");
  const groups = (s: string) => (s ? s.split(":") : []);
  let hs = groups(head);
  let ts = groups(tail);
  const v4 = (list: string[]) => {
    const last = list[list.length - 1];
    if (last && isIPv4(last)) {
      const o = last.split(".").map(Number);
      list.splice(list.length - 1, 1, ((o[0] << 8) | o[1]).toString(16), ((o[2] << 8) | o[3]).toString(16));
    }
    return list;
  };
  ts = v4(ts);
  if (!addr.includes("::")) hs = v4(hs);
  const all = addr.includes("::") ? [...hs, ...Array<string>(8 - hs.length - ts.length).fill("0"), ...ts] : hs;
  const value = all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
  return { value, length };
}

/** Writes an MMDB file holding `entries` (a more specific prefix wins inside a less specific one, whatever the order). */
export function writeMmdb(entries: readonly MmdbEntry[], options: MmdbWriteOptions = {}): Buffer {
  const ipVersion = options.ipVersion ?? 6;
  const recordSize = options.recordSize ?? 28;
  const bits = ipVersion === 4 ? 32 : 128;
  const data = new DataEncoder(options.pointers ?? true);
  const recordOffsets = new Map<string, number>();
  const root: Node = { child: [null, null] };

  const placed = entries
    .map((e) => {
      const key = JSON.stringify(e.record, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
      let offset = recordOffsets.get(key);
      if (offset === undefined) {
        offset = data.length;
        recordOffsets.set(key, offset);
        data.value(e.record);
      }
      return { ...prefixBits(e.prefix, bits), offset };
    })
    .sort((a, b) => a.length - b.length);

  for (const p of placed) {
    if (p.length === 0) throw new Error("a /0 prefix cannot be a record of the tree's root");
    const path = p.value.toString(2).padStart(bits, "0");
    let node = root;
    for (let depth = 0; depth < p.length - 1; depth++) {
      const bit = path.charCodeAt(depth) - 48;
      const next = node.child[bit];
      if (next === null || typeof next === "number") {
        // Split an empty side or a less specific record: both halves keep what was there.
        const split: Node = { child: [next, next] };
        node.child[bit] = split;
        node = split;
      } else node = next;
    }
    node.child[path.charCodeAt(p.length - 1) - 48] = p.offset;
  }

  if (ipVersion === 6 && (options.aliasIpv4 ?? true)) {
    // The IPv4 subtree is the node at ::/96; ::ffff:0:0/96 and 2002::/16 are pointed at it.
    const pathTo = (value: bigint, length: number): Node => {
      let node = root;
      for (let depth = 0; depth < length - 1; depth++) {
        const bit = Number((value >> BigInt(127 - depth)) & 1n);
        let next = node.child[bit];
        if (typeof next === "number") throw new Error("a record covers the IPv4 alias networks: cannot alias them");
        if (next === null) next = node.child[bit] = { child: [null, null] };
        node = next;
      }
      return node;
    };
    const v4parent = pathTo(0n, 96);
    let v4root = v4parent.child[0];
    if (typeof v4root === "number") throw new Error("a record covers ::/96: cannot alias it");
    if (v4root === null) v4root = v4parent.child[0] = { child: [null, null] };
    const mapped = 0xffffn << 32n;
    pathTo(mapped, 96).child[Number((mapped >> 32n) & 1n)] = v4root;
    const sixToFour = 0x2002n << 112n;
    pathTo(sixToFour, 16).child[Number((sixToFour >> 112n) & 1n)] = v4root;
  }

  // Number the nodes breadth first (the root is node 0); an aliased node is numbered once.
  const numbers = new Map<Node, number>();
  const order: Node[] = [root];
  numbers.set(root, 0);
  for (let i = 0; i < order.length; i++) {
    for (const c of order[i].child) {
      if (c !== null && typeof c !== "number" && !numbers.has(c)) {
        numbers.set(c, order.length);
        order.push(c);
      }
    }
  }
  const nodeCount = order.length;
  const recordValue = (c: Node | number | null): number => (c === null ? nodeCount : typeof c === "number" ? nodeCount + 16 + c : numbers.get(c)!);
  const nodeBytes = recordSize / 4;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  const max = 2 ** recordSize;
  order.forEach((node, i) => {
    const [l, r] = node.child.map(recordValue);
    if (l >= max || r >= max) throw new Error(`record size ${recordSize} cannot address this database`);
    const o = i * nodeBytes;
    if (recordSize === 24) {
      tree.writeUIntBE(l, o, 3);
      tree.writeUIntBE(r, o + 3, 3);
    } else if (recordSize === 28) {
      tree.writeUIntBE(l & 0xffffff, o, 3);
      tree[o + 3] = ((l >>> 24) << 4) | (r >>> 24);
      tree.writeUIntBE(r & 0xffffff, o + 4, 3);
    } else {
      tree.writeUInt32BE(l, o);
      tree.writeUInt32BE(r, o + 4);
    }
  });

  const meta = new DataEncoder(false);
  meta.value({
    binary_format_major_version: mmdbValue("uint16", 2),
    binary_format_minor_version: mmdbValue("uint16", 0),
    build_epoch: BigInt(options.buildEpoch ?? 1_700_000_000),
    database_type: options.databaseType ?? "Test-ASN",
    description: { en: options.description ?? "synthetic test database" },
    ip_version: mmdbValue("uint16", ipVersion),
    languages: ["en"],
    node_count: mmdbValue("uint32", nodeCount),
    record_size: mmdbValue("uint16", recordSize),
  });
  return Buffer.concat([tree, Buffer.alloc(16), data.bytes(), METADATA_MARKER, meta.bytes()]);
}
