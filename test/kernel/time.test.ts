import { MAX_TIMESTAMP_MS, isRfc3339, parseRfc3339 } from "../../core/index.js";
import { adminDatabaseUrl, rawQuery } from "../support/db.js";

describe("parseRfc3339", () => {
  it("parses strictly, keeping microseconds for comparisons", () => {
    expect(parseRfc3339("2026-01-10T12:00:00.000007Z")).toEqual({
      ms: Date.parse("2026-01-10T12:00:00Z"),
      us: Date.parse("2026-01-10T12:00:00Z") * 1000 + 7,
      text: "2026-01-10T12:00:00.000007Z",
    });
    expect(parseRfc3339("2026-01-10T13:00:00+01:00")?.ms).toBe(Date.parse("2026-01-10T12:00:00Z"));
    expect(parseRfc3339("2024-02-29T00:00:00Z")).not.toBeNull();
    expect(parseRfc3339("0050-02-28 00:00:00.5z")?.ms).toBe(Date.parse("0050-02-28T00:00:00.500Z"));
  });

  it("refuses impossible calendar fields, year 0, years past 9999 and partial forms", () => {
    for (const bad of [
      "2026-02-29T00:00:00Z",
      "2026-02-30T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-00-10T00:00:00Z",
      "0000-01-01T00:00:00Z",
      "+010000-01-01T00:00:00Z",
      "10000-01-01T00:00:00Z",
      "2026-01-10",
      "2026-01-10T12:00:00",
      "2026-01-10T24:00:00Z",
      "2026-01-10T12:60:00Z",
      "2026-01-10T12:00:60Z",
      "2026-01-10T12:00:00+25:00",
      "2026-01-10T12:00:00+16:00",
      "2026-01-10T12:00:00+01:60",
      "1",
      "now",
    ]) {
      expect([bad, parseRfc3339(bad)]).toEqual([bad, null]);
      expect(isRfc3339(bad)).toBe(false);
    }
  });

  it("every extreme it accepts is a timestamptz PostgreSQL takes, at the same instant", async () => {
    const texts = ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00-15:59", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59+15:59", "1900-02-28T12:00:00Z"];
    for (const t of texts) expect(isRfc3339(t)).toBe(true);
    const rows = await rawQuery<{ ms: string }>(
      adminDatabaseUrl(),
      "SELECT floor(extract(epoch FROM t::timestamptz) * 1000)::text AS ms FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
      [texts],
    );
    expect(rows.map((r) => Number(r.ms))).toEqual(texts.map((t) => parseRfc3339(t)!.ms));
    expect(new Date(MAX_TIMESTAMP_MS).toISOString()).toBe("9999-12-31T23:59:59.999Z");
  });
});
