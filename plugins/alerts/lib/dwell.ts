/**
 * Dwell: a change of severity is committed only after `dwell` consecutive samples
 * agree on it, in both directions (escalation, de-escalation and clearing).
 *
 * A streak is a run of consecutive samples whose level differs from the committed
 * one on the same side (all worse, or all better). When it reaches `dwell` samples
 * the level every sample of the run reached is committed: the least severe of the
 * run going up, the most severe going down. So with dwell 3, warning, critical,
 * critical from normal commits warning (all three were at least warning), and
 * critical needs three critical samples of its own. A sample at the committed level,
 * or on the other side, starts over.
 */
import type { Level } from "./bands.js";

export interface DwellState {
  /** The committed level (0 = no open incident). */
  level: Level;
  /** Side of the current streak: 1 worse, -1 better, 0 none. */
  dir: -1 | 0 | 1;
  /** Samples in the current streak. */
  len: number;
  /** Level every sample of the streak reached (min going up, max going down). */
  bound: Level;
}

export function newDwellState(level: Level = 0): DwellState {
  return { level, dir: 0, len: 0, bound: level };
}

/** Feeds one sample's level; returns the newly committed level, or null when nothing is committed. Mutates `s`. */
export function dwellStep(s: DwellState, target: Level, dwell: number): Level | null {
  if (target === s.level) {
    s.dir = 0;
    s.len = 0;
    s.bound = s.level;
    return null;
  }
  const dir = target > s.level ? 1 : -1;
  if (s.dir !== dir) {
    s.dir = dir;
    s.len = 0;
    s.bound = target;
  }
  s.len += 1;
  s.bound = (dir > 0 ? Math.min(s.bound, target) : Math.max(s.bound, target)) as Level;
  if (s.len < Math.max(1, dwell)) return null;
  const committed = s.bound;
  s.level = committed;
  s.dir = 0;
  s.len = 0;
  s.bound = committed;
  return committed;
}
