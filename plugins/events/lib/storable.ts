import { cleanText } from "../syslog/parse.js";

const MAX_DEPTH = 6;
const MAX_STRING = 65_536;

/** JSON with every string made storable (no NUL, no lone surrogate, bounded length) and nesting and sizes bounded. */
export function storableJson(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return cleanText(value.length > MAX_STRING ? value.slice(0, MAX_STRING) : value);
  if (value === null || typeof value === "number" || typeof value === "boolean") return value;
  if (depth >= MAX_DEPTH) return null;
  if (Array.isArray(value)) return value.slice(0, 1000).map((v) => storableJson(v, depth + 1));
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, 200)) out[cleanText(k)] = storableJson(v, depth + 1);
    return out;
  }
  return null;
}
