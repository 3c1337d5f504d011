/** Next runs in a zone: wall-clock times, weekdays, short months, and both daylight-saving changes. */
import { isTimeZone, localParts, nextRun, scheduledRange, zonedTimeToUtc, type ScheduleTiming } from "../lib/schedule.js";

const t = (o: Partial<ScheduleTiming>): ScheduleTiming => ({
  frequency: "daily",
  at_hour: 6,
  at_minute: 0,
  day_of_week: null,
  day_of_month: null,
  timezone: "UTC",
  ...o,
});
const iso = (d: Date) => d.toISOString();

describe("nextRun", () => {
  it("daily at a wall-clock time of the zone", () => {
    const after = Date.parse("2026-11-24T12:00:00Z");
    expect(iso(nextRun(t({ timezone: "UTC" }), after))).toBe("2026-11-25T06:00:00.000Z");
    expect(iso(nextRun(t({ timezone: "Asia/Kolkata" }), after))).toBe("2026-11-25T00:30:00.000Z"); // 06:00 +05:30
    expect(iso(nextRun(t({ timezone: "America/New_York" }), after))).toBe("2026-11-25T11:00:00.000Z"); // 06:00 −05:00
    expect(iso(nextRun(t({ timezone: "Asia/Kathmandu", at_hour: 18, at_minute: 0 }), after))).toBe("2026-11-24T12:15:00.000Z"); // 18:00 +05:45
    // Strictly after: a run exactly at `after` moves a day on.
    expect(iso(nextRun(t({}), Date.parse("2026-11-25T06:00:00Z")))).toBe("2026-11-26T06:00:00.000Z");
  });

  it("weekly on a local weekday: the zone's date, not UTC's", () => {
    // 2026-11-24 is a Tuesday. 01:00 on Wednesday in Tokyo (+09:00) is Tuesday 16:00 UTC.
    expect(iso(nextRun(t({ frequency: "weekly", day_of_week: 3, at_hour: 1, timezone: "Asia/Tokyo" }), Date.parse("2026-11-24T12:00:00Z")))).toBe(
      "2026-11-24T16:00:00.000Z",
    );
    expect(iso(nextRun(t({ frequency: "weekly", day_of_week: 2, at_hour: 6, timezone: "UTC" }), Date.parse("2026-11-24T12:00:00Z")))).toBe(
      "2026-12-01T06:00:00.000Z",
    );
  });

  it("monthly: a month without the day runs on its last day", () => {
    expect(iso(nextRun(t({ frequency: "monthly", day_of_month: 31, timezone: "UTC" }), Date.parse("2027-02-01T00:00:00Z")))).toBe("2027-02-28T06:00:00.000Z");
    expect(iso(nextRun(t({ frequency: "monthly", day_of_month: 31, timezone: "UTC" }), Date.parse("2027-02-28T07:00:00Z")))).toBe("2027-03-31T06:00:00.000Z");
  });

  it("across daylight saving: stays at the wall-clock time; a time in the gap runs as far past it; the repeated hour's first", () => {
    const berlin = t({ timezone: "Europe/Berlin", at_hour: 6 });
    expect(iso(nextRun(berlin, Date.parse("2026-03-28T12:00:00Z")))).toBe("2026-03-29T04:00:00.000Z"); // CEST after the change
    expect(iso(nextRun(berlin, Date.parse("2026-03-27T12:00:00Z")))).toBe("2026-03-28T05:00:00.000Z"); // CET before
    // 02:30 does not exist on 2026-03-29 in Berlin: 03:30 CEST (01:30 UTC).
    expect(iso(nextRun(t({ timezone: "Europe/Berlin", at_hour: 2, at_minute: 30 }), Date.parse("2026-03-28T12:00:00Z")))).toBe("2026-03-29T01:30:00.000Z");
    // 02:30 happens twice on 2026-10-25: the first (CEST, 00:30 UTC).
    expect(iso(nextRun(t({ timezone: "Europe/Berlin", at_hour: 2, at_minute: 30 }), Date.parse("2026-10-24T12:00:00Z")))).toBe("2026-10-25T00:30:00.000Z");
  });
});

describe("zone helpers", () => {
  it("reads wall clocks and knows zone names", () => {
    expect(localParts(Date.parse("2026-11-24T12:00:00Z"), "Asia/Kathmandu")).toMatchObject({ y: 2026, mo: 11, d: 24, h: 17, mi: 45, dow: 2 });
    expect(zonedTimeToUtc(2026, 11, 24, 17, 45, "Asia/Kathmandu")).toBe(Date.parse("2026-11-24T12:00:00Z"));
    expect(isTimeZone("Europe/Berlin")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
    expect(isTimeZone("")).toBe(false);
  });

  it("scheduled ranges: a day, a week, the month before in the zone", () => {
    const run = Date.parse("2026-12-01T05:00:00Z"); // 06:00 in Berlin
    expect(scheduledRange(t({}), run)).toEqual({ from: new Date(run - 86400000), to: new Date(run) });
    expect(scheduledRange(t({ frequency: "weekly", day_of_week: 2 }), run).from).toEqual(new Date(run - 7 * 86400000));
    expect(iso(scheduledRange(t({ frequency: "monthly", day_of_month: 1, timezone: "Europe/Berlin" }), run).from)).toBe("2026-10-31T23:00:00.000Z");
  });
});
