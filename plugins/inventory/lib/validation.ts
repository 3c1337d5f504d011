import { badRequest } from "../../../core/index.js";

/** Tags: trimmed, non-empty, distinct, at most 64 of at most 64 characters. */
export function normaliseTags(tags: readonly string[] | undefined, field: string): string[] {
  if (!tags) return [];
  const out = [...new Set(tags.map((t) => t.trim()))];
  if (out.some((t) => t.length === 0 || t.length > 64) || out.length > 64) {
    throw badRequest("validation_failed", `${field} holds at most 64 distinct tags of 1 to 64 characters.`);
  }
  return out;
}
