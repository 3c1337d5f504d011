import { randomBytes } from "node:crypto";

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

/**
 * Time-ordered UUIDs (version 7 layout: 48-bit Unix ms, then a counter, then random
 * bits). Ids made by one process increase strictly, so history rows written in one
 * flush (which share recorded_at) still sort in the order the engine decided them
 * on the (recorded_at, id) keyset.
 */

/** Random bytes drawn 4 KiB at a time: one randomBytes() call per id cost ~15 µs, a slice of a pooled draw ~0.1 µs. */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;

function randomInto(b: Buffer): void {
  if (poolAt + b.length > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolAt = 0;
  }
  pool.copy(b, 0, poolAt, poolAt + b.length);
  poolAt += b.length;
}

let lastMs = 0;
let seq = 0;

export function timeOrderedUuid(now: number = Date.now()): string {
  let ms = now;
  if (ms <= lastMs) {
    ms = lastMs;
    seq++;
    if (seq > 0xfff) {
      // 4096 ids in one millisecond: borrow the next millisecond.
      ms = ++lastMs;
      seq = 0;
    }
  } else {
    lastMs = ms;
    seq = 0;
  }
  const b = Buffer.allocUnsafe(16);
  randomInto(b);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | ((seq >> 8) & 0x0f);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (b[8] & 0x3f);
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
