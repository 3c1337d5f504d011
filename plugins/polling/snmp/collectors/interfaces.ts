import type { InterfaceReading } from "../../poller/types.js";
import { IF, IF_OPER_UP } from "../oids.js";
import { type Column, toCounterString, toNumber, toText } from "../session.js";

/** IF-MIB columns walked on every poll (ifTable and ifXTable). */
export const IF_COLUMNS: string[] = [
  IF.descr,
  IF.speed,
  IF.operStatus,
  IF.inOctets,
  IF.inDiscards,
  IF.inErrors,
  IF.outOctets,
  IF.outDiscards,
  IF.outErrors,
  IF.name,
  IF.hcInOctets,
  IF.hcOutOctets,
  IF.highSpeed,
  IF.alias,
];

const IFINDEX = /^[1-9][0-9]{0,9}$/;
const INT32_MAX = 2147483647;

const nonEmpty = (s: string | null) => (s === null || s.trim() === "" ? null : s);

/**
 * One reading per ifIndex seen in any IF-MIB column. Octet counters are the 64-bit ifHC* ones
 * where the agent has them for that interface (counter_bits 64), else ifIn/OutOctets (32).
 * Speed: ifHighSpeed (Mbit/s) × 10^6 when it is above 0, else ifSpeed (bit/s).
 */
export function readInterfaces(columns: Map<string, Column>): InterfaceReading[] {
  const col = (oid: string) => columns.get(oid) ?? new Map();
  const indexes = new Set<number>();
  for (const oid of IF_COLUMNS) {
    for (const idx of col(oid).keys()) {
      if (IFINDEX.test(idx) && Number(idx) <= INT32_MAX) indexes.add(Number(idx));
    }
  }
  return [...indexes]
    .sort((a, b) => a - b)
    .map((ifindex) => {
      const key = String(ifindex);
      const v = (oid: string) => col(oid).get(key);
      const hcIn = toCounterString(v(IF.hcInOctets));
      const hcOut = toCounterString(v(IF.hcOutOctets));
      const hc = hcIn !== null || hcOut !== null;
      const highSpeed = toNumber(v(IF.highSpeed));
      const speed = toNumber(v(IF.speed));
      const oper = toNumber(v(IF.operStatus));
      return {
        ifindex,
        if_name: nonEmpty(toText(v(IF.name))) ?? nonEmpty(toText(v(IF.descr))),
        if_alias: nonEmpty(toText(v(IF.alias))),
        if_speed_bps: highSpeed !== null && highSpeed > 0 ? highSpeed * 1_000_000 : (speed ?? highSpeed),
        oper_up: oper === null ? null : oper === IF_OPER_UP,
        counter_bits: hc ? 64 : 32,
        counters: {
          in_octets: hc ? hcIn : toCounterString(v(IF.inOctets)),
          out_octets: hc ? hcOut : toCounterString(v(IF.outOctets)),
          in_errors: toCounterString(v(IF.inErrors)),
          out_errors: toCounterString(v(IF.outErrors)),
          in_discards: toCounterString(v(IF.inDiscards)),
          out_discards: toCounterString(v(IF.outDiscards)),
        },
      } satisfies InterfaceReading;
    });
}
