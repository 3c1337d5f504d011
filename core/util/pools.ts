import { badRequest, type ApiError } from "../errors.js";

/** Poller pool names (spec: pool-name rules): 1 to 63 letters, digits, `_` or `-`. */
export const POOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,63}$/;

/** Whether `value` is a legal pool name. */
export function isPoolName(value: unknown): value is string {
  return typeof value === "string" && POOL_NAME_PATTERN.test(value);
}

/** 400 `invalid_pool`: the one answer for a pool name outside the rule. */
export function invalidPool(): ApiError {
  return badRequest("invalid_pool", "A pool name has 1 to 63 characters: letters, digits, _ and - only.");
}

/** Throws 400 `invalid_pool` unless `pool` is a legal pool name; null and undefined (no pool) pass. */
export function assertPoolName(pool: string | null | undefined): void {
  if (pool !== null && pool !== undefined && !isPoolName(pool)) throw invalidPool();
}
