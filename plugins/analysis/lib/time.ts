import { badRequest } from "../../../core/index.js";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/** Whether `text` is an RFC 3339 timestamp with real calendar fields (no 30 February). */
export function isRfc3339(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return true;
}

/** A timestamp query parameter as text (PostgreSQL keeps its microseconds, a Date would not), or 400. */
export function timestampParam(name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!isRfc3339(value)) throw badRequest("validation_failed", `${name} must be an RFC 3339 timestamp (for example 2026-01-31T23:59:59.123456Z).`);
  return value;
}

/** A comma-separated list of a vocabulary; empty = no filter; an unknown token is 400. */
export function tokenList(name: string, value: string | undefined, vocabulary: readonly string[]): string[] | null {
  if (value === undefined) return null;
  const tokens = value
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  if (!tokens.length) return null;
  if (tokens.some((t) => !vocabulary.includes(t))) throw badRequest("validation_failed", `${name} takes a comma-separated list of ${vocabulary.join(", ")}.`);
  return [...new Set(tokens)];
}
