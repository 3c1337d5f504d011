import { isUuid, timeOrderedUuid } from "../../core/index.js";

/** The 48-bit millisecond time of a time-ordered id. */
const msOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe("timeOrderedUuid", () => {
  test("a version 7 UUID: the time in its first 48 bits, version 7, variant 10", () => {
    for (const ms of [0, 1, 0xffffff, 0x1000000, Date.UTC(2026, 10, 24, 23, 59, 59, 999)]) {
      const id = timeOrderedUuid(ms);
      expect(isUuid(id)).toBe(true);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(msOf(id)).toBeGreaterThanOrEqual(ms);
    }
    const now = Date.now() + 10_000;
    expect(msOf(timeOrderedUuid(now))).toBe(now);
  });

  test("ids of one process increase strictly, in the same millisecond too, and borrow the next one after 4096", () => {
    const at = Date.now() + 20_000;
    const ids = Array.from({ length: 5000 }, () => timeOrderedUuid(at));
    for (let k = 1; k < ids.length; k++) expect(ids[k] > ids[k - 1]).toBe(true);
    expect(msOf(ids[0])).toBe(at);
    expect(msOf(ids[4095])).toBe(at);
    expect(msOf(ids[4096])).toBe(at + 1);
    // The counter (12 bits after the version digit) counts up within a millisecond.
    expect(ids[0].slice(14, 18)).toBe("7000");
    expect(ids[4095].slice(14, 18)).toBe("7fff");
    expect(ids[4096].slice(14, 18)).toBe("7000");
    // A clock going back does not make an id go back.
    expect(timeOrderedUuid(at - 5000) > ids[ids.length - 1]).toBe(true);
  });

  test("the last 62 bits are random: no two ids share them", () => {
    const tails = new Set(Array.from({ length: 20_000 }, () => timeOrderedUuid().slice(19)));
    expect(tails.size).toBe(20_000);
    const digits = new Set([...tails].join("").replace(/-/g, ""));
    expect(digits.size).toBe(16);
  });

  test("each id is a string of its own, not a view of a shared buffer", () => {
    const a = timeOrderedUuid();
    const copy = `${a}`;
    timeOrderedUuid();
    expect(a).toBe(copy);
  });

  // Last: the clock never goes back for this module afterwards.
  test("every bit of the 48-bit time is written", () => {
    for (const ms of [Date.UTC(2100, 0, 1), 0xabcdef123456, 2 ** 48 - 1]) expect(msOf(timeOrderedUuid(ms))).toBe(ms);
    expect(timeOrderedUuid(2 ** 48 - 1).slice(0, 13)).toBe("ffffffff-ffff");
  });
});
