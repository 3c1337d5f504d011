/**
 * The event rule engine: matches events against the compiled rules and keeps, per (rule, node), the sliding window of
 * recent matches and whether the rule's alert is active on the node. Pure and synchronous: the caller stores events,
 * raises and clears the alerts the engine returns, calls expire() on a timer and restore() at start.
 *
 * Per rule, an event (that passes the rule's restrictions) comes to:
 * - `cleared`: it matches the clear pattern and the rule's alert is active on the event's node (the alert is cleared);
 *   when the clear pattern matches and no alert is active, the rule contributes nothing (its pattern is not tried).
 * - `fired`: it matches the pattern and is the min_count-th match on the node within window_secs (the window holds the
 *   matches whose time is at most window_secs before this one's).
 * - `suppressed`: it matches the pattern while the rule's alert is active on the node (a repeat: no new alert; it
 *   refreshes the TTL clock).
 * - `counted`: it matches the pattern without firing, or it has no node (alerts need a node: an event without one is
 *   counted, never fires, clears nor suppresses, and keeps no window state).
 * - `unmatched`: nothing.
 * The event's action is the most significant outcome over the rules (fired > cleared > suppressed > counted > unmatched)
 * and rule_id the first rule (in setRules order) that produced it; the alert actions of every rule are returned.
 *
 * Restrictions: a rule with node_id / source_id / source_kind only sees events with that node / ingest source / source
 * kind; a trap_oid or varbind rule only sees traps. Disabled rules see nothing.
 *
 * Memory: a (rule, node) window holds at most min_count timestamps; at most `maxStates` windows are kept (the least
 * recently matched are dropped first, to within maxStates/4 matches). Active alerts are kept apart and never dropped (they are bounded by the alerts).
 */
import type { Varbind } from "../lib/types.js";
import { Subject, type CompiledRule } from "./compile.js";
import { RULE_ACTIONS, type RuleAction, type Severity } from "./vocab.js";

export type AlertAction =
  | { kind: "fire"; rule_id: string; node_id: string; severity: Severity; title: string; at_ms: number; count: number }
  | { kind: "clear"; rule_id: string; node_id: string; at_ms: number; reason: "clear_pattern" | "ttl" };

export interface RuleEvent {
  kind: "syslog" | "trap";
  node_id: string | null;
  source_id: string | null;
  /** `syslog`, `trap` or `http` (SOURCE_KINDS). */
  source_kind: string;
  /** The event text (eventText); cut at EVENT_TEXT_MAX here when longer. */
  text: string;
  trap_oid: string | null;
  varbinds: Varbind[];
  at_ms: number;
}

export interface Evaluation {
  action: RuleAction;
  rule_id: string | null;
  /** Shared and frozen when empty: read it, do not change it. */
  alerts: readonly AlertAction[];
}

/** An active alert, as the store keeps it (restore) or as setRules drops it. */
export interface ActiveAlert {
  rule_id: string;
  node_id: string;
  /** The time of the last matching event (the TTL counts from it). */
  last_ms: number;
}

export interface RuleEngineOptions {
  /** The most (rule, node) windows kept (default 100000). */
  maxStates?: number;
}

/**
 * A rule an event hit: its clear pattern (`clear`: the event has a node and the rule has a clear pattern that matched)
 * or else its pattern. Which outcome that gives depends on the rule's state (RuleEngine.apply).
 */
export interface RuleHit {
  rule_id: string;
  clear: boolean;
}

/**
 * The stateless half of the evaluation: the rules (in order) an event hits, past their restrictions; null when none.
 * Runs where the event is received (a worker thread holds the same compiled rules); RuleEngine.apply does the rest.
 */
export function matchRules(rules: readonly CompiledRule[], e: Omit<RuleEvent, "at_ms">): RuleHit[] | null {
  let hits: RuleHit[] | null = null;
  let subject: Subject | null = null;
  const node = e.node_id;
  for (const r of rules) {
    if (!r.enabled) continue;
    if (r.traps_only && e.kind !== "trap") continue;
    if (r.node_id !== null && r.node_id !== node) continue;
    if (r.source_id !== null && r.source_id !== e.source_id) continue;
    if (r.source_kind !== null && r.source_kind !== e.source_kind) continue;
    subject ??= new Subject(e.kind, e.text, e.trap_oid, e.varbinds);
    if (r.clear !== null && node !== null && r.clear(subject)) (hits ??= []).push({ rule_id: r.id, clear: true });
    else if (r.match(subject)) (hits ??= []).push({ rule_id: r.id, clear: false });
  }
  return hits;
}

/** The recent matches of one rule on one node: a queue of timestamps, at most min_count long. */
interface Window {
  state: RuleState;
  node_id: string;
  times: number[];
  head: number;
  /** The engine's touch counter when the window was last (re)inserted in the recency order. */
  tick: number;
}

interface Active {
  rule_id: string;
  node_id: string;
  last_ms: number;
}

/** One rule and its state: windows and active alerts by node (per rule, so no key is built per event). */
interface RuleState {
  rule: CompiledRule;
  windows: Map<string, Window>;
  active: Map<string, Active>;
}

const RANK: Record<RuleAction, number> = Object.fromEntries(RULE_ACTIONS.map((a, k) => [a, k])) as Record<RuleAction, number>;
/** The alerts of an evaluation that raised and cleared none (shared: evaluate returns it most of the time). */
const NO_ALERTS: readonly AlertAction[] = Object.freeze([]);
const UNMATCHED: Evaluation = Object.freeze({ action: "unmatched", rule_id: null, alerts: NO_ALERTS });

export class RuleEngine {
  private states: RuleState[] = [];
  private ruleList: readonly CompiledRule[] = [];
  private byId = new Map<string, RuleState>();
  /** Every window, least-recently-matched first (a Set keeps insertion order; a touch re-inserts, see matched()). */
  private windows = new Set<Window>();
  private ticks = 0;
  readonly maxStates: number;

  constructor(opts: RuleEngineOptions = {}) {
    this.maxStates = Math.max(1, opts.maxStates ?? 100_000);
  }

  /**
   * Replaces the rules. A rule that keeps its id and its semantics (pattern, kind, clear pattern, enabled, counts,
   * window, ttl, restrictions) keeps its windows and active alerts; the others' state is dropped. Returns the active
   * alerts dropped that way (rule removed, disabled or changed), for the caller to clear or keep as it sees fit.
   */
  setRules(rules: CompiledRule[]): ActiveAlert[] {
    const old = this.byId;
    const states: RuleState[] = [];
    const byId = new Map<string, RuleState>();
    for (const rule of rules) {
      const before = old.get(rule.id);
      const kept = before !== undefined && !byId.has(rule.id) && before.rule.semantics === rule.semantics && rule.enabled;
      const state: RuleState = kept ? before : { rule, windows: new Map(), active: new Map() };
      state.rule = rule;
      states.push(state);
      if (!byId.has(rule.id)) byId.set(rule.id, state);
    }
    const dropped: ActiveAlert[] = [];
    const live = new Set(byId.values());
    for (const s of old.values()) {
      if (live.has(s)) continue;
      for (const a of s.active.values()) dropped.push({ rule_id: a.rule_id, node_id: a.node_id, last_ms: a.last_ms });
      for (const w of s.windows.values()) this.windows.delete(w);
    }
    this.states = states;
    this.byId = byId;
    this.ruleList = states.map((x) => x.rule);
    return dropped;
  }

  /** Resumes active alerts (at start, from the store). Alerts of unknown or disabled rules are skipped; returns how many were restored. */
  restore(active: ActiveAlert[]): number {
    let n = 0;
    for (const a of active) {
      const s = this.byId.get(a.rule_id);
      if (!s || !s.rule.enabled) continue;
      const w = s.windows.get(a.node_id);
      if (w) {
        s.windows.delete(a.node_id);
        this.windows.delete(w);
      }
      s.active.set(a.node_id, { rule_id: a.rule_id, node_id: a.node_id, last_ms: a.last_ms });
      n++;
    }
    return n;
  }

  evaluate(e: RuleEvent): Evaluation {
    return this.apply(e.node_id, e.at_ms, matchRules(this.rules, e));
  }

  /**
   * The stateful half of evaluate(): the hits of an event (matchRules, which a receiving worker thread may have run)
   * applied to the windows and active alerts. Hits of rules no longer set (edited meanwhile) are skipped.
   */
  apply(node: string | null, at_ms: number, hits: readonly RuleHit[] | null): Evaluation {
    if (hits === null) return UNMATCHED;
    let action: RuleAction = "unmatched";
    let rank = 0;
    let rule_id: string | null = null;
    let alerts: AlertAction[] | null = null;
    for (const h of hits) {
      const s = this.byId.get(h.rule_id);
      if (!s?.rule.enabled) continue;
      const r = s.rule;
      let outcome: RuleAction = "unmatched";
      if (h.clear) {
        if (node !== null && s.active.delete(node)) {
          outcome = "cleared";
          (alerts ??= []).push({ kind: "clear", rule_id: r.id, node_id: node, at_ms, reason: "clear_pattern" });
        }
      } else if (node === null) outcome = "counted";
      else {
        const a = s.active.get(node);
        if (a) {
          if (at_ms > a.last_ms) a.last_ms = at_ms;
          outcome = "suppressed";
        } else {
          const count = this.matched(s, node, at_ms);
          if (count > 0) {
            outcome = "fired";
            (alerts ??= []).push(this.fire(s, node, at_ms, count));
          } else outcome = "counted";
        }
      }
      const k = RANK[outcome];
      if (k > rank) {
        rank = k;
        action = outcome;
        rule_id = r.id;
      }
    }
    return { action, rule_id, alerts: alerts ?? NO_ALERTS };
  }

  /** The rules, in setRules order (what matchRules takes). */
  get rules(): readonly CompiledRule[] {
    return this.ruleList;
  }

  /** Counts a match of the rule on the node (no alert active there): the count when it fires (the min_count-th match in the window), else 0. */
  private matched(s: RuleState, node: string, at: number): number {
    const r = s.rule;
    const tick = ++this.ticks;
    let w = s.windows.get(node);
    let stored = w !== undefined;
    // Moving a window to the recent end costs a delete and an insert: done only once it has aged past a quarter of
    // the cap (so the order is least-recently-matched to within maxStates/4 touches).
    if (w && tick - w.tick > this.maxStates / 4) {
      this.drop(w);
      stored = false;
    }
    w ??= { state: s, node_id: node, times: [], head: 0, tick };
    const from = at - r.window_secs * 1000;
    while (w.head < w.times.length && w.times[w.head] < from) w.head++;
    if (w.head > 16 && w.head * 2 > w.times.length) {
      w.times = w.times.slice(w.head);
      w.head = 0;
    }
    w.times.push(at);
    const count = w.times.length - w.head;
    if (count >= r.min_count) {
      // The matches that fired are spent: once the alert clears, min_count new matches are needed to fire again.
      if (stored) this.drop(w);
      s.active.set(node, { rule_id: r.id, node_id: node, last_ms: at });
      return count;
    }
    if (!stored) {
      w.tick = tick;
      s.windows.set(node, w);
      this.windows.add(w);
    }
    if (this.windows.size > this.maxStates) {
      const oldest = this.windows.values().next().value;
      if (oldest !== undefined) this.drop(oldest);
    }
    return 0;
  }

  private fire(s: RuleState, node: string, at: number, count: number): AlertAction {
    const r = s.rule;
    return { kind: "fire", rule_id: r.id, node_id: node, severity: r.severity, title: r.name, at_ms: at, count };
  }

  private drop(w: Window): void {
    this.windows.delete(w);
    if (w.state.windows.get(w.node_id) === w) w.state.windows.delete(w.node_id);
  }

  /** Clears the active alerts whose last match is ttl_secs or more before now_ms, and drops windows with no match left in them. */
  expire(now_ms: number): AlertAction[] {
    const out: AlertAction[] = [];
    for (const s of this.byId.values()) {
      const ttl = s.rule.ttl_secs;
      if (ttl !== null)
        for (const [node, a] of s.active)
          if (now_ms - a.last_ms >= ttl * 1000) {
            s.active.delete(node);
            out.push({ kind: "clear", rule_id: a.rule_id, node_id: a.node_id, at_ms: now_ms, reason: "ttl" });
          }
    }
    for (const w of this.windows) {
      const newest = w.times[w.times.length - 1];
      if (newest === undefined || newest < now_ms - w.state.rule.window_secs * 1000) this.drop(w);
    }
    return out;
  }

  /** Drops the windows and active alerts of the nodes `gone` names (their partition moved to another replica, ADR 0017). */
  forgetNodes(gone: (nodeId: string) => boolean): void {
    for (const s of this.byId.values()) {
      for (const [node, w] of s.windows) if (gone(node)) this.drop(w);
      for (const node of [...s.active.keys()]) if (gone(node)) s.active.delete(node);
    }
  }

  /** The active alerts (for the store and tests). */
  activeAlerts(): ActiveAlert[] {
    const out: ActiveAlert[] = [];
    for (const s of this.byId.values()) for (const a of s.active.values()) out.push({ ...a });
    return out;
  }

  /** How many (rule, node) windows and active alerts are kept. */
  stateCounts(): { windows: number; active: number } {
    let active = 0;
    for (const s of this.byId.values()) active += s.active.size;
    return { windows: this.windows.size, active };
  }

  /** The matches currently counted in a rule's window on a node. */
  windowCount(rule_id: string, node_id: string): number {
    const w = this.byId.get(rule_id)?.windows.get(node_id);
    return w ? w.times.length - w.head : 0;
  }
}
