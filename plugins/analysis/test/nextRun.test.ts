import { isTimeZone, nextRun, zonedTimeToUtc, type ScheduleTiming } from "../../../core/index.js";

const at = (text: string) => new Date(text);
const t = (over: Partial<ScheduleTiming>): ScheduleTiming => ({
  frequency: "daily",
  at_hour: 2,
  at_minute: 30,
  day_of_week: null,
  day_of_month: null,
  timezone: "UTC",
  ...over,
});

describe("nextRun", () => {
  test("daily in UTC: later today, else tomorrow; strictly after", () => {
    expect(nextRun(t({}), at("2026-11-24T01:00:00Z")).toISOString()).toBe("2026-11-24T02:30:00.000Z");
    expect(nextRun(t({}), at("2026-11-24T02:30:00Z")).toISOString()).toBe("2026-11-25T02:30:00.000Z");
    expect(nextRun(t({}), at("2026-12-31T23:59:00Z")).toISOString()).toBe("2027-01-01T02:30:00.000Z");
  });

  test("in a zone: wall-clock time there, across the zone's date line and offsets", () => {
    // Kolkata is UTC+05:30 all year: 02:30 there is 21:00 UTC the day before.
    expect(nextRun(t({ timezone: "Asia/Kolkata" }), at("2026-11-24T12:00:00Z")).toISOString()).toBe("2026-11-24T21:00:00.000Z");
    // New York: EST (UTC-5) in winter, EDT (UTC-4) in summer.
    expect(nextRun(t({ at_hour: 9, at_minute: 0, timezone: "America/New_York" }), at("2026-11-24T12:00:00Z")).toISOString()).toBe("2026-11-24T14:00:00.000Z");
    expect(nextRun(t({ at_hour: 9, at_minute: 0, timezone: "America/New_York" }), at("2026-07-01T12:00:00Z")).toISOString()).toBe("2026-07-01T13:00:00.000Z");
  });

  test("across a DST change the wall time holds (Berlin, 2026-03-29 and 2026-10-25)", () => {
    const berlin = t({ at_hour: 3, at_minute: 30, timezone: "Europe/Berlin" });
    expect(nextRun(berlin, at("2026-03-28T12:00:00Z")).toISOString()).toBe("2026-03-29T01:30:00.000Z"); // CEST
    expect(nextRun(berlin, at("2026-10-24T12:00:00Z")).toISOString()).toBe("2026-10-25T02:30:00.000Z"); // CET again
    // 02:30 does not exist on 2026-03-29 in Berlin: it runs at 03:30 CEST (01:30 UTC).
    expect(nextRun(t({ at_hour: 2, at_minute: 30, timezone: "Europe/Berlin" }), at("2026-03-28T12:00:00Z")).toISOString()).toBe("2026-03-29T01:30:00.000Z");
  });

  test("weekly on day_of_week (0 = Sunday)", () => {
    // 2026-11-24 is a Tuesday.
    expect(nextRun(t({ frequency: "weekly", day_of_week: 0 }), at("2026-11-24T12:00:00Z")).toISOString()).toBe("2026-11-29T02:30:00.000Z");
    expect(nextRun(t({ frequency: "weekly", day_of_week: 2 }), at("2026-11-24T01:00:00Z")).toISOString()).toBe("2026-11-24T02:30:00.000Z");
    expect(nextRun(t({ frequency: "weekly", day_of_week: 2 }), at("2026-11-24T03:00:00Z")).toISOString()).toBe("2026-12-01T02:30:00.000Z");
  });

  test("monthly on day_of_month; a shorter month runs on its last day", () => {
    expect(nextRun(t({ frequency: "monthly", day_of_month: 15 }), at("2026-11-24T12:00:00Z")).toISOString()).toBe("2026-12-15T02:30:00.000Z");
    expect(nextRun(t({ frequency: "monthly", day_of_month: 31 }), at("2026-02-01T00:00:00Z")).toISOString()).toBe("2026-02-28T02:30:00.000Z");
    expect(nextRun(t({ frequency: "monthly", day_of_month: 31 }), at("2026-11-24T12:00:00Z")).toISOString()).toBe("2026-11-30T02:30:00.000Z");
    expect(nextRun(t({ frequency: "monthly", day_of_month: 31 }), at("2026-12-01T00:00:00Z")).toISOString()).toBe("2026-12-31T02:30:00.000Z");
  });

  test("zones: known names only", () => {
    expect(isTimeZone("Europe/Berlin")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
    expect(isTimeZone("")).toBe(false);
    expect(zonedTimeToUtc(2026, 1, 1, 0, 0, "UTC")).toBe(Date.UTC(2026, 0, 1));
  });
});
