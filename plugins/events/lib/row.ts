import { timeOrderedUuid } from "../../../core/worker.js";
import type { EventRow, Inbound } from "./types.js";

/** The stored row of one received message. */
export function toRow(
  m: Inbound,
  node: { id: string; folder_path: readonly string[] } | null,
  sourceId: string | null,
  action: string,
  ruleId: string | null,
): EventRow {
  const s = m.syslog;
  const t = m.trap;
  let data: Record<string, unknown> | null = null;
  if (s) data = { format: s.format, timestamp: s.timestamp, procid: s.procid, structured_data: s.structured_data, cisco: s.cisco };
  else if (t) data = { version: t.version, pdu: t.pdu, user: t.user, uptime: t.uptime, varbinds: t.varbinds, v1: t.v1 };
  if (m.extra) data = { ...data, fields: m.extra };
  return {
    id: timeOrderedUuid(m.received_at_ms),
    received_at_ms: m.received_at_ms,
    kind: m.kind,
    transport: m.transport,
    listener: m.listener,
    source_ip: m.source_ip || null,
    source_id: sourceId,
    node_id: node?.id ?? null,
    folder_path: node?.folder_path ?? [],
    severity: s?.severity ?? null,
    facility: s?.facility ?? null,
    host: s?.hostname ?? null,
    app: s?.app_name ?? null,
    msgid: s?.msgid ?? null,
    message: s ? s.message : t ? t.trap_oid : (m.raw ?? ""),
    trap_oid: t?.trap_oid ?? null,
    data,
    raw: m.raw,
    malformed: m.malformed,
    action,
    rule_id: ruleId,
  };
}
