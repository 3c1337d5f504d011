import type snmp from "net-snmp";
import type { SystemFacts } from "../../poller/types.js";
import { SYS } from "../oids.js";
import { toNumber, toText } from "../session.js";

/**
 * The system group is read as non-repeaters of the first GetBulk (or one GetNext in SNMPv1):
 * GetNext of the object's OID without ".0" answers its instance, so the first exchange both
 * probes the agent and reads the facts, in the same PDU as the first rows of the tables.
 */
export const SYSTEM_NEXT = [SYS.descr, SYS.objectId, SYS.upTime, SYS.name].map((oid) => oid.slice(0, -2));

const EXPECTED = [SYS.descr, SYS.objectId, SYS.upTime, SYS.name];

/** Facts from the answers to SYSTEM_NEXT (an answer for another OID means the object is missing). */
export function readSystem(first: (snmp.Varbind | null)[]): SystemFacts {
  const at = (i: number) => (first[i] && first[i].oid === EXPECTED[i] ? first[i] : null);
  const uptime = toNumber(at(2));
  return {
    sys_descr: toText(at(0)),
    sys_object_id: toText(at(1)),
    sys_name: toText(at(3)),
    uptime_ticks: uptime !== null && Number.isInteger(uptime) && uptime >= 0 ? uptime : null,
  };
}
