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
  alerts: AlertAction[];
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

/** The recent matches of one rule on one node: a queue of timestamps, at most min_count long. */
interface Window {
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

const RANK: Record<RuleAction, number> = Object.fromEntries(RULE_ACTIONS.map((a, k) => [a, k])) as Record<RuleAction, number>;
const key = (rule_id: string, node_id: string) => `${rule_id}\u0000${node_id}`;

export class RuleEngine {
  private rules: CompiledRule[] = [];
  private byId = new Map<string, CompiledRule>();
  /** Windows in least-recently-matched-first order (a Map keeps insertion order; a touch re-inserts, see matched()). */
  private windows = new Map<string, Window>();
  private active = new Map<string, Active>();
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
    this.rules = rules.slice();
    this.byId = new Map(rules.map((r) => [r.id, r]));
    const keep = (rule_id: string) => {
      const before = old.get(rule_id);
      const now = this.byId.get(rule_id);
      return before !== undefined && now !== undefined && before.semantics === now.semantics && now.enabled;
    };
    const dropped: ActiveAlert[] = [];
    for (const [k, a] of this.active)
      if (!keep(a.rule_id)) {
        this.active.delete(k);
        dropped.push({ rule_id: a.rule_id, node_id: a.node_id, last_ms: a.last_ms });
      }
    for (const k of this.windows.keys()) if (!keep(k.slice(0, k.indexOf("\u0000")))) this.windows.delete(k);
    return dropped;
  }

  /** Resumes active alerts (at start, from the store). Alerts of unknown or disabled rules are skipped; returns how many were restored. */
  restore(active: ActiveAlert[]): number {
    let n = 0;
    for (const a of active) {
      const r = this.byId.get(a.rule_id);
      if (!r || !r.enabled) continue;
      const k = key(a.rule_id, a.node_id);
      this.windows.delete(k);
      this.active.set(k, { rule_id: a.rule_id, node_id: a.node_id, last_ms: a.last_ms });
      n++;
    }
    return n;
  }

  evaluate(e: RuleEvent): Evaluation {
    let action: RuleAction = "unmatched";
    let rule_id: string | null = null;
    const alerts: AlertAction[] = [];
    const node = e.node_id;
    let subject: Subject | null = null;
    for (const r of this.rules) {
      if (!r.enabled) continue;
      if (r.traps_only && e.kind !== "trap") continue;
      if (r.node_id !== null && r.node_id !== node) continue;
      if (r.source_id !== null && r.source_id !== e.source_id) continue;
      if (r.source_kind !== null && r.source_kind !== e.source_kind) continue;
      subject ??= new Subject(e.kind, e.text, e.trap_oid, e.varbinds);
      let outcome: RuleAction = "unmatched";
      if (r.clear !== null && node !== null && r.clear(subject)) {
        const k = key(r.id, node);
        if (this.active.delete(k)) {
          outcome = "cleared";
          alerts.push({ kind: "clear", rule_id: r.id, node_id: node, at_ms: e.at_ms, reason: "clear_pattern" });
        }
      } else if (r.match(subject)) outcome = node === null ? "counted" : this.matched(r, node, e.at_ms, alerts);
      if (RANK[outcome] > RANK[action]) {
        action = outcome;
        rule_id = r.id;
      }
    }
    return { action, rule_id, alerts };
  }

  private matched(r: CompiledRule, node: string, at: number, alerts: AlertAction[]): RuleAction {
    const k = key(r.id, node);
    const a = this.active.get(k);
    if (a) {
      if (at > a.last_ms) a.last_ms = at;
      return "suppressed";
    }
    const tick = ++this.ticks;
    let w = this.windows.get(k);
    // Moving a window to the recent end costs a Map delete and insert: done only once it has aged past a quarter of
    // the cap (so the order is least-recently-matched to within maxStates/4 touches).
    if (w && tick - w.tick > this.maxStates / 4) this.windows.delete(k);
    w ??= { times: [], head: 0, tick };
    const from = at - r.window_secs * 1000;
    while (w.head < w.times.length && w.times[w.head] < from) w.head++;
    if (w.head > 16 && w.head * 2 > w.times.length) {
      w.times = w.times.slice(w.head);
      w.head = 0;
    }
    w.times.push(at);
    const count = w.times.length - w.head;
    if (count >= r.min_count) {
      this.active.set(k, { rule_id: r.id, node_id: node, last_ms: at });
      alerts.push({ kind: "fire", rule_id: r.id, node_id: node, severity: r.severity, title: r.name, at_ms: at, count });
      return "fired";
    }
    if (!this.windows.has(k)) {
      w.tick = tick;
      this.windows.set(k, w);
    }
    if (this.windows.size > this.maxStates) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    return "counted";
  }

  /** Clears the active alerts whose last match is ttl_secs or more before now_ms, and drops windows with no match left in them. */
  expire(now_ms: number): AlertAction[] {
    const out: AlertAction[] = [];
    for (const [k, a] of this.active) {
      const r = this.byId.get(a.rule_id);
      if (!r || r.ttl_secs === null) continue;
      if (now_ms - a.last_ms >= r.ttl_secs * 1000) {
        this.active.delete(k);
        out.push({ kind: "clear", rule_id: a.rule_id, node_id: a.node_id, at_ms: now_ms, reason: "ttl" });
      }
    }
    for (const [k, w] of this.windows) {
      const r = this.byId.get(k.slice(0, k.indexOf("\u0000")));
      const newest = w.times[w.times.length - 1];
      if (!r || newest === undefined || newest < now_ms - r.window_secs * 1000) this.windows.delete(k);
    }
    return out;
  }

  /** The active alerts (for the store and tests). */
  activeAlerts(): ActiveAlert[] {
    return [...this.active.values()].map((a) => ({ ...a }));
  }

  /** How many (rule, node) windows and active alerts are kept. */
  stateCounts(): { windows: number; active: number } {
    return { windows: this.windows.size, active: this.active.size };
  }

  /** The matches currently counted in a rule's window on a node. */
  windowCount(rule_id: string, node_id: string): number {
    const w = this.windows.get(key(rule_id, node_id));
    return w ? w.times.length - w.head : 0;
  }
}
