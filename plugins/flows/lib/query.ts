import { badRequest, isIpAddress } from "../../../core/index.js";

/** The spec's flow query (GET /flow/conversations and the views beside it), parsed; every value that does not parse is refused. */
export interface FlowQuery {
  fromSecs: number;
  toSecs: number;
  limit: number;
  protos: number[] | null;
  ports: number[] | null;
  peers: string[] | null;
  asns: number[] | null;
  /** Flows these exporters sent (the drill-down from a conversation to the devices that saw it); null = any. */
  exporters: string[] | null;
  dir: "src" | "dst";
}

/** Values one filter may carry (spec Limits: proto, port, peer, asn at most 8 each). */
export const MAX_FILTER_VALUES = 8;
export const DEFAULT_RANGE_SECS = 3600;

const invalid = (message: string) => badRequest("validation_failed", message);

function int64(name: string, v: string | undefined): number | null {
  if (v === undefined || v === "") return null;
  if (!/^-?\d{1,15}$/.test(v)) throw invalid(`${name} must be an integer (Unix seconds).`);
  return Number(v);
}

/** A comma-separated list of at most 8 values, each checked by `item` (which returns null when it does not parse). */
function list<T>(name: string, v: string | undefined, item: (s: string) => T | null, what: string): T[] | null {
  if (v === undefined || v === "") return null;
  const parts = v.split(",").map((s) => s.trim());
  if (parts.length > MAX_FILTER_VALUES) throw invalid(`${name} takes at most ${MAX_FILTER_VALUES} values.`);
  return [
    ...new Set(
      parts.map((p) => {
        const parsed = p === "" ? null : item(p);
        if (parsed === null) throw invalid(`${name}: ${JSON.stringify(p.slice(0, 40))} is not ${what}.`);
        return parsed;
      }),
    ),
  ];
}

const ranged = (max: number) => (s: string) => (/^\d{1,10}$/.test(s) && Number(s) <= max ? Number(s) : null);

/** Parses the query table of GET /flow/conversations (strings as received). */
export function parseFlowQuery(q: Record<string, string | undefined>, nowSecs = Math.floor(Date.now() / 1000)): FlowQuery {
  const to = int64("to", q.to) ?? nowSecs;
  const from = int64("from", q.from) ?? to - DEFAULT_RANGE_SECS;
  if (from > to) throw invalid("from is after to.");
  let limit = 100;
  if (q.limit !== undefined && q.limit !== "") {
    if (!/^-?\d{1,12}$/.test(q.limit)) throw invalid("limit must be an integer.");
    // Clamped, not refused (spec): 0 → 1, 5000 → 1000.
    limit = Math.min(1000, Math.max(1, Number(q.limit)));
  }
  const dir = q.dir === undefined || q.dir === "" ? "dst" : q.dir;
  if (dir !== "src" && dir !== "dst") throw invalid("dir must be src or dst.");
  return {
    fromSecs: from,
    toSecs: to,
    limit,
    protos: list("proto", q.proto, ranged(255), "an IP protocol number (0-255)"),
    ports: list("port", q.port, ranged(65535), "a port (0-65535)"),
    peers: list("peer", q.peer, (s) => (isIpAddress(s) ? s : null), "an IP address"),
    asns: list("asn", q.asn, ranged(4294967295), "an AS number (0 = unknown)"),
    exporters: list("exporter", q.exporter, (s) => (isIpAddress(s) ? s : null), "an IP address"),
    dir,
  };
}
