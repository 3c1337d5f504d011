import { isUuid, type ChannelFilter } from "../../../core/index.js";
import { EVENT_KINDS } from "../lib/types.js";
import type { EventView } from "../models/EventModels.js";

/**
 * The filter a subscriber of `events.live` sends with its subscribe: `{ kind?: ["syslog", "trap"], node_id?: uuid,
 * severity?: [0..7] }` (each optional; absent = everything its scope allows). Lists may also be one value.
 */
export const liveFilter: ChannelFilter = (params) => {
  if (params === null || typeof params !== "object" || Array.isArray(params)) return { ok: false, message: "filter must be an object." };
  const p = params as Record<string, unknown>;
  const unknown = Object.keys(p).filter((k) => !["kind", "node_id", "severity"].includes(k));
  if (unknown.length) return { ok: false, message: `filter takes kind, node_id and severity, not ${unknown[0].slice(0, 40)}.` };
  const list = (v: unknown) => (v === undefined ? null : Array.isArray(v) ? v : [v]);
  const kinds = list(p.kind);
  if (kinds && !kinds.every((k) => (EVENT_KINDS as readonly unknown[]).includes(k)))
    return { ok: false, message: `filter.kind: one or more of ${EVENT_KINDS.join(", ")}.` };
  const severities = list(p.severity);
  if (severities && !severities.every((s) => Number.isInteger(s) && (s as number) >= 0 && (s as number) <= 7)) {
    return { ok: false, message: "filter.severity: syslog severities 0 to 7." };
  }
  if (p.node_id !== undefined && !isUuid(p.node_id)) return { ok: false, message: "filter.node_id must be a uuid." };
  const node = typeof p.node_id === "string" ? p.node_id.toLowerCase() : null;
  return {
    ok: true,
    test: (item) => {
      const e = item as EventView;
      return (!kinds || kinds.includes(e.kind)) && (!node || e.node_id === node) && (!severities || (e.severity !== null && severities.includes(e.severity)));
    },
  };
};
