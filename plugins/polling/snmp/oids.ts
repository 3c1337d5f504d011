/**
 * Numeric OIDs the poller reads (Debian ships no IETF MIB files, and the poller needs none).
 * Column OIDs name a table column without an instance; a walk appends the row index.
 */

/** SNMPv2-MIB system group scalars. */
export const SYS = {
  descr: "1.3.6.1.2.1.1.1.0",
  objectId: "1.3.6.1.2.1.1.2.0",
  upTime: "1.3.6.1.2.1.1.3.0",
  name: "1.3.6.1.2.1.1.5.0",
} as const;

/** IF-MIB ifTable (1.3.6.1.2.1.2.2.1.x) and ifXTable (1.3.6.1.2.1.31.1.1.1.x) columns, by index ifIndex. */
export const IF = {
  descr: "1.3.6.1.2.1.2.2.1.2",
  speed: "1.3.6.1.2.1.2.2.1.5",
  operStatus: "1.3.6.1.2.1.2.2.1.8",
  inOctets: "1.3.6.1.2.1.2.2.1.10",
  inDiscards: "1.3.6.1.2.1.2.2.1.13",
  inErrors: "1.3.6.1.2.1.2.2.1.14",
  outOctets: "1.3.6.1.2.1.2.2.1.16",
  outDiscards: "1.3.6.1.2.1.2.2.1.19",
  outErrors: "1.3.6.1.2.1.2.2.1.20",
  name: "1.3.6.1.2.1.31.1.1.1.1",
  hcInOctets: "1.3.6.1.2.1.31.1.1.1.6",
  hcOutOctets: "1.3.6.1.2.1.31.1.1.1.10",
  highSpeed: "1.3.6.1.2.1.31.1.1.1.15",
  alias: "1.3.6.1.2.1.31.1.1.1.18",
} as const;

/** HOST-RESOURCES-MIB columns. */
export const HR = {
  /** hrProcessorLoad, by hrDeviceIndex: percent busy over the last minute. */
  processorLoad: "1.3.6.1.2.1.25.3.3.1.2",
  storageDescr: "1.3.6.1.2.1.25.2.3.1.3",
  storageAllocationUnits: "1.3.6.1.2.1.25.2.3.1.4",
  storageSize: "1.3.6.1.2.1.25.2.3.1.5",
  storageUsed: "1.3.6.1.2.1.25.2.3.1.6",
} as const;

/** ifOperStatus value for "up". */
export const IF_OPER_UP = 1;

/** A dotted OID: digits separated by single dots (no leading dot). */
export const DOTTED_OID = /^[0-9]+(\.[0-9]+)+$/;

/** Normalises an OID as users write it (a leading dot is dropped). */
export function normaliseOid(oid: string): string {
  return oid.startsWith(".") ? oid.slice(1) : oid;
}

/** Whether `oid` lies strictly under `prefix` (on component boundaries). */
export function isUnder(prefix: string, oid: string): boolean {
  return oid.length > prefix.length && oid.startsWith(prefix) && oid.charCodeAt(prefix.length) === 46; /* "." */
}

/** Compares two dotted OIDs component by component (negative when a precedes b). */
export function compareOids(a: string, b: string): number {
  const x = a.split(".");
  const y = b.split(".");
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = Number(x[i]) - Number(y[i]);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
