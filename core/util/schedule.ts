/**
 * When a schedule (a report's, an analysis tool's …) runs next, in its IANA zone (pure, no I/O). A schedule names a wall-clock time (at_hour:at_minute)
 * and, weekly, a local weekday (0 = Sunday … 6 = Saturday), or, monthly, a day of the month (a month without that
 * day runs on its last day). A time in the spring-forward gap runs when the clock reads the same distance past the
 * gap; a time in the repeated autumn hour runs at its first occurrence.
 */

export type Frequency = "daily" | "weekly" | "monthly";

export interface ScheduleTiming {
  frequency: Frequency;
  at_hour: number;
  at_minute: number;
  day_of_week: number | null;
  day_of_month: number | null;
  timezone: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Whether `zone` is an IANA zone name this runtime knows. */
export function isTimeZone(zone: string): boolean {
  if (typeof zone !== "string" || !zone || zone.length > 64) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock fields of an instant in a zone. */
export function localParts(ms: number, zone: string): { y: number; mo: number; d: number; h: number; mi: number; s: number; dow: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(ms))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  const dow = new Date(Date.UTC(parts.year, parts.month - 1, parts.day)).getUTCDay();
  return { y: parts.year, mo: parts.month, d: parts.day, h: parts.hour, mi: parts.minute, s: parts.second, dow };
}

/** Offset of the zone from UTC at an instant, in ms (local = utc + offset). */
export function zoneOffsetMs(ms: number, zone: string): number {
  const p = localParts(ms, zone);
  return Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s) - Math.floor(ms / 1000) * 1000;
}

/** The instant a wall-clock time of a zone names (gap: shifted forward by the gap; repeated hour: the earlier one). */
export function zonedTimeToUtc(y: number, mo: number, d: number, h: number, mi: number, zone: string): number {
  const wall = Date.UTC(y, mo - 1, d, h, mi);
  // The offsets on either side of a possible transition near this wall time; the earlier instant that reads `wall` wins.
  const before = zoneOffsetMs(wall - 86400000, zone);
  const after = zoneOffsetMs(wall + 86400000, zone);
  const candidates = [wall - before, wall - after].sort((a, b) => a - b);
  for (const c of candidates) {
    const p = localParts(c, zone);
    if (Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi) === wall) return c;
  }
  // In the gap: the same distance past it (the offset before the change applied).
  return wall - before;
}

function daysInMonth(y: number, mo: number): number {
  return new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** The first run strictly after `after`. */
export function nextRun(t: ScheduleTiming, after: Date | number): Date {
  const afterMs = typeof after === "number" ? after : after.getTime();
  const start = localParts(afterMs, t.timezone);
  // Walk local calendar days from the local date of `afterMs` (at most ~13 months for monthly schedules).
  for (let i = 0; i < 400; i++) {
    const day = new Date(Date.UTC(start.y, start.mo - 1, start.d + i));
    const y = day.getUTCFullYear();
    const mo = day.getUTCMonth() + 1;
    const d = day.getUTCDate();
    if (t.frequency === "weekly" && day.getUTCDay() !== t.day_of_week) continue;
    if (t.frequency === "monthly" && d !== Math.min(t.day_of_month ?? 1, daysInMonth(y, mo))) continue;
    const at = zonedTimeToUtc(y, mo, d, t.at_hour, t.at_minute, t.timezone);
    if (at > afterMs) return new Date(at);
  }
  throw new Error("no next run within 400 days");
}
