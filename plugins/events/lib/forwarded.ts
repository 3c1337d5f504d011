import { isIpAddress } from "../../../core/index.js";
import { storableJson } from "./storable.js";
import { EVENT_KINDS, type Inbound, type SdElement, type SyslogMessage, type TrapMessage, type Varbind } from "./types.js";

/** A forwarded record older or newer than this (a poller with a wrong clock) takes the core's time instead. */
const CLOCK_SKEW_MS = 86_400_000;

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const int = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) ? v : null);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The varbinds as the receivers make them, or null when any entry is not one (the record is then not a trap). */
function varbindsOf(v: unknown): Varbind[] | null {
  if (!Array.isArray(v)) return null;
  const out: Varbind[] = [];
  for (const b of v) {
    if (!isObject(b) || typeof b.oid !== "string" || typeof b.type !== "string") return null;
    const value = b.value;
    if (value !== null && typeof value !== "string" && !(typeof value === "number" && Number.isFinite(value))) return null;
    out.push({ oid: b.oid, type: b.type, value });
  }
  return out;
}

/** RFC 5424 structured data as the parser makes it; elements or params of another shape are left out. */
function structuredDataOf(v: unknown): SdElement[] {
  if (!Array.isArray(v)) return [];
  const out: SdElement[] = [];
  for (const e of v) {
    if (!isObject(e) || typeof e.id !== "string" || !Array.isArray(e.params)) continue;
    const params = e.params.filter((p): p is [string, string] => Array.isArray(p) && p.length === 2 && typeof p[0] === "string" && typeof p[1] === "string");
    out.push({ id: e.id, params });
  }
  return out;
}

function ciscoOf(v: unknown): SyslogMessage["cisco"] {
  if (!isObject(v) || typeof v.facility !== "string" || typeof v.mnemonic !== "string") return null;
  const severity = int(v.severity);
  if (severity === null || severity < 0 || severity > 7) return null;
  return { seq: int(v.seq), facility: v.facility, severity, mnemonic: v.mnemonic };
}

function v1Of(v: unknown): TrapMessage["v1"] {
  if (!isObject(v) || typeof v.agent_addr !== "string" || typeof v.enterprise !== "string") return null;
  const generic = int(v.generic);
  const specific = int(v.specific);
  return generic === null || specific === null ? null : { agent_addr: v.agent_addr, enterprise: v.enterprise, generic, specific };
}

/**
 * One record a remote poller forwarded (POST /events/forwarded), checked and made storable; null when it is not a
 * receiver record at all. The poller is trusted as far as its token goes (an admin's), but its bytes are not.
 */
export function forwardedInbound(x: unknown, pollerId: string, now: number, pool?: string): Inbound | null {
  const r = storableJson(x) as Record<string, unknown> | null;
  if (!r || typeof r !== "object" || Array.isArray(r)) return null;
  const kind = r.kind;
  if (!(EVENT_KINDS as readonly unknown[]).includes(kind)) return null;
  const transport = r.transport === "udp" || r.transport === "tcp" || r.transport === "tls" ? r.transport : null;
  const source = str(r.source_ip);
  if (!transport || !source || !isIpAddress(source)) return null;
  const at = typeof r.received_at_ms === "number" && Math.abs(r.received_at_ms - now) < CLOCK_SKEW_MS ? Math.trunc(r.received_at_ms) : now;
  const s = r.syslog;
  const t = r.trap;
  let syslog: SyslogMessage | null = null;
  let trap: TrapMessage | null = null;
  const varbinds = isObject(t) ? varbindsOf(t.varbinds) : null;
  if (kind === "syslog" && isObject(s) && typeof s.message === "string") {
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
      structured_data: structuredDataOf(s.structured_data),
      message: s.message,
      cisco: ciscoOf(s.cisco),
    };
  } else if (kind === "trap" && isObject(t) && typeof t.trap_oid === "string" && varbinds) {
    trap = {
      version: t.version === "v1" || t.version === "v3" ? t.version : "v2c",
      pdu: t.pdu === "inform" ? "inform" : "trap",
      community: null,
      user: str(t.user),
      trap_oid: t.trap_oid,
      uptime: int(t.uptime),
      v1: v1Of(t.v1),
      varbinds,
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
    pool: pool ?? null,
  };
}
