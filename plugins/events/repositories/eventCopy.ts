/**
 * Events in PostgreSQL's COPY text format: one line per event, the columns in EVENT_COPY_COLUMNS order. The ingest
 * workers build these lines where they parse (so the main thread never sees the event as an object); action and
 * rule_id come last, because they depend on the rules' windows, which live on the main thread (RuleEngine.apply):
 * a worker ends every line with UNMATCHED_TAIL, and the main thread replaces it on the lines whose rules did more.
 */
import { copyText } from "../../../core/worker.js";
import type { EventRow } from "../lib/types.js";

export const EVENT_COPY_COLUMNS = [
  "id",
  "received_at",
  "kind",
  "transport",
  "listener",
  "source_ip",
  "source_id",
  "node_id",
  "folder_path",
  "severity",
  "facility",
  "host",
  "app",
  "msgid",
  "message",
  "trap_oid",
  "data",
  "raw",
  "malformed",
  "action",
  "rule_id",
] as const;

/** The last two columns of an event nothing but counting matched (and the line's end). */
export const UNMATCHED_TAIL = "unmatched\t\\N\n";

const orNull = (s: string | null) => (s === null ? "\\N" : copyText(s));
const numOrNull = (n: number | null) => (n === null ? "\\N" : String(n));

/** The last received_at text made (events of one batch share their millisecond by the dozen). */
let isoMs = NaN;
let iso = "";

/** The line of an event up to its action (the caller appends `action\trule_id\n`, or UNMATCHED_TAIL). */
export function eventCopyHead(r: Omit<EventRow, "action" | "rule_id">): string {
  if (r.received_at_ms !== isoMs) {
    isoMs = r.received_at_ms;
    iso = new Date(isoMs).toISOString();
  }
  return (
    `${r.id}\t${iso}\t${r.kind}\t${r.transport}\t${copyText(r.listener)}\t${orNull(r.source_ip)}\t${r.source_id ?? "\\N"}\t${r.node_id ?? "\\N"}\t` +
    `{${r.folder_path.join(",")}}\t${numOrNull(r.severity)}\t${numOrNull(r.facility)}\t${orNull(r.host)}\t${orNull(r.app)}\t${orNull(r.msgid)}\t` +
    `${copyText(r.message)}\t${orNull(r.trap_oid)}\t${r.data === null ? "\\N" : copyText(JSON.stringify(r.data))}\t${orNull(r.raw)}\t${r.malformed ? "t" : "f"}\t`
  );
}

/** The whole line of an event. */
export function eventCopyLine(r: EventRow): string {
  return `${eventCopyHead(r)}${r.action}\t${r.rule_id ?? "\\N"}\n`;
}
