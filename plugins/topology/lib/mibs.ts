/**
 * LLDP-MIB and CISCO-CDP-MIB as walked from an agent, turned into what a node says of itself and the neighbours it
 * sees. Pure: the input is the var-binds of the walked tables (OID → value), so tests and the bench feed it directly.
 */
import { canonicalIp } from "../../../core/index.js";

/** A var-bind value as net-snmp gives it: OCTET STRING as a Buffer, integers as numbers, OIDs and addresses as text. */
export type RawValue = Buffer | number | bigint | string | null;

/** Var-binds of one walk, by full OID (no leading dot). */
export type RawWalk = Map<string, RawValue>;

export const OID = {
  lldpLocChassisIdSubtype: "1.0.8802.1.1.2.1.3.1.0",
  lldpLocChassisId: "1.0.8802.1.1.2.1.3.2.0",
  lldpLocSysName: "1.0.8802.1.1.2.1.3.3.0",
  sysName: "1.3.6.1.2.1.1.5.0",
  /** lldpLocPortEntry: .2 PortIdSubtype, .3 PortId, .4 PortDesc; index lldpLocPortNum. */
  lldpLocPortEntry: "1.0.8802.1.1.2.1.3.7.1",
  /** lldpRemEntry: .4 ChassisIdSubtype, .5 ChassisId, .6 PortIdSubtype, .7 PortId, .8 PortDesc, .9 SysName; index TimeMark.LocalPortNum.Index. */
  lldpRemEntry: "1.0.8802.1.1.2.1.4.1.1",
  /** lldpRemManAddrEntry: index TimeMark.LocalPortNum.Index.AddrSubtype.AddrLen.Addr…; column .3 IfSubtype. */
  lldpRemManAddrEntry: "1.0.8802.1.1.2.1.4.2.1",
  /** cdpCacheEntry: .3 AddressType, .4 Address, .6 DeviceId, .7 DevicePort, .8 Platform; index ifIndex.DeviceIndex. */
  cdpCacheEntry: "1.3.6.1.4.1.9.9.23.1.2.1.1",
  ifDescr: "1.3.6.1.2.1.2.2.1.2",
  ifName: "1.3.6.1.2.1.31.1.1.1.1",
} as const;

/** The scalars read with GET, and the subtrees walked, for one node. */
export const SCALARS = [OID.lldpLocChassisIdSubtype, OID.lldpLocChassisId, OID.lldpLocSysName, OID.sysName];
export const SUBTREES = [OID.lldpLocPortEntry, OID.lldpRemEntry, OID.lldpRemManAddrEntry, OID.cdpCacheEntry, OID.ifDescr, OID.ifName];

export type Protocol = "lldp" | "cdp";

/** One neighbour a node reports on one of its ports. */
export interface Observation {
  protocol: Protocol;
  /** The local port: lower-cased name as the protocol gives it (LLDP port id, CDP interface name), the ifIndex and a name for people. */
  localPortKey: string;
  localIfindex: number | null;
  localPort: string | null;
  /** What identifies the neighbour within the protocol: its chassis id (LLDP) or device id (CDP), lower-cased. */
  remoteKey: string;
  chassisId: string | null;
  sysName: string | null;
  /** The neighbour's port, lower-cased as a key and as given. */
  portKey: string | null;
  port: string | null;
  mgmtAddresses: string[];
  platform: string | null;
}

export interface WalkedNode {
  /** lldpLocChassisId rendered and lower-cased; null without LLDP. */
  chassisKey: string | null;
  /** lldpLocSysName, else sysName. */
  sysName: string | null;
  observations: Observation[];
}

const hex = (b: Buffer) => [...b].map((x) => x.toString(16).padStart(2, "0")).join(":");

function trimNul(b: Buffer): Buffer {
  let end = b.length;
  while (end > 0 && b[end - 1] === 0) end--;
  return b.subarray(0, end);
}

/** Printable ASCII (what a name is) as text; anything else as colon-separated hex. */
export function renderOctets(v: RawValue): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  const b = trimNul(v);
  if (b.length === 0) return null;
  return b.every((x) => x >= 0x20 && x < 0x7f) ? b.toString("latin1") : hex(b);
}

function asInt(v: RawValue): number | null {
  if (typeof v === "number") return Number.isInteger(v) ? v : null;
  if (typeof v === "bigint") return Number(v);
  return null;
}

function ipv4(b: Buffer): string | null {
  return b.length === 4 ? [...b].join(".") : null;
}

function ipv6(b: Buffer): string | null {
  if (b.length !== 16) return null;
  const parts: string[] = [];
  for (let i = 0; i < 16; i += 2) parts.push(b.readUInt16BE(i).toString(16));
  return canonicalIp(parts.join(":"));
}

/**
 * An LLDP chassis or port id by its subtype: MAC addresses (chassis 4, port 3) as hex, network addresses (chassis 5,
 * port 4: an IANA family byte, then the address) as an address, names as text when printable.
 */
export function renderId(subtype: number | null, v: RawValue, macSubtype: number, addrSubtype: number): string | null {
  if (!Buffer.isBuffer(v)) return renderOctets(v);
  if (subtype === macSubtype) return v.length > 0 ? hex(v) : null;
  if (subtype === addrSubtype && v.length > 1) {
    const a = v[0] === 1 ? ipv4(v.subarray(1)) : v[0] === 2 ? ipv6(v.subarray(1)) : null;
    if (a) return a;
  }
  return renderOctets(v);
}

const key = (s: string | null): string | null => {
  const t = s?.trim().toLowerCase();
  return t ? t : null;
};

/** Rows of a table under `entry`: column number → row index (the OID suffix after the column) → value. */
function columns(raw: RawWalk, entry: string): Map<number, Map<string, RawValue>> {
  const out = new Map<number, Map<string, RawValue>>();
  const prefix = `${entry}.`;
  for (const [oid, value] of raw) {
    if (!oid.startsWith(prefix)) continue;
    const rest = oid.slice(prefix.length);
    const dot = rest.indexOf(".");
    if (dot <= 0) continue;
    const col = Number(rest.slice(0, dot));
    let rows = out.get(col);
    if (!rows) out.set(col, (rows = new Map()));
    rows.set(rest.slice(dot + 1), value);
  }
  return out;
}

function column(raw: RawWalk, col: string): Map<string, RawValue> {
  const out = new Map<string, RawValue>();
  const prefix = `${col}.`;
  for (const [oid, value] of raw) if (oid.startsWith(prefix)) out.set(oid.slice(prefix.length), value);
  return out;
}

/** The management address in an lldpRemManAddrTable index suffix (AddrSubtype.Len.octets…), as an address. */
export function manAddrOfIndex(parts: number[]): string | null {
  const [subtype, len, ...octets] = parts;
  if (len !== octets.length || octets.some((o) => !(o >= 0 && o <= 255))) return null;
  const b = Buffer.from(octets);
  return subtype === 1 ? ipv4(b) : subtype === 2 ? ipv6(b) : null;
}

/** Turns the var-binds of one node's walk into its identity and its neighbours. */
export function parseWalk(raw: RawWalk): WalkedNode {
  const ifDescr = column(raw, OID.ifDescr);
  const ifName = column(raw, OID.ifName);
  // ifIndex by any of its names, lower-cased (a port id or description naming an interface).
  const ifByName = new Map<string, number>();
  for (const [idx, v] of [...ifDescr, ...ifName]) {
    const k = key(renderOctets(v));
    if (k && !ifByName.has(k)) ifByName.set(k, Number(idx));
  }
  const nameOf = (ifindex: number | null) =>
    ifindex === null ? null : (renderOctets(ifName.get(String(ifindex)) ?? null) ?? renderOctets(ifDescr.get(String(ifindex)) ?? null));

  const observations: Observation[] = [];

  // LLDP: local ports by lldpLocPortNum.
  const loc = columns(raw, OID.lldpLocPortEntry);
  const localPort = (portNum: string) => {
    const id = renderId(asInt(loc.get(2)?.get(portNum) ?? null), loc.get(3)?.get(portNum) ?? null, 3, 4);
    const descr = renderOctets(loc.get(4)?.get(portNum) ?? null);
    const byName = (s: string | null) => (s ? ifByName.get(s.toLowerCase()) : undefined);
    const ifindex: number | null = byName(id) ?? byName(descr) ?? (/^\d+$/.test(portNum) ? Number(portNum) : null);
    return { key: key(id) ?? key(descr) ?? `port ${portNum}`, ifindex, name: nameOf(ifindex) ?? id ?? descr };
  };

  const man = new Map<string, string[]>();
  for (const idx of columns(raw, OID.lldpRemManAddrEntry).get(3)?.keys() ?? []) {
    const parts = idx.split(".").map(Number);
    const addr = manAddrOfIndex(parts.slice(3));
    if (!addr) continue;
    const row = parts.slice(0, 3).join(".");
    man.set(row, [...(man.get(row) ?? []), addr]);
  }

  const rem = columns(raw, OID.lldpRemEntry);
  const remRows = new Set<string>([...(rem.get(5)?.keys() ?? []), ...(rem.get(9)?.keys() ?? [])]);
  for (const row of remRows) {
    const [, portNum] = row.split(".");
    if (portNum === undefined) continue;
    const chassisId = renderId(asInt(rem.get(4)?.get(row) ?? null), rem.get(5)?.get(row) ?? null, 4, 5);
    const sysName = renderOctets(rem.get(9)?.get(row) ?? null);
    const remoteKey = key(chassisId) ?? key(sysName);
    if (!remoteKey) continue;
    const portId = renderId(asInt(rem.get(6)?.get(row) ?? null), rem.get(7)?.get(row) ?? null, 3, 4);
    const portDescr = renderOctets(rem.get(8)?.get(row) ?? null);
    const lp = localPort(portNum);
    observations.push({
      protocol: "lldp",
      localPortKey: lp.key,
      localIfindex: lp.ifindex,
      localPort: lp.name,
      remoteKey,
      chassisId,
      sysName,
      portKey: key(portId) ?? key(portDescr),
      port: portId ?? portDescr,
      mgmtAddresses: man.get(row) ?? [],
      platform: null,
    });
  }

  // CDP: rows by ifIndex.deviceIndex.
  const cdp = columns(raw, OID.cdpCacheEntry);
  for (const [row, dev] of cdp.get(6) ?? []) {
    const deviceId = renderOctets(dev);
    const remoteKey = key(deviceId);
    if (!remoteKey) continue;
    const ifindex = Number(row.split(".")[0]);
    const addrType = asInt(cdp.get(3)?.get(row) ?? null);
    const addr = cdp.get(4)?.get(row) ?? null;
    const mgmt = addrType === 1 && Buffer.isBuffer(addr) ? ipv4(addr) : addrType === 20 && Buffer.isBuffer(addr) ? ipv6(addr) : null;
    const port = renderOctets(cdp.get(7)?.get(row) ?? null);
    const localName = renderOctets(ifDescr.get(String(ifindex)) ?? null) ?? renderOctets(ifName.get(String(ifindex)) ?? null);
    observations.push({
      protocol: "cdp",
      localPortKey: key(localName) ?? `ifindex ${ifindex}`,
      localIfindex: Number.isInteger(ifindex) ? ifindex : null,
      localPort: nameOf(ifindex) ?? localName,
      remoteKey,
      chassisId: null,
      sysName: deviceId,
      portKey: key(port),
      port,
      mgmtAddresses: mgmt ? [mgmt] : [],
      platform: renderOctets(cdp.get(8)?.get(row) ?? null),
    });
  }

  const chassis = renderId(asInt(raw.get(OID.lldpLocChassisIdSubtype) ?? null), raw.get(OID.lldpLocChassisId) ?? null, 4, 5);
  return {
    chassisKey: key(chassis),
    sysName: renderOctets(raw.get(OID.lldpLocSysName) ?? null) ?? renderOctets(raw.get(OID.sysName) ?? null),
    observations,
  };
}
