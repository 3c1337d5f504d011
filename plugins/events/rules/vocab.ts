/**
 * The event rules' vocabularies and bounds (the spec leaves them to us; this file is their documentation).
 *
 * A rule matches events; `min_count` matches of one node's events within `window_secs` raise an alert on that node
 * (with the rule's `severity`); `clear_pattern` clears it; `ttl_secs` clears it after that long without a matching event.
 */

/**
 * How `pattern` (and `clear_pattern`) are read.
 *
 * - `substring`: case-insensitive substring of the event text (see `eventText`).
 * - `exact`: the whole event text equals the pattern (case-sensitive).
 * - `regex`: a JavaScript regular expression, without flags, tested against the event text. Inline flags such as a
 *   `(?i)` prefix are not supported (JavaScript has no inline flags: such a pattern is refused); write `[Ll]ink` instead.
 *   Patterns that can take super-linear time are refused (see the core's `regexSafety`, used by `compile.ts`): backreferences, nested
 *   repetitions, repeated groups whose alternatives overlap, two unbounded repetitions that can match the same text,
 *   lookbehinds containing repetitions, groups repeated more than 32 times, counts above 1000.
 * - `trap_oid`: a dotted OID (a leading dot is allowed and dropped); matches a trap whose trap OID equals it or lies under
 *   it (prefix on whole arcs: `1.3.6.1.4.1.9` matches `1.3.6.1.4.1.9.9.41` but not `1.3.6.1.4.1.99`). Traps only.
 * - `varbind`: `OID=value` or `OID~regex`: a trap with a varbind whose OID equals OID (or lies under it) and whose value
 *   as text equals `value` (case-sensitive; `OID=` matches an empty value) or matches `regex` (same rules as `regex`).
 *   Traps only.
 *
 * The event text of a syslog message is its message part (the raw text for a record that did not parse); the event text
 * of a trap is `<trap_oid> <oid>=<value> <oid>=<value> ...`. The text is cut at `EVENT_TEXT_MAX` characters before matching.
 */
export const MATCH_KINDS = ["substring", "exact", "regex", "trap_oid", "varbind"] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

/** Match kinds that only ever see traps. */
export const TRAP_MATCH_KINDS: readonly MatchKind[] = ["trap_oid", "varbind"];

/** The severity of the alert a rule raises. */
export const SEVERITIES = ["info", "warning", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * Where an event came from, for a rule's `source_kind` restriction: `syslog` (the syslog listeners), `trap` (the trap
 * listener), `http` (the HTTP ingest source, whatever the event's kind).
 */
export const SOURCE_KINDS = ["syslog", "trap", "http"] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** What an event's evaluation came to, least to most significant. */
export const RULE_ACTIONS = ["unmatched", "counted", "suppressed", "cleared", "fired"] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

/** Inclusive bounds of a rule's fields, and the values a null (or absent) field takes. */
export const RULE_BOUNDS = {
  name: { min: 1, max: 120 },
  pattern: { min: 1, max: 1024 },
  /** Null: 1 (every match fires). */
  min_count: { min: 1, max: 100_000, default: 1 },
  /** Null: 60. */
  window_secs: { min: 1, max: 86_400, default: 60 },
  /** Null: no TTL (the alert stays until the clear pattern or an operator clears it). */
  ttl_secs: { min: 1, max: 604_800 },
} as const;

/** The event text is cut at this many characters before any pattern runs on it (a bound on a regex's work). */
export const EVENT_TEXT_MAX = 8192;
