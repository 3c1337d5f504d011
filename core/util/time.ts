const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 timestamp with its calendar fields checked (no 30 February, no year 0), or null. `us` (microseconds
 * since the epoch, digits past the sixth dropped) is for comparisons, `ms` for Dates; pass the original text to
 * PostgreSQL, which keeps the microseconds that a JavaScript Date would drop. Every value it accepts is one PostgreSQL's
 * timestamptz takes (four-digit years only), so a query parameter or cursor part checked here never fails its SQL cast.
 */
export function parseRfc3339(text: string): { ms: number; us: number; text: string } | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  if (day > daysInMonth(year, month)) return null;
  // PostgreSQL takes offsets to ±15:59 (the real ones span −12:00 to +14:00).
  if (m[9] !== undefined && (Number(m[9]) > 15 || Number(m[10]) > 59)) return null;
  const whole = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[8].toUpperCase()}`);
  if (!Number.isFinite(whole)) return null;
  const micros = m[7] === undefined ? 0 : Number((m[7].slice(1) + "00000").slice(0, 6));
  return { ms: whole + Math.floor(micros / 1000), us: whole * 1000 + micros, text };
}

/** Whether `text` is an RFC 3339 timestamp parseRfc3339 accepts. */
export function isRfc3339(text: string): boolean {
  return parseRfc3339(text) !== null;
}

/** The latest instant a four-digit year reaches (9999-12-31T23:59:59.999Z), in Unix milliseconds. */
export const MAX_TIMESTAMP_MS = 253_402_300_799_999;

function daysInMonth(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0);
  return d.getUTCDate();
}
