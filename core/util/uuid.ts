/**
 * UUIDs as ids travel in paths, bodies, cursors and scopes: 8-4-4-4-12 hex digits, either case
 * (PostgreSQL prints them lower-case; compare ids after `toLowerCase()`). Any version: ids made by
 * PostgreSQL (v4) and by plugins (time-ordered) alike.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID string (so it may reach a `::uuid` cast without a 22P02 error). */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_PATTERN.test(value);
}
