/**
 * The reports plugin's schedules: when they run (the kernel's schedule arithmetic, core/util/schedule.ts) and the
 * range a scheduled run covers.
 */
import { localParts, zonedTimeToUtc, type ScheduleTiming } from "../../../core/index.js";

export { isTimeZone, localParts, nextRun, zonedTimeToUtc, type Frequency, type ScheduleTiming } from "../../../core/index.js";

/** The range a scheduled run covers, ending at its run time: a day, a week, or the calendar month before (in the zone). */
export function scheduledRange(t: ScheduleTiming, runMs: number): { from: Date; to: Date } {
  if (t.frequency === "daily") return { from: new Date(runMs - 86400000), to: new Date(runMs) };
  if (t.frequency === "weekly") return { from: new Date(runMs - 7 * 86400000), to: new Date(runMs) };
  const p = localParts(runMs, t.timezone);
  const prev = new Date(Date.UTC(p.y, p.mo - 2, 1));
  const from = zonedTimeToUtc(prev.getUTCFullYear(), prev.getUTCMonth() + 1, 1, 0, 0, t.timezone);
  return { from: new Date(from), to: new Date(runMs) };
}
