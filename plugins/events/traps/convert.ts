/**
 * net-snmp's decoded notification PDUs turned into `TrapMessage`s: SNMPv2 form for every version
 * (v1 traps mapped per RFC 3584 §3.1) and text-friendly varbind values.
 */
import type { TrapMessage, Varbind } from "../lib/types.js";

/** A varbind as net-snmp decodes it (type is the BER tag). */
export interface RawVarbind {
  oid: string;
  type: number;
  value: unknown;
}

/** The fields of net-snmp's Trap / TrapV2 / InformRequest PDU objects that we read. */
export interface RawPdu {
  type: number;
  varbinds: RawVarbind[];
  /** Set (with `includeAuthentication`) for v1/v2c. */
  community?: string;
  /** Set (with `includeAuthentication`) for v3. */
  user?: string;
  enterprise?: string;
  agentAddr?: string;
  generic?: number;
  specific?: number;
  upTime?: number;
}

export const PDU_TRAP_V1 = 164;
export const PDU_INFORM = 166;
export const PDU_TRAP_V2 = 167;

export const OID_SYS_UPTIME = "1.3.6.1.2.1.1.3.0";
export const OID_SNMP_TRAP_OID = "1.3.6.1.6.3.1.1.4.1.0";
export const OID_SNMP_TRAP_ENTERPRISE = "1.3.6.1.6.3.1.1.4.3.0";
export const OID_SNMP_TRAP_ADDRESS = "1.3.6.1.6.3.18.1.3.0";
const GENERIC_TRAPS = "1.3.6.1.6.3.1.1.5";

const TYPE_NAMES: Record<number, string> = {
  1: "Boolean",
  2: "Integer",
  3: "BitString",
  4: "OctetString",
  5: "Null",
  6: "OID",
  64: "IpAddress",
  65: "Counter32",
  66: "Gauge32",
  67: "TimeTicks",
  68: "Opaque",
  70: "Counter64",
  128: "NoSuchObject",
  129: "NoSuchInstance",
  130: "EndOfMibView",
};

/** Why a decoded PDU is not a usable notification. */
export class MalformedTrap extends Error {}

const utf8 = new TextDecoder("utf-8", { fatal: true });
// C0 controls other than TAB/LF/CR, DEL and C1 controls make a string binary (NUL among them).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** Octets as UTF-8 text when they are printable, else `0x<hex>`. Never yields NULs or lone surrogates. */
export function octetsText(b: Buffer): string {
  let ascii = true;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c < 0x20 || c > 0x7e) {
      if (c === 0x09 || c === 0x0a || c === 0x0d) continue;
      ascii = false;
      break;
    }
  }
  if (ascii) return b.toString("latin1");
  try {
    const s = utf8.decode(b);
    if (!CONTROL.test(s)) return s;
  } catch {
    // not UTF-8: hex below
  }
  return "0x" + b.toString("hex");
}

/** Any printable-or-hex text, for values net-snmp hands as strings of unknown content. */
function safeText(s: string): string {
  return CONTROL.test(s) || /[\ud800-\udfff]/.test(s) ? octetsText(Buffer.from(s, "utf8")) : s;
}

/** An unsigned big-endian integer of any length as decimal text (Counter64 arrives as a Buffer). */
function unsignedDecimal(b: Buffer): string {
  if (b.length <= 6) return String(b.length ? b.readUIntBE(0, b.length) : 0);
  return BigInt("0x" + b.toString("hex")).toString();
}

/** One varbind in text-friendly form. */
export function convertVarbind(vb: RawVarbind): Varbind {
  const type = TYPE_NAMES[vb.type] ?? `Type${vb.type}`;
  const v = vb.value;
  let value: string | number | null;
  if (v === null || v === undefined) value = null;
  else if (typeof v === "number") value = v;
  else if (typeof v === "boolean") value = v ? "true" : "false";
  else if (Buffer.isBuffer(v)) value = vb.type === 70 ? unsignedDecimal(v) : vb.type === 4 ? octetsText(v) : "0x" + v.toString("hex");
  else value = safeText(String(v));
  return { oid: vb.oid, type, value };
}

/** Who sent it, as net-snmp reports it; the community is only for attribution and must never be stored. */
export interface Origin {
  version: "v1" | "v2c" | "v3";
  community: string | null;
  user: string | null;
}

/** A v1 Trap-PDU in SNMPv2 form (RFC 3584 §3.1). snmpTrapCommunity.0 is deliberately not appended: the community is a secret. */
function fromV1(pdu: RawPdu, origin: Origin): TrapMessage {
  const { enterprise, agentAddr, generic, specific } = pdu;
  if (typeof enterprise !== "string" || typeof agentAddr !== "string" || !Number.isInteger(generic) || !Number.isInteger(specific)) {
    throw new MalformedTrap("v1 trap without enterprise, agent-addr or trap numbers");
  }
  const g = generic as number;
  if (g < 0 || g > 6) throw new MalformedTrap(`v1 generic-trap ${g} out of range`);
  const trapOid = g === 6 ? `${enterprise}.0.${specific}` : `${GENERIC_TRAPS}.${g + 1}`;
  const varbinds = pdu.varbinds.map(convertVarbind);
  // Appended unless already present (RFC 3584 §3.1 (3)).
  if (!varbinds.some((v) => v.oid === OID_SNMP_TRAP_ADDRESS)) varbinds.push({ oid: OID_SNMP_TRAP_ADDRESS, type: "IpAddress", value: agentAddr });
  if (!varbinds.some((v) => v.oid === OID_SNMP_TRAP_ENTERPRISE)) varbinds.push({ oid: OID_SNMP_TRAP_ENTERPRISE, type: "OID", value: enterprise });
  return {
    version: "v1",
    pdu: "trap",
    community: origin.community,
    user: null,
    trap_oid: trapOid,
    uptime: typeof pdu.upTime === "number" ? pdu.upTime : null,
    v1: { agent_addr: agentAddr, enterprise, generic: g, specific: specific as number },
    varbinds,
  };
}

/** A v2c/v3 TrapV2 or Inform: sysUpTime.0 and snmpTrapOID.0 are taken out of the varbinds (snmpTrapOID.0 is required). */
function fromV2(pdu: RawPdu, origin: Origin): TrapMessage {
  let uptime: number | null = null;
  let trapOid: string | null = null;
  const varbinds: Varbind[] = [];
  for (const vb of pdu.varbinds) {
    if (trapOid === null && vb.oid === OID_SNMP_TRAP_OID) {
      if (vb.type !== 6 || typeof vb.value !== "string") throw new MalformedTrap("snmpTrapOID.0 is not an OID");
      trapOid = vb.value;
    } else if (uptime === null && vb.oid === OID_SYS_UPTIME && typeof vb.value === "number") {
      uptime = vb.value;
    } else {
      varbinds.push(convertVarbind(vb));
    }
  }
  if (trapOid === null) throw new MalformedTrap("notification without snmpTrapOID.0");
  return {
    version: origin.version,
    pdu: pdu.type === PDU_INFORM ? "inform" : "trap",
    community: origin.community,
    user: origin.user,
    trap_oid: trapOid,
    uptime,
    v1: null,
    varbinds,
  };
}

/** The TrapMessage for a decoded notification; throws MalformedTrap when the PDU does not fit the version or lacks snmpTrapOID.0. */
export function toTrapMessage(pdu: RawPdu, origin: Origin): TrapMessage {
  if (origin.version === "v1") {
    if (pdu.type !== PDU_TRAP_V1) throw new MalformedTrap("SNMPv1 message with an SNMPv2 PDU");
    return fromV1(pdu, origin);
  }
  if (pdu.type !== PDU_TRAP_V2 && pdu.type !== PDU_INFORM) throw new MalformedTrap(`${origin.version} message with PDU type ${pdu.type}`);
  return fromV2(pdu, origin);
}
