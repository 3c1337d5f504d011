/**
 * Validates an event rule's body and compiles its patterns into matchers (the vocabularies and bounds are in vocab.ts).
 */
import type { Inbound, Varbind } from "../lib/types.js";
import { compileSafeRegex } from "../../../core/worker.js";
import {
  EVENT_TEXT_MAX,
  MATCH_KINDS,
  RULE_BOUNDS,
  SEVERITIES,
  SOURCE_KINDS,
  TRAP_MATCH_KINDS,
  type MatchKind,
  type Severity,
  type SourceKind,
} from "./vocab.js";

/** What a matcher looks at: one event, prepared once for all the rules (see Subject). */
export interface MatchSubject {
  kind: "syslog" | "trap";
  /** The event text, already cut at EVENT_TEXT_MAX. */
  text: string;
  /** The text lowercased (computed at most once per event). */
  lower(): string;
  /**
   * False when the lowercased text surely holds no such pair of characters (a 4096-bit filter of its character pairs,
   * built for texts of PAIR_FILTER_MIN characters or more; a shorter text is searched directly, which costs less).
   */
  mayHavePair(h: number): boolean;
  trap_oid: string | null;
  varbinds: Varbind[];
}

/** Texts shorter than this are not filtered (searching 40 substring patterns in them costs less than building the filter). */
export const PAIR_FILTER_MIN = 512;

/** The filter slot of a pair of (lowercased) characters. */
export const pairHash = (a: number, b: number) => ((a * 31) ^ b) & 4095;

/** A MatchSubject: the text cut, the lowercased text and its pair filter computed lazily, once. */
export class Subject implements MatchSubject {
  readonly text: string;
  private lowered: string | null = null;
  private pairs: Uint32Array | null = null;
  constructor(
    readonly kind: "syslog" | "trap",
    text: string,
    readonly trap_oid: string | null = null,
    readonly varbinds: Varbind[] = [],
  ) {
    this.text = text.length > EVENT_TEXT_MAX ? text.slice(0, EVENT_TEXT_MAX) : text;
  }
  lower(): string {
    return (this.lowered ??= this.text.toLowerCase());
  }
  mayHavePair(h: number): boolean {
    if (this.text.length < PAIR_FILTER_MIN) return true;
    let bits = this.pairs;
    if (bits === null) {
      bits = this.pairs = new Uint32Array(128);
      const t = this.lower();
      for (let k = 1; k < t.length; k++) {
        const x = pairHash(t.charCodeAt(k - 1), t.charCodeAt(k));
        bits[x >>> 5] |= 1 << (x & 31);
      }
    }
    return (bits[h >>> 5] & (1 << (h & 31))) !== 0;
  }
}

export type Matcher = (s: MatchSubject) => boolean;

/** A valid rule, ready for the engine. */
export interface CompiledRule {
  /** The rule's id (the store's row id; compileRule's second argument). */
  id: string;
  name: string;
  pattern: string;
  match_kind: MatchKind;
  severity: Severity;
  clear_pattern: string | null;
  enabled: boolean;
  /** The normalised values (nulls replaced by their defaults, except ttl_secs). */
  min_count: number;
  window_secs: number;
  ttl_secs: number | null;
  node_id: string | null;
  source_id: string | null;
  source_kind: SourceKind | null;
  /** True for the trap-only match kinds. */
  traps_only: boolean;
  match: Matcher;
  clear: Matcher | null;
  /** Equal for two rules whose matching and counting behave the same (the engine keeps their state across setRules). */
  semantics: string;
}

export type CompileResult = { ok: true; rule: CompiledRule } | { ok: false; field: string; message: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A dotted OID: first arc 0-2, at least two arcs, at most 128, each arc below 2^32. */
const OID = /^[0-2](\.(0|[1-9]\d{0,9}))+$/;

/** An OID pattern without its leading dot, or null when it is not a dotted OID. */
export function parseOid(text: string): string | null {
  const oid = text.startsWith(".") ? text.slice(1) : text;
  if (!OID.test(oid)) return null;
  const arcs = oid.split(".");
  if (arcs.length > 128 || arcs.some((a) => Number(a) > 0xffffffff)) return null;
  return oid;
}

/** `oid` equals `prefix` or lies under it (whole arcs). */
export const oidUnder = (oid: string, prefix: string) =>
  oid === prefix || (oid.length > prefix.length && oid.startsWith(prefix) && oid.charCodeAt(prefix.length) === 46);

const cut = (s: string) => (s.length > EVENT_TEXT_MAX ? s.slice(0, EVENT_TEXT_MAX) : s);

/** A varbind's value as text: null as the empty text, numbers in decimal. */
export const varbindText = (v: Varbind) => (v.value === null ? "" : String(v.value));

/**
 * The text that substring, exact and regex patterns match: a syslog message's message part (a raw record's raw text);
 * a trap's `<trap_oid> <oid>=<value> ...`. Cut at EVENT_TEXT_MAX characters.
 */
export function eventText(e: Pick<Inbound, "kind" | "syslog" | "trap" | "raw">): string {
  if (e.kind === "trap" && e.trap) {
    let s = e.trap.trap_oid;
    for (const v of e.trap.varbinds) {
      if (s.length >= EVENT_TEXT_MAX) break;
      s += ` ${v.oid}=${varbindText(v)}`;
    }
    return cut(s);
  }
  if (e.syslog) return cut(e.syslog.message);
  return cut(e.raw ?? "");
}

type PatternResult = { ok: true; match: Matcher } | { ok: false; message: string };

/** Compiles one pattern for its match kind. */
export function compilePattern(kind: MatchKind, pattern: string): PatternResult {
  switch (kind) {
    case "substring": {
      const p = pattern.toLowerCase();
      if (p.length < 2) return { ok: true, match: (s) => s.lower().includes(p) };
      // Many substring rules run on every event: two character pairs of the pattern are looked up in the event's pair
      // filter before the text is searched.
      const first = pairHash(p.charCodeAt(0), p.charCodeAt(1));
      const last = pairHash(p.charCodeAt(p.length - 2), p.charCodeAt(p.length - 1));
      return { ok: true, match: (s) => s.mayHavePair(last) && s.mayHavePair(first) && s.lower().includes(p) };
    }
    case "exact":
      return { ok: true, match: (s) => s.text === pattern };
    case "regex": {
      const re = compileSafeRegex(pattern);
      if (typeof re === "string") return { ok: false, message: re };
      return { ok: true, match: (s) => re.test(s.text) };
    }
    case "trap_oid": {
      const oid = parseOid(pattern);
      if (!oid) return { ok: false, message: "is not a dotted OID (such as 1.3.6.1.6.3.1.1.5.3)" };
      return { ok: true, match: (s) => s.trap_oid !== null && oidUnder(s.trap_oid, oid) };
    }
    case "varbind": {
      const m = /^([^=~]*)([=~])([\s\S]*)$/.exec(pattern);
      if (!m) return { ok: false, message: "is not a varbind pattern (OID=value or OID~regex)" };
      const oid = parseOid(m[1]);
      if (!oid) return { ok: false, message: `names no dotted OID before ${m[2]} (OID=value or OID~regex)` };
      const value = m[3];
      let test: (text: string) => boolean;
      if (m[2] === "=") test = (t) => t === value;
      else {
        const re = compileSafeRegex(value);
        if (typeof re === "string") return { ok: false, message: `value regex ${re}` };
        test = (t) => re.test(cut(t));
      }
      return {
        ok: true,
        match: (s) => {
          for (const v of s.varbinds) if (oidUnder(v.oid, oid) && test(varbindText(v))) return true;
          return false;
        },
      };
    }
  }
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

/** The first invalid field of a rule body, thrown by the steps of compileRule and answered as its failure. */
class RuleInvalid extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** A required name or pattern within its bounds. */
function requiredText(field: "name" | "pattern", v: unknown): string {
  const { min, max } = RULE_BOUNDS[field];
  if (v === undefined || v === null) throw new RuleInvalid(field, "is required");
  if (typeof v !== "string") throw new RuleInvalid(field, "must be a string");
  if (v.length < min || v.length > max || (field === "name" && v.trim() === ""))
    throw new RuleInvalid(field, `must be ${min} to ${max} characters${field === "name" ? ", not all blanks" : ""}`);
  return v;
}

/** A required value of a vocabulary. */
function requiredOneOf<T extends string>(field: string, v: unknown, values: readonly T[]): T {
  if (v === undefined || v === null) throw new RuleInvalid(field, "is required");
  if (typeof v !== "string" || !(values as readonly string[]).includes(v)) throw new RuleInvalid(field, `must be one of ${values.join(", ")}`);
  return v as T;
}

/** What the rule matches and raises: name, pattern, match kind, severity, clear pattern, enabled. */
function ruleDefinition(b: Record<string, unknown>) {
  const name = requiredText("name", b.name);
  const pattern = requiredText("pattern", b.pattern);
  const match_kind = requiredOneOf<MatchKind>("match_kind", b.match_kind, MATCH_KINDS);
  const severity = requiredOneOf<Severity>("severity", b.severity, SEVERITIES);

  let clear_pattern: string | null = null;
  if (b.clear_pattern !== undefined && b.clear_pattern !== null) {
    const { min, max } = RULE_BOUNDS.pattern;
    if (typeof b.clear_pattern !== "string") throw new RuleInvalid("clear_pattern", "must be a string or null");
    if (b.clear_pattern.length < min || b.clear_pattern.length > max) throw new RuleInvalid("clear_pattern", `must be ${min} to ${max} characters`);
    clear_pattern = b.clear_pattern;
  }

  let enabled = true;
  if (b.enabled !== undefined && b.enabled !== null) {
    if (typeof b.enabled !== "boolean") throw new RuleInvalid("enabled", "must be a boolean");
    enabled = b.enabled;
  }
  return { name, pattern, match_kind, severity, clear_pattern, enabled };
}

/** An optional integer within its bounds (null when absent). */
function optionalInt(b: Record<string, unknown>, field: "min_count" | "window_secs" | "ttl_secs"): number | null {
  const v = b[field];
  if (v === undefined || v === null) return null;
  const { min, max } = RULE_BOUNDS[field];
  if (!isInt(v)) throw new RuleInvalid(field, "must be an integer or null");
  if (v < min || v > max) throw new RuleInvalid(field, `must be ${min} to ${max}`);
  return v;
}

/** How matches are counted: min_count and window_secs with their defaults, ttl_secs as given. */
function ruleCounting(b: Record<string, unknown>) {
  const min_count = optionalInt(b, "min_count");
  const window_secs = optionalInt(b, "window_secs");
  const ttl_secs = optionalInt(b, "ttl_secs");
  return {
    min_count: min_count ?? RULE_BOUNDS.min_count.default,
    window_secs: window_secs ?? RULE_BOUNDS.window_secs.default,
    ttl_secs,
  };
}

/** An optional UUID, lowercased (null when absent). */
function optionalUuid(b: Record<string, unknown>, field: "node_id" | "source_id"): string | null {
  const v = b[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || !UUID.test(v)) throw new RuleInvalid(field, "must be a UUID or null");
  return v.toLowerCase();
}

/** Which events the rule sees: node, source, source kind (a trap-only match kind never sees the syslog source). */
function ruleScope(b: Record<string, unknown>, match_kind: MatchKind) {
  const node_id = optionalUuid(b, "node_id");
  const source_id = optionalUuid(b, "source_id");
  let source_kind: SourceKind | null = null;
  if (b.source_kind !== undefined && b.source_kind !== null) {
    if (typeof b.source_kind !== "string" || !(SOURCE_KINDS as readonly string[]).includes(b.source_kind))
      throw new RuleInvalid("source_kind", `must be one of ${SOURCE_KINDS.join(", ")}, or null`);
    source_kind = b.source_kind as SourceKind;
  }
  const traps_only = TRAP_MATCH_KINDS.includes(match_kind);
  if (traps_only && source_kind === "syslog") throw new RuleInvalid("source_kind", `a ${match_kind} rule only sees traps, never the syslog source`);
  return { node_id, source_id, source_kind, traps_only };
}

/** The matchers of the pattern and the clear pattern. */
function ruleMatchers(match_kind: MatchKind, pattern: string, clear_pattern: string | null): { match: Matcher; clear: Matcher | null } {
  const m = compilePattern(match_kind, pattern);
  if (!m.ok) throw new RuleInvalid("pattern", `${match_kind} pattern ${m.message}`);
  if (clear_pattern === null) return { match: m.match, clear: null };
  const c = compilePattern(match_kind, clear_pattern);
  if (!c.ok) throw new RuleInvalid("clear_pattern", `${match_kind} pattern ${c.message}`);
  return { match: m.match, clear: c.match };
}

/** The key under which two rules match and count alike. */
function ruleSemantics(rule: Omit<CompiledRule, "semantics">): string {
  return JSON.stringify([
    rule.pattern,
    rule.match_kind,
    rule.clear_pattern,
    rule.enabled,
    rule.min_count,
    rule.window_secs,
    rule.ttl_secs,
    rule.node_id,
    rule.source_id,
    rule.source_kind,
  ]);
}

/** Validates a rule body (the API's create/replace body) and compiles it. `id` is the rule's id, when it has one. */
export function compileRule(body: unknown, id = ""): CompileResult {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, field: "body", message: "must be an object" };
  const b = body as Record<string, unknown>;
  try {
    const def = ruleDefinition(b);
    const counting = ruleCounting(b);
    const scope = ruleScope(b, def.match_kind);
    const matchers = ruleMatchers(def.match_kind, def.pattern, def.clear_pattern);
    const rule: Omit<CompiledRule, "semantics"> = {
      id,
      name: def.name,
      pattern: def.pattern,
      match_kind: def.match_kind,
      severity: def.severity,
      clear_pattern: def.clear_pattern,
      enabled: def.enabled,
      min_count: counting.min_count,
      window_secs: counting.window_secs,
      ttl_secs: counting.ttl_secs,
      node_id: scope.node_id,
      source_id: scope.source_id,
      source_kind: scope.source_kind,
      traps_only: scope.traps_only,
      match: matchers.match,
      clear: matchers.clear,
    };
    return { ok: true, rule: { ...rule, semantics: ruleSemantics(rule) } };
  } catch (err) {
    if (err instanceof RuleInvalid) return { ok: false, field: err.field, message: err.message };
    throw err;
  }
}
