import { isIpAddress } from "../../../core/index.js";
import { storableJson } from "./storable.js";
import { EVENT_KINDS, type Inbound, type SyslogMessage, type TrapMessage } from "./types.js";

/** A forwarded record older or newer than this (a poller with a wrong clock) takes the core's time instead. */
const CLOCK_SKEW_MS = 86_400_000;

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const int = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) ? v : null);

/**
 * One record a remote poller forwarded (POST /events/forwarded), checked and made storable; null when it is not a
 * receiver record at all. The poller is trusted as far as its token goes (an admin's), but its bytes are not.
 */
export function forwardedInbound(x: unknown, pollerId: string, now: number): Inbound | null {
  const r = storableJson(x) as Record<string, unknown> | null;
  if (!r || typeof r !== "object" || Array.isArray(r)) return null;
  const kind = r.kind;
  if (!(EVENT_KINDS as readonly unknown[]).includes(kind)) return null;
  const transport = r.transport === "udp" || r.transport === "tcp" || r.transport === "tls" ? r.transport : null;
  const source = str(r.source_ip);
  if (!transport || !source || !isIpAddress(source)) return null;
  const at = typeof r.received_at_ms === "number" && Math.abs(r.received_at_ms - now) < CLOCK_SKEW_MS ? Math.trunc(r.received_at_ms) : now;
  const s = r.syslog as Record<string, unknown> | null;
  const t = r.trap as Record<string, unknown> | null;
  let syslog: SyslogMessage | null = null;
  let trap: TrapMessage | null = null;
  if (kind === "syslog" && s && typeof s === "object" && typeof s.message === "string") {
    const sev = int(s.severity);
    const fac = int(s.facility);
    syslog = {
      format: s.format === "rfc5424" || s.format === "rfc3164" || s.format === "cisco" ? s.format : "raw",
      facility: fac !== null && fac >= 0 && fac <= 23 ? fac : null,
      severity: sev !== null && sev >= 0 && sev <= 7 ? sev : null,
      timestamp: str(s.timestamp),
      hostname: str(s.hostname),
      app_name: str(s.app_name),
      procid: str(s.procid),
      msgid: str(s.msgid),
      structured_data: Array.isArray(s.structured_data) ? (s.structured_data as SyslogMessage["structured_data"]) : [],
      message: s.message,
      cisco: s.cisco && typeof s.cisco === "object" ? (s.cisco as SyslogMessage["cisco"]) : null,
    };
  } else if (kind === "trap" && t && typeof t === "object" && typeof t.trap_oid === "string" && Array.isArray(t.varbinds)) {
    trap = {
      version: t.version === "v1" || t.version === "v3" ? t.version : "v2c",
      pdu: t.pdu === "inform" ? "inform" : "trap",
      community: null,
      user: str(t.user),
      trap_oid: t.trap_oid,
      uptime: int(t.uptime),
      v1: t.v1 && typeof t.v1 === "object" ? (t.v1 as TrapMessage["v1"]) : null,
      varbinds: t.varbinds as TrapMessage["varbinds"],
    };
  }
  const raw = str(r.raw);
  if (!syslog && !trap && raw === null) return null;
  return {
    kind: kind as Inbound["kind"],
    transport,
    listener: `poller:${pollerId}/${str(r.listener) ?? kind}`.slice(0, 200),
    source_ip: source,
    received_at_ms: at,
    syslog,
    trap,
    raw,
    malformed: !syslog && !trap,
  };
}
