/**
 * Maintenance-window time math, pure (no I/O): which windows are active at an
 * instant, and whether a node is in maintenance. Recurring windows are written
 * in a wall-clock time of an IANA time zone and stay at that wall-clock time
 * across daylight-saving changes:
 *
 * - an occurrence starts at `start` (HH:MM) local time on each day (daily) or on
 *   each listed weekday (weekly, 0 = Sunday … 6 = Saturday, the local weekday);
 * - it lasts `duration_mins` of elapsed time (a 120-minute window over the
 *   autumn change ends at a wall-clock time one hour earlier than usual);
 * - a start that falls in the spring-forward gap (02:30 on a day that jumps
 *   from 02:00 to 03:00) begins when the clock reads the same distance past the
 *   gap (03:30); a start in the repeated autumn hour begins at its first
 *   occurrence (the earlier instant). These are the "compatible" rules of
 *   Temporal and of RFC 5545.
 *
 * One-off windows are the half-open interval [starts_at, ends_at).
 *
 * The alert engine builds a MaintenanceCalendar from the rows of
 * alerts.maintenance_windows (`MaintenanceCalendar.fromRows`) and asks
 * `isInMaintenance(nodeId, folderPath, date)`.
 */

import { isTimeZone, localParts } from "../../../core/index.js";

export type RecurrenceKind = "daily" | "weekly";

export interface Recurrence {
  kind: RecurrenceKind;
  /** Local weekdays (0 = Sunday … 6 = Saturday); weekly windows only. */
  weekdays?: number[];
  /** Local start time "HH:MM" (24-hour). */
  start: string;
  /** Elapsed minutes from the start. */
  duration_mins: number;
  /** IANA time zone name ("Europe/Berlin", "UTC"). */
  time_zone: string;
}

export interface MaintenanceWindowTiming {
  id: string;
  target_kind: "node" | "folder";
  target_ids: string[];
  /** One-off windows: both set; recurring windows: both null. */
  starts_at: Date | null;
  ends_at: Date | null;
  recurrence: Recurrence | null;
}

/** A row of alerts.maintenance_windows as node-postgres returns it (timestamptz as Date, jsonb parsed). */
export interface MaintenanceWindowRow {
  id: string;
  target_kind: string;
  target_ids: string[];
  starts_at: Date | string | null;
  ends_at: Date | string | null;
  recurrence: Recurrence | null;
}

export interface Occurrence {
  start: Date;
  end: Date;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Whether the runtime knows this IANA time zone name (the core's check, shared with report and analysis schedules). */
export const isValidTimeZone = isTimeZone;

/** "HH:MM" → minutes after midnight, or null. */
export function parseClock(text: string): number | null {
  const m = HHMM.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall-clock reading of an instant in a time zone (the core's localParts). */
export function wallTime(ms: number, timeZone: string): WallTime {
  const p = localParts(ms, timeZone);
  return { year: p.y, month: p.mo, day: p.d, hour: p.h, minute: p.mi, second: p.s };
}

/** Offset of the zone from UTC at an instant, in ms (local minus UTC). */
function offsetAt(ms: number, timeZone: string): number {
  const floored = Math.floor(ms / 1000) * 1000;
  const w = wallTime(floored, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - floored;
}

/**
 * The instant at which the clocks of `timeZone` read this local date and time
 * (month 1-12; day may overflow, as with Date.UTC). Gap: the later reading
 * (shifted forward by the gap); repeated hour: the earlier instant.
 */
export function zonedTimeToInstant(year: number, month: number, day: number, minutesOfDay: number, timeZone: string): number {
  const naive = Date.UTC(year, month - 1, day, 0, minutesOfDay);
  const before = offsetAt(naive - DAY, timeZone);
  const after = offsetAt(naive + DAY, timeZone);
  const candidates = [...new Set([naive - before, naive - after])].filter((t) => t + offsetAt(t, timeZone) === naive);
  if (candidates.length) return Math.min(...candidates);
  // In the gap: read the wall time with the offset in force before the change, which lands past the gap.
  return naive - before;
}

/** The occurrence of a recurrence that covers `at`, or null. */
export function recurrenceOccurrenceAt(rec: Recurrence, at: Date): Occurrence | null {
  const startMin = parseClock(rec.start);
  if (startMin === null || !(rec.duration_mins > 0)) return null;
  const t = at.getTime();
  const local = wallTime(t, rec.time_zone);
  // An occurrence that covers `at` started on the local day of `at` or up to ceil(duration) days before it.
  const daysBack = Math.ceil(rec.duration_mins / 1440) + 1;
  for (let back = 0; back <= daysBack; back++) {
    const dayUtc = Date.UTC(local.year, local.month - 1, local.day - back);
    if (rec.kind === "weekly" && !(rec.weekdays ?? []).includes(new Date(dayUtc).getUTCDay())) continue;
    const d = new Date(dayUtc);
    const start = zonedTimeToInstant(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), startMin, rec.time_zone);
    const end = start + rec.duration_mins * MINUTE;
    if (start <= t && t < end) return { start: new Date(start), end: new Date(end) };
  }
  return null;
}

/** The occurrence of a window (one-off or recurring) that covers `at`, or null. */
export function occurrenceAt(window: Pick<MaintenanceWindowTiming, "starts_at" | "ends_at" | "recurrence">, at: Date): Occurrence | null {
  if (window.recurrence) return recurrenceOccurrenceAt(window.recurrence, at);
  if (!window.starts_at || !window.ends_at) return null;
  const t = at.getTime();
  return window.starts_at.getTime() <= t && t < window.ends_at.getTime() ? { start: window.starts_at, end: window.ends_at } : null;
}

/** Whether a window covers a node filed under `folderPath` (folder ids from the root; empty = tree root). */
export function windowTargets(window: Pick<MaintenanceWindowTiming, "target_kind" | "target_ids">, nodeId: string, folderPath: readonly string[]): boolean {
  if (window.target_kind === "node") return window.target_ids.includes(nodeId);
  return window.target_ids.some((f) => folderPath.includes(f));
}

export function windowFromRow(row: MaintenanceWindowRow): MaintenanceWindowTiming {
  const toDate = (v: Date | string | null) => (v === null ? null : v instanceof Date ? v : new Date(v));
  return {
    id: row.id,
    target_kind: row.target_kind === "folder" ? "folder" : "node",
    target_ids: row.target_ids,
    starts_at: toDate(row.starts_at),
    ends_at: toDate(row.ends_at),
    recurrence: row.recurrence,
  };
}

/** A set of maintenance windows, asked at instants. */
export class MaintenanceCalendar {
  constructor(readonly windows: readonly MaintenanceWindowTiming[]) {}

  static fromRows(rows: readonly MaintenanceWindowRow[]): MaintenanceCalendar {
    return new MaintenanceCalendar(rows.map(windowFromRow));
  }

  /** The windows active at `date`, each with the occurrence that covers it. */
  activeAt(date: Date): { window: MaintenanceWindowTiming; occurrence: Occurrence }[] {
    const out: { window: MaintenanceWindowTiming; occurrence: Occurrence }[] = [];
    for (const window of this.windows) {
      const occurrence = occurrenceAt(window, date);
      if (occurrence) out.push({ window, occurrence });
    }
    return out;
  }

  /** Whether a node (filed under `folderPath`) is inside an active window at `date`. */
  isInMaintenance(nodeId: string, folderPath: readonly string[], date: Date): boolean {
    return this.windows.some((w) => windowTargets(w, nodeId, folderPath) && occurrenceAt(w, date) !== null);
  }
}
