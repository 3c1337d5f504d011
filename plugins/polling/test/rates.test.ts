import { counterDelta, counterRate, computeRates, elapsedSeconds, type CounterState } from "../lib/rates.js";
import type { InterfaceReading, InterfaceState } from "../poller/types.js";

const T0 = 1_800_000_000_000;
const TWO_32 = 4294967296n;
const TWO_64 = 18446744073709551616n;

type Counters = InterfaceReading["counters"];
const counters = (over: Partial<Counters> = {}): Counters => ({
  in_octets: "0",
  out_octets: "0",
  in_errors: "0",
  out_errors: "0",
  in_discards: "0",
  out_discards: "0",
  ...over,
});
const reading = (over: Partial<Omit<InterfaceReading, "counters">> & { counters?: Partial<Counters> } = {}): InterfaceReading => ({
  ifindex: 3,
  if_name: "Gi0/3",
  if_alias: null,
  if_speed_bps: 1_000_000_000,
  oper_up: true,
  counter_bits: 64,
  ...over,
  counters: counters(over.counters),
});
const state = (over: Partial<Omit<InterfaceState, "counters">> & { counters?: Partial<Counters> } = {}): InterfaceState => ({
  ifindex: 3,
  counter_bits: 64,
  uptime_ticks: 100_000,
  at_unix_ms: T0,
  ...over,
  counters: counters(over.counters),
});
const byMetric = (samples: { metric: string; value: number }[]) => Object.fromEntries(samples.map((s) => [s.metric, s.value]));

describe("computeRates", () => {
  it("gives no rate on a first reading, and the state to keep", () => {
    const r = computeRates(undefined, reading({ counters: { in_octets: "1000" } }), 5000, T0);
    expect(r.samples).toEqual([]);
    expect(r.state).toEqual({ ifindex: 3, counter_bits: 64, counters: counters({ in_octets: "1000" }), uptime_ticks: 5000, at_unix_ms: T0 });
    expect(computeRates(null, reading(), 5000, T0).samples).toEqual([]);
  });

  it("turns octets into bits/s, errors and discards into per-second rates, and utilisation against the speed", () => {
    const prev = state({ counters: { in_octets: "1000000", out_octets: "5000", in_errors: "10", out_errors: "0", in_discards: "7", out_discards: "1" } });
    const cur = reading({ counters: { in_octets: "2250000", out_octets: "630000", in_errors: "30", out_errors: "5", in_discards: "7", out_discards: "41" } });
    const r = computeRates(prev, cur, 101_000, T0 + 10_000);
    expect(byMetric(r.samples)).toEqual({
      if_in_bps: 1_000_000,
      if_out_bps: 500_000,
      if_util_in_pct: 0.1,
      if_util_out_pct: 0.05,
      if_in_errors_ps: 2,
      if_out_errors_ps: 0.5,
      if_in_discards_ps: 0,
      if_out_discards_ps: 4,
    });
    expect(r.samples.every((s) => s.ifindex === 3)).toBe(true);
  });

  it("takes the elapsed time from sysUpTime when both readings have it, else from the wall clock", () => {
    const prev = state({ counters: { in_octets: "0" } });
    // uptime says 10 s, the poller's clock 12 s (a slow answer): the agent's clock wins
    expect(byMetric(computeRates(prev, reading({ counters: { in_octets: "1000" } }), 101_000, T0 + 12_000).samples).if_in_bps).toBe(800);
    // no uptime now: wall clock
    expect(byMetric(computeRates(prev, reading({ counters: { in_octets: "1000" } }), null, T0 + 4_000).samples).if_in_bps).toBe(2000);
    expect(byMetric(computeRates(state({ uptime_ticks: null }), reading({ counters: { in_octets: "1000" } }), 101_000, T0 + 8_000).samples).if_in_bps).toBe(
      1000,
    );
  });

  it("adds 2^32 when a 32-bit counter went down without a restart (wrap)", () => {
    const prev = state({ counter_bits: 32, counters: { in_octets: String(TWO_32 - 1000n), in_errors: "4294967290" } });
    const cur = reading({ counter_bits: 32, counters: { in_octets: "249000", in_errors: "4" } });
    const m = byMetric(computeRates(prev, cur, 101_000, T0 + 10_000).samples);
    expect(m.if_in_bps).toBe(((1000 + 249000) * 8) / 10);
    expect(m.if_in_errors_ps).toBe(1);
  });

  it("adds 2^64 when a 64-bit counter near the top wrapped, but takes a fall from low values as a reset (no rate)", () => {
    const prev = state({ counters: { in_octets: String(TWO_64 - 100n), out_octets: "5000000000" } });
    const cur = reading({ counters: { in_octets: "900", out_octets: "12" } });
    const m = byMetric(computeRates(prev, cur, 101_000, T0 + 10_000).samples);
    expect(m.if_in_bps).toBe(800);
    expect(m.if_out_bps).toBeUndefined();
    expect(m.if_util_out_pct).toBeUndefined();
  });

  it("gives no rate after an agent restart: sysUpTime went back", () => {
    const prev = state({ uptime_ticks: 900_000, counters: { in_octets: "50000000", in_errors: "100" } });
    const r = computeRates(prev, reading({ counters: { in_octets: "1000", in_errors: "0" } }), 1_500, T0 + 60_000);
    expect(r.samples).toEqual([]);
    expect(r.state.uptime_ticks).toBe(1_500);
    // the next poll compares with the post-restart reading again
    const next = computeRates(r.state, reading({ counters: { in_octets: "126000", in_errors: "0" } }), 2_500, T0 + 70_000);
    expect(byMetric(next.samples).if_in_bps).toBe(100_000);
  });

  it("gives no rate when sysUpTime advanced far less than the wall clock (restarted in between, up longer than before)", () => {
    const prev = state({ uptime_ticks: 3_000, counters: { in_octets: "100" } });
    // 300 s passed, the agent says only 20 s more: it rebooted meanwhile
    const r = computeRates(prev, reading({ counters: { in_octets: "200" } }), 5_000, T0 + 300_000);
    expect(r.samples).toEqual([]);
    // a few seconds of delay is tolerated
    const ok = computeRates(prev, reading({ counters: { in_octets: "200" } }), 9_000, T0 + 63_000);
    expect(byMetric(ok.samples).if_in_bps).toBeCloseTo((100 * 8) / 60);
  });

  it("leaves out the rate of a counter missing in either reading, keeps the others", () => {
    const prev = state({ counters: { in_octets: "0", out_octets: null } });
    const cur = reading({ counters: { in_octets: "1000", out_octets: "500", in_errors: null } });
    const m = byMetric(computeRates(prev, cur, 101_000, T0 + 10_000).samples);
    expect(m.if_in_bps).toBe(800);
    expect(m.if_out_bps).toBeUndefined();
    expect(m.if_in_errors_ps).toBeUndefined();
    expect(m.if_out_errors_ps).toBe(0);
    expect(computeRates(prev, cur, 101_000, T0 + 10_000).state.counters.in_errors).toBeNull();
  });

  it("drops the octet rates when the counter width changed (32 ↔ 64), keeps errors and discards", () => {
    const prev = state({ counter_bits: 32, counters: { in_octets: "4000000000", in_errors: "1" } });
    const cur = reading({ counter_bits: 64, counters: { in_octets: "90000000000", in_errors: "11" } });
    const m = byMetric(computeRates(prev, cur, 101_000, T0 + 10_000).samples);
    expect(m.if_in_bps).toBeUndefined();
    expect(m.if_util_in_pct).toBeUndefined();
    expect(m.if_in_errors_ps).toBe(1);
    expect(computeRates(state({ counter_bits: 64 }), reading({ counter_bits: 32 }), 101_000, T0 + 10_000).samples.map((s) => s.metric)).not.toContain(
      "if_in_bps",
    );
  });

  it("gives no utilisation without a known speed, and nothing for another interface or no elapsed time", () => {
    const prev = state({ counters: { in_octets: "0" } });
    expect(
      Object.keys(byMetric(computeRates(prev, reading({ if_speed_bps: null, counters: { in_octets: "10" } }), 101_000, T0 + 10_000).samples)),
    ).not.toContain("if_util_in_pct");
    expect(Object.keys(byMetric(computeRates(prev, reading({ if_speed_bps: 0, counters: { in_octets: "10" } }), 101_000, T0 + 10_000).samples))).not.toContain(
      "if_util_in_pct",
    );
    expect(computeRates(state({ ifindex: 4 }), reading(), 101_000, T0 + 10_000).samples).toEqual([]);
    expect(computeRates(prev, reading(), 100_000, T0).samples).toEqual([]);
  });

  it("computes exactly on Counter64 values beyond 2^53 (BigInt, no float loss)", () => {
    // As doubles both would read 9007199254740992 and the difference would be 0 (or 4).
    const prev = state({ counters: { in_octets: "9007199254740993", out_octets: "18446744073709551000" } });
    const cur = reading({ counters: { in_octets: "9007199254740995", out_octets: "18446744073709551615" } });
    const m = byMetric(computeRates(prev, cur, 100_100, T0 + 1_000).samples);
    expect(m.if_in_bps).toBe(16);
    expect(m.if_out_bps).toBe(615 * 8);
  });

  it("never answers a negative or non-finite rate, whatever the readings", () => {
    const values = ["0", "1", "1000", "4294967295", "4294967296", "9007199254740993", "18446744073709551615", null, "junk", "-5"];
    let seed = 7;
    const pick = <T>(xs: T[]) => xs[(seed = (seed * 1103515245 + 12345) % 2147483648) % xs.length];
    for (let i = 0; i < 2000; i++) {
      const prev = state({
        counter_bits: pick([32, 64] as const),
        uptime_ticks: pick([null, 0, 100, 50_000]),
        counters: { in_octets: pick(values), out_octets: pick(values), in_errors: pick(values), out_discards: pick(values) },
      });
      const cur = reading({
        counter_bits: pick([32, 64] as const),
        if_speed_bps: pick([null, 0, 10_000_000]),
        counters: { in_octets: pick(values), out_octets: pick(values), in_errors: pick(values), out_discards: pick(values) },
      });
      const { samples } = computeRates(prev, cur, pick([null, 0, 100, 60_000]), T0 + pick([-1000, 0, 1, 30_000]));
      for (const s of samples) {
        expect(Number.isFinite(s.value)).toBe(true);
        expect(s.value).toBeGreaterThanOrEqual(0);
      }
    }
  });
});

describe("counterDelta and elapsedSeconds", () => {
  it("refuses values out of range for the width and text that is not a counter", () => {
    expect(counterDelta("4294967296", "4294967300", 32)).toBeNull();
    expect(counterDelta("1", "2", 64)).toBe(1n);
    expect(counterDelta("1", "x", 64)).toBeNull();
    expect(counterDelta("-1", "2", 64)).toBeNull();
    expect(counterDelta(undefined, "2", 64)).toBeNull();
    expect(counterDelta("18446744073709551616", "1", 64)).toBeNull();
  });

  it("takes the wall clock without uptime and refuses time going back", () => {
    expect(elapsedSeconds({ uptime_ticks: null, at_unix_ms: T0 }, { uptime_ticks: null, at_unix_ms: T0 + 1500 })).toBe(1.5);
    expect(elapsedSeconds({ uptime_ticks: null, at_unix_ms: T0 }, { uptime_ticks: null, at_unix_ms: T0 - 1 })).toBeNull();
    expect(elapsedSeconds({ uptime_ticks: 500, at_unix_ms: T0 }, { uptime_ticks: 400, at_unix_ms: T0 + 1000 })).toBeNull();
  });
});

describe("counterRate (collection-template counters)", () => {
  const c = (value: string | null, bits: 32 | 64, uptime: number | null, at: number): CounterState => ({ value, bits, uptime_ticks: uptime, at_unix_ms: at });

  it("needs a previous reading, then gives a per-second rate", () => {
    expect(counterRate(undefined, c("100", 32, 1000, T0)).rate).toBeNull();
    expect(counterRate(c("100", 32, 1000, T0), c("600", 32, 1500, T0 + 5000)).rate).toBe(100);
  });

  it("handles a 32-bit wrap, a restart, a width change and a missing value", () => {
    expect(counterRate(c("4294967200", 32, 1000, T0), c("104", 32, 1200, T0 + 2000)).rate).toBe(100);
    expect(counterRate(c("5000", 64, 90_000, T0), c("10", 64, 100, T0 + 2000)).rate).toBeNull();
    expect(counterRate(c("5000", 32, 1000, T0), c("6000", 64, 1200, T0 + 2000)).rate).toBeNull();
    expect(counterRate(c(null, 32, 1000, T0), c("6000", 32, 1200, T0 + 2000)).rate).toBeNull();
    const { state: kept } = counterRate(c("1", 32, 1000, T0), c("6000", 32, 1200, T0 + 2000));
    expect(kept).toEqual(c("6000", 32, 1200, T0 + 2000));
  });
});

describe("counterRate: the one rate algorithm", () => {
  const c = (value: string | null, bits: 32 | 64, uptime: number | null, at: number): CounterState => ({ value, bits, uptime_ticks: uptime, at_unix_ms: at });

  it("wraps a 64-bit counter near the top, and takes a fall from low 64-bit values as a reset", () => {
    expect(counterRate(c(String(TWO_64 - 100n), 64, 1000, T0), c("900", 64, 2000, T0 + 10_000)).rate).toBe(100);
    expect(counterRate(c("5000000000", 64, 1000, T0), c("12", 64, 2000, T0 + 10_000)).rate).toBeNull();
  });

  it("detects a restart (sysUpTime back, or far behind the wall clock) and starts over from the new reading", () => {
    const before = c("50000000", 32, 900_000, T0);
    const restarted = counterRate(before, c("1000", 32, 1_500, T0 + 60_000));
    expect(restarted.rate).toBeNull();
    expect(counterRate(restarted.state, c("6000", 32, 2_500, T0 + 70_000)).rate).toBe(500);
    // 300 s of wall clock, 20 s of uptime: rebooted in between
    expect(counterRate(c("100", 32, 3_000, T0), c("200", 32, 5_000, T0 + 300_000)).rate).toBeNull();
  });

  it("falls back to the wall clock without uptime, and gives nothing when no time passed", () => {
    expect(counterRate(c("0", 64, null, T0), c("3000", 64, null, T0 + 1_500)).rate).toBe(2000);
    expect(counterRate(c("0", 64, null, T0), c("3000", 64, 100, T0 + 1_500)).rate).toBe(2000);
    expect(counterRate(c("0", 64, 100, T0), c("3000", 64, 100, T0)).rate).toBeNull();
    expect(counterRate(c("0", 64, null, T0), c("3000", 64, null, T0)).rate).toBeNull();
  });

  it("refuses values that are no counter of that width", () => {
    expect(counterRate(c("0", 32, 100, T0), c(String(TWO_32), 32, 1100, T0 + 10_000)).rate).toBeNull();
    expect(counterRate(c("0", 64, 100, T0), c("-1", 64, 1100, T0 + 10_000)).rate).toBeNull();
    expect(counterRate(c("0", 64, 100, T0), c("1e3", 64, 1100, T0 + 10_000)).rate).toBeNull();
    expect(counterRate(c("0", 64, 100, T0), c(null, 64, 1100, T0 + 10_000)).rate).toBeNull();
  });

  it("is what computeRates gives for every interface counter (bits/s = 8 × octets/s)", () => {
    const values = ["0", "1", "1000", "4294967295", String(TWO_32 - 10n), "9007199254740993", String(TWO_64 - 7n), null, "junk"];
    let seed = 11;
    const pick = <T>(xs: readonly T[]) => xs[(seed = (seed * 1103515245 + 12345) % 2147483648) % xs.length];
    const names = ["in_octets", "out_octets", "in_errors", "out_errors", "in_discards", "out_discards"] as const;
    for (let i = 0; i < 1000; i++) {
      const prevCounters = Object.fromEntries(names.map((n) => [n, pick(values)])) as Counters;
      const curCounters = Object.fromEntries(names.map((n) => [n, pick(values)])) as Counters;
      const prev = state({ counter_bits: pick([32, 64] as const), uptime_ticks: pick([null, 100, 50_000]), counters: prevCounters });
      const cur = reading({ counter_bits: pick([32, 64] as const), if_speed_bps: null, counters: curCounters });
      const uptime = pick([null, 100, 51_000]);
      const at = T0 + pick([0, 1_000, 10_000]);
      const got = byMetric(computeRates(prev, cur, uptime, at).samples);
      const one = (name: (typeof names)[number], octets: boolean) =>
        counterRate(
          c(prev.counters[name], octets ? prev.counter_bits : 32, prev.uptime_ticks, prev.at_unix_ms),
          c(cur.counters[name], octets ? cur.counter_bits : 32, uptime, at),
        ).rate;
      const bits = (r: number | null) => (r === null ? undefined : r * 8);
      const plain = (r: number | null) => (r === null ? undefined : r);
      expect([got.if_in_bps, got.if_out_bps]).toEqual([bits(one("in_octets", true)), bits(one("out_octets", true))]);
      expect([got.if_in_errors_ps, got.if_out_errors_ps, got.if_in_discards_ps, got.if_out_discards_ps]).toEqual([
        plain(one("in_errors", false)),
        plain(one("out_errors", false)),
        plain(one("in_discards", false)),
        plain(one("out_discards", false)),
      ]);
    }
  });
});
