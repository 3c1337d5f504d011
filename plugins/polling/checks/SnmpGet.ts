import { isIpAddress } from "../../../core/index.js";
import type { SnmpCredential } from "../poller/types.js";
import { openSession, SnmpError, toNumber, toText } from "../snmp/session.js";

/** OIDs the checks read (numeric: Debian ships no IETF MIB files). */
export const SYSTEM_OIDS = {
  sysDescr: "1.3.6.1.2.1.1.1.0",
  sysObjectID: "1.3.6.1.2.1.1.2.0",
  sysUpTime: "1.3.6.1.2.1.1.3.0",
  sysName: "1.3.6.1.2.1.1.5.0",
} as const;

export interface SnmpGetOptions {
  port: number;
  timeoutMs: number;
  /** Resends after a timeout (each waits timeoutMs again). */
  retries: number;
}

export interface SnmpScalar {
  /** Strings and OIDs as text, numbers as their decimal text. */
  text: string | null;
  number: number | null;
}

export type SnmpGetOutcome = { ok: true; values: (SnmpScalar | null)[]; rtt_ms: number } | { ok: false; reason: string };

/**
 * One SNMP GET of a few scalars through the poller's session helper (snmp/session.ts). Never
 * throws: a timeout, a refused or unusable credential is `{ok: false, reason}` (no secret in it).
 */
export async function snmpGet(address: string, cred: SnmpCredential, oids: readonly string[], opts: SnmpGetOptions): Promise<SnmpGetOutcome> {
  if (!isIpAddress(address)) return { ok: false, reason: "not an IP address" };
  const started = performance.now();
  let session;
  try {
    session = openSession(address, opts.port, cred, { timeoutMs: opts.timeoutMs, retries: opts.retries });
  } catch (err) {
    return { ok: false, reason: err instanceof SnmpError ? err.failure : "error" };
  }
  try {
    const vbs = await session.get([...oids]);
    return { ok: true, values: vbs.map((vb) => (vb ? { text: toText(vb), number: toNumber(vb) } : null)), rtt_ms: performance.now() - started };
  } catch (err) {
    return { ok: false, reason: err instanceof SnmpError ? err.failure : "error" };
  } finally {
    session.close();
  }
}
