import { Inject, Injectable } from "@tsed/di";
import type { Queryable } from "../../../core/index.js";
import type { Classification, Classifier } from "../contract.js";
import { RuleReadRepository, type RuleRecord } from "../repositories/RuleReadRepository.js";

export type { RuleRecord } from "../repositories/RuleReadRepository.js";

/** Rules ready for many decisions: enabled only, in evaluation order, regexes compiled once. */
export interface CompiledRules {
  readonly compiled: true;
  readonly entries: readonly CompiledRule[];
}

interface CompiledRule {
  rule: RuleRecord;
  /** Dotted OID without leading dots, or null. */
  prefix: string | null;
  /** null when the rule has no regex or its stored regex does not compile (then it never matches by sysDescr). */
  regex: RegExp | null;
}

/** "1.3.6.1" from ".1.3.6.1" or " 1.3.6.1 "; null when nothing is left. */
function normaliseOid(oid: string | null | undefined): string | null {
  if (oid === null || oid === undefined) return null;
  const s = oid.trim().replace(/^\.+/, "");
  return s.length ? s : null;
}

/** Dotted prefix on component boundaries: "1.3.6.1.4.1.9" holds "1.3.6.1.4.1.9" and "1.3.6.1.4.1.9.1.516", not "1.3.6.1.4.1.99". */
export function oidHasPrefix(oid: string, prefix: string): boolean {
  return oid === prefix || (oid.startsWith(prefix) && oid.charCodeAt(prefix.length) === 46); /* "." */
}

function compileRegex(source: string | null): RegExp | null {
  if (source === null || source === "") return null;
  try {
    // Case-insensitive: agents spell the same platform "Cisco IOS", "CISCO IOS" or "cisco ios".
    return new RegExp(source, "i");
  } catch {
    // A stored regex that does not compile (written before validation, or by another engine) is skipped, never fatal.
    return null;
  }
}

/** uuid order as PostgreSQL sorts them (lower-case hex text sorts the same way). */
function compareIds(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Compiles the rules once for many pickRule() calls: disabled rules dropped, ascending priority then id. */
export function compileRules(rules: readonly RuleRecord[]): CompiledRules {
  const entries = rules
    .filter((r) => r.enabled)
    .sort((a, b) => a.priority - b.priority || compareIds(a.id, b.id))
    .map((rule) => ({ rule, prefix: normaliseOid(rule.sysobjectid_prefix), regex: compileRegex(rule.sysdescr_regex) }));
  return { compiled: true, entries };
}

/**
 * Which rule wins for a (sysObjectID, sysDescr) pair, or null when none does.
 *
 * - Only enabled rules count, in ascending priority (then id).
 * - A sysObjectID prefix match is authoritative: the first rule, in that order, whose
 *   prefix holds the sysObjectID wins, whatever regex rules come before it.
 * - Only when no prefix matches does the first rule whose sysDescr regex matches win.
 * - A rule with both fields takes part in both passes: it wins by prefix when its prefix
 *   matches, else it may still win by its regex in the second pass.
 * - Regexes are case-insensitive (JavaScript syntax, searched anywhere in sysDescr);
 *   a stored regex that does not compile is skipped, and an empty one counts as none.
 *
 * Pure: give it the rules (compiled once per call) or a compileRules() result (for bulk use).
 */
export function pickRule(rules: readonly RuleRecord[] | CompiledRules, sysObjectId: string | null, sysDescr: string | null): Classification | null {
  const set = "compiled" in rules ? rules : compileRules(rules);
  const oid = normaliseOid(sysObjectId);
  if (oid !== null) {
    for (const e of set.entries) {
      if (e.prefix !== null && oidHasPrefix(oid, e.prefix)) return classification(e.rule, "sysobjectid");
    }
  }
  if (sysDescr !== null && sysDescr !== undefined) {
    for (const e of set.entries) {
      if (e.regex !== null && e.regex.test(sysDescr)) return classification(e.rule, "sysdescr");
    }
  }
  return null;
}

function classification(rule: RuleRecord, matched_by: Classification["matched_by"]): Classification {
  return { rule_id: rule.id, profile_id: rule.profile_id, matched_by, vendor: rule.vendor, model: rule.model };
}

/**
 * The classifier (part of the plugin's contract): which rule and profile win for a
 * device's sysObjectID and sysDescr, from the stored classification rules.
 */
@Injectable()
export class ClassifierService implements Classifier {
  @Inject(RuleReadRepository)
  private rulesRepo: RuleReadRepository;

  /** The winning rule's classification for one device, or null when no enabled rule matches. */
  async classify(sysObjectId: string | null, sysDescr: string | null): Promise<Classification | null> {
    return pickRule(await this.rules(), sysObjectId, sysDescr);
  }

  /** The enabled rules, compiled, for many decisions in a row (one read; pass a transaction client to read inside it). */
  async rules(db?: Queryable): Promise<CompiledRules> {
    return compileRules(await this.rulesRepo.enabledRules(db));
  }
}
