import { badRequest } from "../../../core/index.js";

export const POOL_PATTERN = /^[A-Za-z0-9_-]{1,63}$/;

/** Pool names: letters, digits, `_`, `-`, at most 63; null/undefined pass (no pool). */
export function assertPool(pool: string | null | undefined): void {
  if (pool === null || pool === undefined) return;
  if (!POOL_PATTERN.test(pool)) {
    throw badRequest("invalid_pool", "A pool name has 1 to 63 characters: letters, digits, _ and - only.");
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/** Tags: trimmed, non-empty, distinct, at most 64 of at most 64 characters. */
export function normaliseTags(tags: readonly string[] | undefined, field: string): string[] {
  if (!tags) return [];
  const out = [...new Set(tags.map((t) => t.trim()))];
  if (out.some((t) => t.length === 0 || t.length > 64) || out.length > 64) {
    throw badRequest("validation_failed", `${field} holds at most 64 distinct tags of 1 to 64 characters.`);
  }
  return out;
}
