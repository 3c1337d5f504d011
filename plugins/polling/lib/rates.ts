/**
 * Counters to rates: the poller's one rate algorithm (counterRate), used for interface counters
 * (computeRates) and collection-template counters alike. Pure functions, BigInt arithmetic on the
 * raw counter strings (Counter64 values do not fit a double exactly). Handles the first reading
 * (no rate yet), counter wrap (2^32 or 2^64), agent restarts (sysUpTime went back, or advanced
 * less than the wall clock since the previous poll), missing counters and a change of counter
 * width (32 ↔ 64 bits). A rate is never negative: when the two readings cannot be compared,
 * there is no rate.
 */
import { METRICS } from "../contract.js";
import type { InterfaceReading, InterfaceState } from "../poller/types.js";

const TWO_32 = 1n << 32n;
const TWO_64 = 1n << 64n;
const DIGITS = /^[0-9]{1,20}$/;

/** When a reading was taken: the agent's sysUpTime (hundredths of a second) and the poller's clock. */
export interface ReadingTime {
  uptime_ticks: number | null;
  at_unix_ms: number;
}

/**
 * Seconds between two readings, or null when they cannot be compared:
 * sysUpTime went back (the agent restarted, or its 32-bit uptime wrapped after 497 days), or it
 * advanced clearly less than the wall clock (the agent restarted in between and has since been up
 * longer than it had been before). Uptime ticks are used when both readings have them, else the
 * wall clock.
 */
export function elapsedSeconds(prev: ReadingTime, cur: ReadingTime): number | null {
  const wall = (cur.at_unix_ms - prev.at_unix_ms) / 1000;
  if (prev.uptime_ticks !== null && cur.uptime_ticks !== null) {
    if (cur.uptime_ticks < prev.uptime_ticks) return null;
    const ticks = (cur.uptime_ticks - prev.uptime_ticks) / 100;
    // Slack for network delay and retries between the agent's clock and the poller's.
    if (wall > 0 && ticks + Math.max(5, wall * 0.2) < wall) return null;
    return ticks > 0 ? ticks : null;
  }
  return wall > 0 ? wall : null;
}

/**
 * How much a counter grew, or null: a missing value, a value out of range for its width, or a
 * decrease that is no plausible wrap. A 32-bit counter that went down wrapped once (2^32 added:
 * a reset without an agent restart cannot be told apart). A 64-bit counter only wraps after
 * passing the top half of its range, so a decrease from below 2^63 is a reset, not a wrap.
 */
export function counterDelta(prev: string | null | undefined, cur: string | null | undefined, bits: 32 | 64): bigint | null {
  if (prev == null || cur == null || !DIGITS.test(prev) || !DIGITS.test(cur)) return null;
  const p = BigInt(prev);
  const c = BigInt(cur);
  const modulus = bits === 64 ? TWO_64 : TWO_32;
  if (p >= modulus || c >= modulus) return null;
  if (c >= p) return c - p;
  const wrapped = modulus - p + c;
  if (bits === 64 && wrapped >= TWO_64 / 2n) return null;
  return wrapped;
}

export interface RateSample {
  metric: string;
  value: number;
  ifindex: number;
}

export interface InterfaceRates {
  /** Rates for this interface (empty on a first reading, after a restart, ...). */
  samples: RateSample[];
  /** What to keep for the next poll of this interface. */
  state: InterfaceState;
}

/**
 * Rates of one interface from the previous state and this reading: if_in_bps, if_out_bps,
 * if_in/out_errors_ps, if_in/out_discards_ps, and if_util_in/out_pct when the speed is known.
 * Octets use the reading's counter width (HC counters: 64); errors and discards are always
 * Counter32 in IF-MIB. A change of width between the readings drops the octet rates only.
 */
export function computeRates(prev: InterfaceState | null | undefined, reading: InterfaceReading, uptimeTicks: number | null, atUnixMs: number): InterfaceRates {
  const state: InterfaceState = {
    ifindex: reading.ifindex,
    counter_bits: reading.counter_bits,
    counters: { ...reading.counters },
    uptime_ticks: uptimeTicks,
    at_unix_ms: atUnixMs,
  };
  if (!prev || prev.ifindex !== reading.ifindex) return { samples: [], state };

  /** counterRate of one of the interface's counters; `octets` have the reading's width, the others are Counter32. */
  const rateOf = (name: keyof InterfaceState["counters"], octets: boolean): number | null =>
    counterRate(
      { value: prev.counters[name], bits: octets ? prev.counter_bits : 32, uptime_ticks: prev.uptime_ticks, at_unix_ms: prev.at_unix_ms },
      { value: reading.counters[name], bits: octets ? reading.counter_bits : 32, uptime_ticks: uptimeTicks, at_unix_ms: atUnixMs },
    ).rate;

  const samples: RateSample[] = [];
  const push = (metric: string, value: number | null) => {
    if (value !== null && Number.isFinite(value) && value >= 0) samples.push({ metric, value, ifindex: reading.ifindex });
  };
  const bits = (perSecond: number | null) => (perSecond === null ? null : perSecond * 8);
  const inBps = bits(rateOf("in_octets", true));
  const outBps = bits(rateOf("out_octets", true));
  push(METRICS.ifInBps, inBps);
  push(METRICS.ifOutBps, outBps);
  const speed = reading.if_speed_bps;
  if (speed !== null && speed > 0) {
    push(METRICS.ifUtilInPct, inBps === null ? null : (inBps / speed) * 100);
    push(METRICS.ifUtilOutPct, outBps === null ? null : (outBps / speed) * 100);
  }
  push(METRICS.ifInErrorsPs, rateOf("in_errors", false));
  push(METRICS.ifOutErrorsPs, rateOf("out_errors", false));
  push(METRICS.ifInDiscardsPs, rateOf("in_discards", false));
  push(METRICS.ifOutDiscardsPs, rateOf("out_discards", false));
  return { samples, state };
}

/** One counter reading for counterRate: its raw value, width and when it was read. */
export interface CounterState extends ReadingTime {
  value: string | null;
  bits: 32 | 64;
}

/**
 * The rate algorithm: per-second growth of one counter between two readings, and the reading to
 * keep for the next one. No rate on a first reading, an agent restart (elapsedSeconds), a missing
 * or out-of-range value, a decrease that is no plausible wrap (counterDelta) or a change of width.
 */
export function counterRate(prev: CounterState | undefined, cur: CounterState): { rate: number | null; state: CounterState } {
  const state = { ...cur };
  if (!prev || prev.bits !== cur.bits) return { rate: null, state };
  const seconds = elapsedSeconds(prev, cur);
  if (seconds === null) return { rate: null, state };
  const delta = counterDelta(prev.value, cur.value, cur.bits);
  if (delta === null) return { rate: null, state };
  const rate = Number(delta) / seconds;
  return { rate: Number.isFinite(rate) && rate >= 0 ? rate : null, state };
}
