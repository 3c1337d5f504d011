/**
 * snmp_trap_udp, re-encoded (verbatim: false): a received notification sent again as an SNMPv2c trap with the
 * destination's community, its varbinds converted back to their SNMP types, and `snmpTrapAddress.0` (RFC 3584)
 * added with the address it came from, so the original source survives the relay. Sent with net-snmp.
 */
import { isIP } from "node:net";
import snmp from "net-snmp";
import type { Inbound, Varbind } from "../../events/contract.js";
import type { DestinationCounters } from "../lib/types.js";
import { connectionFailed, failed, type SenderTarget } from "./senders.js";

const OID_SNMP_TRAP_ADDRESS = "1.3.6.1.6.3.18.1.3.0";

/** A text-friendly varbind (the events plugin's form) back to a net-snmp varbind; null when its type cannot be sent. */
export function toSnmpVarbind(v: Varbind): snmp.Varbind | null {
  const T = snmp.ObjectType;
  const text = v.value === null ? null : String(v.value);
  const hex = (s: string) => (/^0x([0-9a-f]{2})*$/i.test(s) ? Buffer.from(s.slice(2), "hex") : null);
  switch (v.type) {
    case "Integer":
      return { oid: v.oid, type: T.Integer, value: Number(v.value) };
    case "Counter32":
      return { oid: v.oid, type: T.Counter32, value: Number(v.value) };
    case "Gauge32":
      return { oid: v.oid, type: T.Gauge32, value: Number(v.value) };
    case "TimeTicks":
      return { oid: v.oid, type: T.TimeTicks, value: Number(v.value) };
    case "Counter64": {
      const n = BigInt(text ?? "0");
      const b = Buffer.alloc(8);
      b.writeBigUInt64BE(BigInt.asUintN(64, n));
      return { oid: v.oid, type: T.Counter64, value: b };
    }
    case "OctetString":
      // The events plugin shows binary octets as 0x<hex>: send those bytes back.
      return { oid: v.oid, type: T.OctetString, value: (text && hex(text)) ?? text ?? "" };
    case "OID":
      return text ? { oid: v.oid, type: T.OID, value: text } : null;
    case "IpAddress":
      return text && isIP(text) === 4 ? { oid: v.oid, type: T.IpAddress, value: text } : null;
    case "Opaque": {
      const b = text ? hex(text) : null;
      return b ? { oid: v.oid, type: T.Opaque, value: b } : null;
    }
    case "Null":
      return { oid: v.oid, type: T.Null, value: null };
    default:
      return null;
  }
}

export class TrapReencoder {
  private readonly session: snmp.Session;
  private closed = false;

  constructor(
    target: SenderTarget,
    community: string,
    private readonly counters: DestinationCounters,
  ) {
    const host = target.host.startsWith("[") ? target.host.slice(1, -1) : target.host;
    this.session = snmp.createSession(host, community, {
      version: snmp.Version2c,
      trapPort: target.port,
      transport: isIP(host) === 6 ? "udp6" : "udp4",
    });
    this.session.on("error", (err: unknown) => connectionFailed(counters, err));
    counters.connection = "ready";
  }

  send(r: Inbound): void {
    if (this.closed) return;
    const trap = r.trap;
    if (!trap) {
      // A datagram that did not decode as a notification cannot be re-encoded (verbatim relays it).
      failed(this.counters, Object.assign(new Error("not a notification"), { code: "unencodable" }));
      return;
    }
    const varbinds = trap.varbinds.map(toSnmpVarbind).filter((v): v is snmp.Varbind => v !== null);
    if (isIP(r.source_ip) === 4 && !trap.varbinds.some((v) => v.oid === OID_SNMP_TRAP_ADDRESS)) {
      varbinds.push({ oid: OID_SNMP_TRAP_ADDRESS, type: snmp.ObjectType.IpAddress, value: r.source_ip });
    }
    const options = trap.uptime === null ? {} : { upTime: trap.uptime };
    this.session.trap(trap.trap_oid, varbinds, options, (err: Error | null) => {
      if (err) failed(this.counters, err);
      else this.counters.forwarded++;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.session.close();
  }
}
