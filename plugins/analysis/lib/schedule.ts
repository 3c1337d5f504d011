/**
 * When a schedule runs next: daily, weekly (day_of_week 0 = Sunday … 6 = Saturday) or monthly (day_of_month 1–31; a
 * month shorter than that runs on its last day) at at_hour:at_minute wall-clock time in an IANA zone. A wall time
 * that does not exist (spring-forward gap) runs at the same offset as just before the gap, i.e. an hour later.
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

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether the runtime knows this IANA zone name. */
export function isTimeZone(name: string): boolean {
  if (!name || name.length > 64) return false;
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallAt(ms: number, timeZone: string): Wall {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/** The zone's offset from UTC at that instant, in ms. */
function offsetAt(ms: number, timeZone: string): number {
  const w = wallAt(ms, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
}

/** The instant a wall-clock time has in the zone. */
export function wallToInstant(year: number, month: number, day: number, hour: number, minute: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = guess - offsetAt(guess, timeZone);
  const second = guess - offsetAt(first, timeZone);
  return second === first ? first : Math.max(first, second);
}

/** The first run strictly after `after`. */
export function nextRun(t: ScheduleTiming, after: Date): Date {
  const afterMs = after.getTime();
  const today = wallAt(afterMs, t.timezone);
  // Walk calendar days from yesterday (zone vs UTC) for a bit over a year: every frequency matches within it.
  for (let i = -1; i < 400; i++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + i));
    const year = date.getUTCFullYear();
    const month = date.getUTCMonth() + 1;
    const day = date.getUTCDate();
    if (t.frequency === "weekly" && date.getUTCDay() !== t.day_of_week) continue;
    if (t.frequency === "monthly") {
      const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
      if (day !== Math.min(t.day_of_month ?? 1, last)) continue;
    }
    const at = wallToInstant(year, month, day, t.at_hour, t.at_minute, t.timezone);
    if (at > afterMs) return new Date(at);
  }
  throw new Error("no next run within 400 days");
}
