/**
 * IP addresses and prefixes, read one way everywhere (docs/adr/0007-addresses-and-prefixes.md):
 *
 * - An address is IPv4 as four decimal octets without leading zeros ("10.0.0.1", never "010.0.0.1",
 *   "10.1" or "0x0a.0.0.1"), or IPv6 text (RFC 4291, an embedded dotted quad allowed) without a
 *   zone id ("fe80::1%eth0" is refused: PostgreSQL's inet cannot store it). Exactly what
 *   node:net's isIP() accepts, minus zones. No surrounding blanks.
 * - An IPv4-mapped IPv6 address (::ffff:10.0.0.1) stays IPv6, as in PostgreSQL: it does not match
 *   IPv4 prefixes and IPv4 addresses do not match it.
 * - A prefix is "address/length" with a decimal length up to 32 (IPv4) or 128 (IPv6), or a bare
 *   address (a single host: /32, /128). Blanks around it are ignored.
 * - Host bits: a prefix written with host bits set names the network that holds it:
 *   "10.1.2.3/24" is 10.1.2.0/24 (PostgreSQL's network(inet)). It is never refused for that.
 *
 * Parsing is ipaddr.js behind a strict syntax check (ipaddr.js alone reads "10.1", octal quads and
 * "::a.b.c.d" as a v4-mapped address); prefix ranges are cidr-tools' on already-validated text
 * (cidr-tools alone reads "10.0.0/24" as 0.10.0.0/24).
 */
import ipaddr from "ipaddr.js";
import { parseCidr as cidrRange } from "cidr-tools";

export type IpFamily = 4 | 6;

/** Address width in bits per family. */
export const ADDRESS_BITS: Readonly<Record<IpFamily, number>> = { 4: 32, 6: 128 };

export interface IpAddress {
  family: IpFamily;
  /** The address as an unsigned integer (32 or 128 bits). */
  value: bigint;
  /** Canonical text: the dotted quad, or RFC 5952 for IPv6 ("2001:db8::1", "::ffff:a00:1"). */
  text: string;
  /** An IPv4-mapped IPv6 address (::ffff:a.b.c.d); its family stays 6. */
  v4Mapped: boolean;
}

export interface IpPrefix {
  family: IpFamily;
  /** Prefix length: 0 to 32 (IPv4) or 128 (IPv6). */
  prefix: number;
  /** The first address (host bits cleared), as an unsigned integer. */
  network: bigint;
  /** The last address of the prefix. */
  last: bigint;
  /** How many addresses the prefix holds (2^(bits − prefix)). */
  size: bigint;
  /** Canonical "network/prefix" text, as PostgreSQL's cidr reads it: "10.1.2.0/24", "2001:db8::/32". */
  text: string;
}

const DOTTED_TAIL = /:([^:]*\.[^:]*)$/;
const PREFIX_LENGTH = /^[0-9]{1,3}$/;

function strictFamily(text: string): IpFamily | 0 {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return 4;
  if (text.includes("%") || !ipaddr.IPv6.isValid(text)) return 0;
  if (text.includes(".")) {
    const tail = DOTTED_TAIL.exec(text);
    if (!tail || !ipaddr.IPv4.isValidFourPartDecimal(tail[1])) return 0;
  }
  return 6;
}

/**
 * "x::a.b.c.d" with the dotted quad written as two hex groups. ipaddr.js reads "::a.b.c.d" (the
 * deprecated IPv4-compatible form) as "::ffff:a.b.c.d"; RFC 4291 and PostgreSQL read it as
 * "::a.b.c.d" (::c000:201 for ::192.0.2.1), and so does this module. Only for validated text.
 */
function hexTail(text: string): string {
  const tail = DOTTED_TAIL.exec(text);
  if (!tail) return text;
  const [a, b, c, d] = tail[1].split(".").map(Number);
  return `${text.slice(0, text.length - tail[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

function toBigInt(bytes: readonly number[]): bigint {
  return bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
}

function toBytes(family: IpFamily, value: bigint): number[] {
  const bytes = new Array<number>(family === 4 ? 4 : 16);
  for (let i = bytes.length - 1, v = value; i >= 0; i--, v >>= 8n) bytes[i] = Number(v & 0xffn);
  return bytes;
}

/** The address `text` names, or null when it is not one (see the module comment for the rules). */
export function parseIp(text: unknown): IpAddress | null {
  if (typeof text !== "string") return null;
  const family = strictFamily(text);
  if (family === 0) return null;
  const addr = ipaddr.parse(family === 6 ? hexTail(text) : text);
  const value = toBigInt(addr.toByteArray());
  const v4Mapped = addr instanceof ipaddr.IPv6 && addr.isIPv4MappedAddress();
  return { family, value, text: formatIp(family, value), v4Mapped };
}

/** Canonical text of an address (IPv4 dotted quad, IPv6 RFC 5952, v4-mapped IPv6 as IPv4), or the input when it is not one. */
export function canonicalIp(text: string): string {
  const ip = parseIp(text);
  if (!ip) return text;
  if (ip.v4Mapped) return [24, 16, 8, 0].map((s) => Number((ip.value >> BigInt(s)) & 0xffn)).join(".");
  return ip.text;
}

/** Whether `text` is an IP address as PostgreSQL's inet stores it and people write it (no prefix, no zone). */
/**
 * An IPv4 address as written above (four decimal octets, no leading zeros) as its unsigned 32-bit number, or -1 for
 * any other text (IPv6, an IPv4-mapped IPv6 address, garbage). No allocation, no regex: for per-record hot paths.
 */
export function ipv4Number(text: string): number {
  let n = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1;
      n = n * 256 + part;
      part = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? n * 256 + part : -1;
}

export function isIpAddress(text: unknown): text is string {
  return typeof text === "string" && strictFamily(text) !== 0;
}

/** 4, 6, or 0 when `text` is not an address (node:net's isIP() without zone ids). */
export function ipFamily(text: unknown): IpFamily | 0 {
  return typeof text === "string" ? strictFamily(text) : 0;
}

/** Canonical text of an address given as an unsigned integer (the dotted quad, or RFC 5952). */
export function formatIp(family: IpFamily, value: bigint): string {
  const addr = ipaddr.fromByteArray(toBytes(family, value));
  return addr instanceof ipaddr.IPv6 ? addr.toRFC5952String() : addr.toString();
}

/**
 * The prefix `text` names ("10.1.2.0/24", "2001:db8::/32", or a bare address for one host), with
 * its host bits cleared ("10.1.2.3/24" → 10.1.2.0/24); null when it is not a prefix.
 */
export function parseCidr(text: unknown): IpPrefix | null {
  if (typeof text !== "string") return null;
  const trimmed = text.trim();
  const slash = trimmed.indexOf("/");
  const addrText = slash < 0 ? trimmed : trimmed.slice(0, slash);
  const lengthText = slash < 0 ? null : trimmed.slice(slash + 1);
  const addr = parseIp(addrText);
  if (!addr) return null;
  const bits = ADDRESS_BITS[addr.family];
  if (lengthText !== null && !PREFIX_LENGTH.test(lengthText)) return null;
  const prefix = lengthText === null ? bits : Number(lengthText);
  if (prefix > bits) return null;
  const { start, end } = cidrRange(`${addr.text}/${prefix}`);
  return { family: addr.family, prefix, network: start, last: end, size: end - start + 1n, text: `${formatIp(addr.family, start)}/${prefix}` };
}

/** Whether the prefix holds the address (same family, inside the range). */
export function prefixContains(range: IpPrefix, address: IpAddress): boolean {
  return range.family === address.family && address.value >= range.network && address.value <= range.last;
}
