/**
 * Threshold bands: which severity a value falls in under a rule's four bounds.
 * Pure functions; no I/O.
 */

export type Direction = "above" | "below";
/** Threshold severities the engine commits (info is never produced by a threshold). */
export type BandSeverity = "warning" | "critical";

/** The four bounds of a rule; null = that side/level is not watched. */
export interface Bounds {
  warning_above: number | null;
  critical_above: number | null;
  warning_below: number | null;
  critical_below: number | null;
}

/** Where a value falls: the severity, the side it crossed and the bound it crossed. */
export interface BandHit {
  severity: BandSeverity;
  direction: Direction;
  threshold: number;
}

/** Rank of a committed level: 0 = no incident, 1 = warning, 2 = critical. */
export type Level = 0 | 1 | 2;

export const LEVEL_OF: Readonly<Record<BandSeverity, Level>> = { warning: 1, critical: 2 };
export const SEVERITY_OF_LEVEL: readonly (BandSeverity | null)[] = [null, "warning", "critical"];

/** Input of the older shape: a direction with its primary-side warning and critical bounds. */
export interface LegacyBounds {
  direction: Direction;
  warning?: number | null;
  critical?: number | null;
}

/**
 * The bounds a rule body stands for. The four explicit bounds win as soon as any of
 * them carries a value; otherwise `warning` and `critical` are read on the side
 * `direction` names (above: at or above; below: at or below).
 */
export function resolveBounds(legacy: LegacyBounds, four: Partial<Bounds>): Bounds {
  const explicit: Bounds = {
    warning_above: four.warning_above ?? null,
    critical_above: four.critical_above ?? null,
    warning_below: four.warning_below ?? null,
    critical_below: four.critical_below ?? null,
  };
  if (Object.values(explicit).some((v) => v !== null)) return explicit;
  const warning = legacy.warning ?? null;
  const critical = legacy.critical ?? null;
  return legacy.direction === "above"
    ? { warning_above: warning, critical_above: critical, warning_below: null, critical_below: null }
    : { warning_above: null, critical_above: null, warning_below: warning, critical_below: critical };
}

/** The primary-side pair (kept beside the four bounds for older readers): the side `direction` names. */
export function primaryPair(direction: Direction, b: Bounds): { warning: number | null; critical: number | null } {
  return direction === "above" ? { warning: b.warning_above, critical: b.critical_above } : { warning: b.warning_below, critical: b.critical_below };
}

/**
 * Why a set of bounds cannot work, or null when it can: no bound at all; a critical
 * bound that is less severe than its warning bound (critical_above below
 * warning_above, critical_below above warning_below); or a band whose lower side
 * reaches its upper side (every value would alert).
 */
export function boundsProblem(b: Bounds): string | null {
  const above = [b.warning_above, b.critical_above].filter((v): v is number => v !== null);
  const below = [b.warning_below, b.critical_below].filter((v): v is number => v !== null);
  if (above.length === 0 && below.length === 0) return "A threshold needs at least one bound (warning or critical, above or below).";
  if (b.warning_above !== null && b.critical_above !== null && b.critical_above < b.warning_above) {
    return "critical_above must be at or above warning_above.";
  }
  if (b.warning_below !== null && b.critical_below !== null && b.critical_below > b.warning_below) {
    return "critical_below must be at or below warning_below.";
  }
  if (above.length > 0 && below.length > 0 && Math.max(...below) >= Math.min(...above)) {
    return "The below bounds must lie under the above bounds (a band alerts outside of it).";
  }
  return null;
}

/**
 * The band a value is in: critical when at or above critical_above or at or below
 * critical_below, else warning likewise, else null (normal). Critical wins over
 * warning; with both sides set the rule alerts outside the band.
 */
export function classify(value: number, b: Bounds): BandHit | null {
  if (!Number.isFinite(value)) return null;
  if (b.critical_above !== null && value >= b.critical_above) return { severity: "critical", direction: "above", threshold: b.critical_above };
  if (b.critical_below !== null && value <= b.critical_below) return { severity: "critical", direction: "below", threshold: b.critical_below };
  if (b.warning_above !== null && value >= b.warning_above) return { severity: "warning", direction: "above", threshold: b.warning_above };
  if (b.warning_below !== null && value <= b.warning_below) return { severity: "warning", direction: "below", threshold: b.warning_below };
  return null;
}

/** The level of a hit (0 when normal). */
export function levelOf(hit: BandHit | null): Level {
  return hit ? LEVEL_OF[hit.severity] : 0;
}

/**
 * The hit to record when `level` is committed from a sample: the sample's own hit
 * when it is at that level, else the bound of that level on the sample's side
 * (a de-escalation committed by a streak whose samples were at different levels).
 */
export function hitAtLevel(level: Level, value: number, b: Bounds): BandHit | null {
  if (level === 0) return null;
  const own = classify(value, b);
  if (own && LEVEL_OF[own.severity] === level) return own;
  const severity = SEVERITY_OF_LEVEL[level]!;
  const candidates: BandHit[] = [];
  const add = (bound: number | null, direction: Direction) => {
    if (bound !== null) candidates.push({ severity, direction, threshold: bound });
  };
  if (level === 2) {
    add(b.critical_above, "above");
    add(b.critical_below, "below");
  } else {
    add(b.warning_above, "above");
    add(b.warning_below, "below");
  }
  if (candidates.length <= 1) return candidates[0] ?? null;
  // Both sides: the side the value is nearer to.
  return candidates.sort((x, y) => Math.abs(value - x.threshold) - Math.abs(value - y.threshold))[0];
}
