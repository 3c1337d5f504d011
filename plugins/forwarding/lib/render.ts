/**
 * What a syslog destination sends: the bytes as received (verbatim), or the message re-rendered from its parsed
 * fields as RFC 5424 — and, on TCP and TLS, the RFC 6587 octet-counting frame around either.
 */
import type { Inbound, SyslogMessage } from "../../events/contract.js";

const NIL = "-";
/** RFC 5424 §6: the header fields' lengths. */
const MAX = { hostname: 255, app_name: 48, procid: 128, msgid: 32, sdName: 32 };
/** user.notice: the PRI of a message that carried none we could read (RFC 5424 §6.2.1 has no default; 3164 uses 13). */
const DEFAULT_PRI = 13;

/** A header field: printable US-ASCII without spaces (33..126), cut at its length; empty or null = NILVALUE. */
function headerField(value: string | null, max: number): string {
  if (!value) return NIL;
  let out = "";
  for (let i = 0; i < value.length && out.length < max; i++) {
    const c = value.charCodeAt(i);
    out += c >= 33 && c <= 126 ? value[i] : "_";
  }
  return out || NIL;
}

/** An SD-NAME: printable US-ASCII except `=`, space, `]` and `"`. */
function sdName(value: string): string {
  let out = "";
  for (let i = 0; i < value.length && out.length < MAX.sdName; i++) {
    const c = value.charCodeAt(i);
    out += c >= 33 && c <= 126 && c !== 61 && c !== 93 && c !== 34 ? value[i] : "_";
  }
  return out || "_";
}

/** A PARAM-VALUE: `"`, `\` and `]` escaped with a backslash (RFC 5424 §6.3.3). */
const paramValue = (value: string) => value.replace(/["\\\]]/g, (c) => `\\${c}`);

function structuredData(m: SyslogMessage): string {
  if (!m.structured_data.length) return NIL;
  return m.structured_data.map((e) => `[${sdName(e.id)}${e.params.map(([k, v]) => ` ${sdName(k)}="${paramValue(v)}"`).join("")}]`).join("");
}

function pri(m: SyslogMessage | null): number {
  if (!m || m.facility === null || m.severity === null) return DEFAULT_PRI;
  return m.facility * 8 + m.severity;
}

/**
 * The record as an RFC 5424 line: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG`. The sender's
 * timestamp when it gave one, else the receive time; the sender's hostname, else the address it came from. A
 * record that did not parse is sent as the MSG of a user.notice line, its raw text unchanged.
 */
export function renderRfc5424(r: Inbound): string {
  const m = r.syslog;
  const timestamp = m?.timestamp ?? new Date(r.received_at_ms).toISOString();
  const hostname = headerField(m?.hostname ?? r.source_ip, MAX.hostname);
  const head = `<${pri(m)}>1 ${timestamp} ${hostname} ${headerField(m?.app_name ?? null, MAX.app_name)} ${headerField(m?.procid ?? null, MAX.procid)} ${headerField(m?.msgid ?? null, MAX.msgid)}`;
  const sd = m ? structuredData(m) : NIL;
  const msg = m ? m.message : (r.raw ?? "");
  return msg ? `${head} ${sd} ${msg}` : `${head} ${sd}`;
}

/** The payload of a syslog record for a destination: its original bytes when verbatim (and known), else RFC 5424. */
export function syslogPayload(r: Inbound, verbatim: boolean): Buffer {
  if (verbatim && r.bytes) return r.bytes;
  return Buffer.from(renderRfc5424(r), "utf8");
}

/** RFC 6587 octet counting: `LEN SP MSG`, LEN the decimal byte length of MSG. */
export function octetCounted(payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${payload.length} `, "ascii"), payload]);
}
