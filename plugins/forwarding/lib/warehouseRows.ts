/**
 * The rows a `warehouse` destination streams, one table per stream (documented in the README): flat JSON with
 * snake_case columns, times as RFC 3339 text. A trap's community is never in a row (it is a secret).
 */
import type { Inbound } from "../../events/contract.js";
import type { FlowRecord, ReceivedDatagram } from "../../flows/contract.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A syslog message or a trap as one row. */
export function eventRow(r: Inbound): Record<string, unknown> {
  const base = { received_at: iso(r.received_at_ms), source_ip: r.source_ip, listener: r.listener, transport: r.transport, malformed: r.malformed };
  if (r.kind === "trap") {
    const t = r.trap;
    return {
      ...base,
      version: t?.version ?? null,
      pdu: t?.pdu ?? null,
      user: t?.user ?? null,
      trap_oid: t?.trap_oid ?? null,
      uptime: t?.uptime ?? null,
      varbinds: t ? JSON.stringify(t.varbinds) : null,
      raw: r.raw,
    };
  }
  const s = r.syslog;
  return {
    ...base,
    format: s?.format ?? null,
    facility: s?.facility ?? null,
    severity: s?.severity ?? null,
    timestamp: s?.timestamp ?? null,
    hostname: s?.hostname ?? null,
    app_name: s?.app_name ?? null,
    procid: s?.procid ?? null,
    msgid: s?.msgid ?? null,
    structured_data: s && s.structured_data.length > 0 ? JSON.stringify(s.structured_data) : null,
    message: s ? s.message : r.raw,
  };
}

/** One flow record as a row. */
export function flowRow(d: ReceivedDatagram, rec: FlowRecord): Record<string, unknown> {
  return {
    received_at: iso(d.received_at_ms),
    exporter: d.exporter,
    version: rec.version,
    src_addr: rec.src || null,
    dst_addr: rec.dst || null,
    proto: rec.proto,
    src_port: rec.src_port,
    dst_port: rec.dst_port,
    src_as: rec.src_as,
    dst_as: rec.dst_as,
    bytes: rec.bytes,
    packets: rec.packets,
    sampling: rec.sampling,
    first_at: iso(rec.first_ms),
    last_at: iso(rec.last_ms),
    in_if: rec.in_if,
    out_if: rec.out_if,
    tcp_flags: rec.tcp_flags,
  };
}
