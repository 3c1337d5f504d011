/**
 * Rule precedence: which threshold applies to a sample. Pure; the RuleResolver
 * service feeds it the rules and the node's directory row.
 *
 * The most specific scope that has a rule for the metric wins:
 *   interface (`<node>:<ifindex>`) > node > folder (nearest folder first along the
 *   node's folder path) > profile (the node's profile) > global.
 * At one scope, a rule whose `row_match` matches the sample's row name wins over a
 * rule without a pattern; a rule whose pattern does not match does not apply at
 * all. Between equals, the oldest rule (created_at, then id) wins.
 */
import { isUuid } from "../../../core/index.js";
import type { Bounds, Direction } from "./bands.js";

export const SCOPE_LEVELS = ["global", "profile", "folder", "node", "interface"] as const;
export type ScopeLevel = (typeof SCOPE_LEVELS)[number];

export interface ThresholdRule extends Bounds {
  id: string;
  metric: string;
  scope_level: ScopeLevel;
  direction: Direction;
  warning: number | null;
  critical: number | null;
  dwell_samples: number;
  scope_ids: string[];
  row_match: string | null;
  created_at: string;
}

export interface CompiledRule {
  rule: ThresholdRule;
  /** The compiled row_match, or null for "every row". */
  rowRegex: RegExp | null;
}

/** What precedence needs to know about the sample and its node. */
export interface SampleTarget {
  node_id: string;
  metric: string;
  ifindex: number | null;
  row_name: string | null;
  /** Folder ids from the root down to the node's folder. */
  folder_path: readonly string[];
  profile_id: string | null;
}

/** `*` matches any run of characters (none included); everything else literally; case-insensitive; the whole name. */
export function rowMatcher(pattern: string): RegExp {
  const body = pattern
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, "is");
}

export function rowMatches(pattern: string, rowName: string | null): boolean {
  return rowName !== null && rowMatcher(pattern).test(rowName);
}

/** The key of an interface scope id: `<node uuid>:<ifindex>`, node id lower-cased. */
export function portKey(nodeId: string, ifindex: number): string {
  return `${nodeId.toLowerCase()}:${ifindex}`;
}

/** Parses `<node uuid>:<ifindex>`; null when it is not one (ifindex 0 to 2^31-1). */
export function parsePort(id: string): { node_id: string; ifindex: number } | null {
  const colon = id.lastIndexOf(":");
  const node = id.slice(0, colon);
  const index = id.slice(colon + 1);
  if (colon < 0 || !isUuid(node) || !/^(0|[1-9][0-9]{0,9})$/.test(index)) return null;
  const ifindex = Number(index);
  if (ifindex > 2147483647) return null;
  return { node_id: node.toLowerCase(), ifindex };
}

function byAge(a: CompiledRule, b: CompiledRule): number {
  if (a.rule.created_at !== b.rule.created_at) return a.rule.created_at < b.rule.created_at ? -1 : 1;
  return a.rule.id < b.rule.id ? -1 : a.rule.id > b.rule.id ? 1 : 0;
}

/** At one scope: the oldest rule whose pattern matches the row, else the oldest rule without a pattern, else null. */
export function pickAtScope(candidates: readonly CompiledRule[] | undefined, rowName: string | null): CompiledRule | null {
  if (!candidates || candidates.length === 0) return null;
  let plain: CompiledRule | null = null;
  for (const c of candidates) {
    if (c.rowRegex) {
      if (rowName !== null && c.rowRegex.test(rowName)) return c;
    } else if (!plain) {
      plain = c;
    }
  }
  return plain;
}

interface MetricIndex {
  interface: Map<string, CompiledRule[]>;
  node: Map<string, CompiledRule[]>;
  folder: Map<string, CompiledRule[]>;
  profile: Map<string, CompiledRule[]>;
  global: CompiledRule[];
}

export interface Resolution {
  compiled: CompiledRule;
  /** The scope the winning rule was found at. */
  scope: ScopeLevel;
}

/** All rules, indexed by metric and scope target, ready for per-sample resolution. */
export class RuleIndex {
  private readonly byMetric = new Map<string, MetricIndex>();
  readonly size: number;

  constructor(rules: readonly ThresholdRule[]) {
    const compiled = rules.map((rule) => ({ rule, rowRegex: rule.row_match ? rowMatcher(rule.row_match) : null })).sort(byAge);
    for (const c of compiled) {
      let idx = this.byMetric.get(c.rule.metric);
      if (!idx) {
        idx = { interface: new Map(), node: new Map(), folder: new Map(), profile: new Map(), global: [] };
        this.byMetric.set(c.rule.metric, idx);
      }
      if (c.rule.scope_level === "global") {
        idx.global.push(c);
        continue;
      }
      const map = idx[c.rule.scope_level];
      for (const raw of c.rule.scope_ids) {
        const key = raw.toLowerCase();
        const list = map.get(key);
        if (list) list.push(c);
        else map.set(key, [c]);
      }
    }
    this.size = compiled.length;
  }

  /** The metrics some rule names. */
  metrics(): string[] {
    return [...this.byMetric.keys()];
  }

  hasMetric(metric: string): boolean {
    return this.byMetric.has(metric);
  }

  resolve(t: SampleTarget): Resolution | null {
    const idx = this.byMetric.get(t.metric);
    if (!idx) return null;
    const node = t.node_id.toLowerCase();
    let hit: CompiledRule | null;
    if (t.ifindex !== null && idx.interface.size > 0) {
      hit = pickAtScope(idx.interface.get(portKey(node, t.ifindex)), t.row_name);
      if (hit) return { compiled: hit, scope: "interface" };
    }
    if (idx.node.size > 0) {
      hit = pickAtScope(idx.node.get(node), t.row_name);
      if (hit) return { compiled: hit, scope: "node" };
    }
    if (idx.folder.size > 0) {
      for (let i = t.folder_path.length - 1; i >= 0; i--) {
        hit = pickAtScope(idx.folder.get(t.folder_path[i].toLowerCase()), t.row_name);
        if (hit) return { compiled: hit, scope: "folder" };
      }
    }
    if (t.profile_id !== null && idx.profile.size > 0) {
      hit = pickAtScope(idx.profile.get(t.profile_id.toLowerCase()), t.row_name);
      if (hit) return { compiled: hit, scope: "profile" };
    }
    hit = pickAtScope(idx.global, t.row_name);
    return hit ? { compiled: hit, scope: "global" } : null;
  }
}
