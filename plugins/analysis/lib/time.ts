import { badRequest, isRfc3339 } from "../../../core/index.js";

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
