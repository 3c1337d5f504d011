/**
 * A destination's filter: which received records it forwards. Checked when a destination is written (`checkFilter`,
 * 400 invalid_filter with the reason) and compiled once per destination for the tee (`compileFilter`). Pure.
 *
 * Every field has a type, and the type says which operators apply and how `value` (always a string) is read:
 *
 * | Type    | Fields                             | Operators                                                   | Value                                         |
 * | ------- | ---------------------------------- | ----------------------------------------------------------- | --------------------------------------------- |
 * | address | source_ip, src_addr, dst_addr      | eq, ne, in_list, in_cidr, not_in_cidr                       | an IP address; in_cidr: prefixes, comma-separated |
 * | integer | facility, severity, proto, ports, AS | eq, ne, in_list, lte, gte                                 | a decimal integer in the field's range        |
 * | kind    | kind                               | eq, ne, in_list                                             | syslog, trap, flow                            |
 * | pool    | pool                               | eq, ne, in_list, contains, not_contains, prefix, regex, not_regex | eq/ne/in_list: pool names                |
 * | text    | hostname, app_name, message        | eq, ne, in_list, contains, not_contains, prefix, regex, not_regex | any text (regex: a safe JavaScript regex) |
 * | oid     | trap_oid                           | eq, ne, in_list, prefix, regex, not_regex                   | a dotted OID; prefix = the OID or under it    |
 * | varbind | varbind                            | eq, ne, contains, not_contains, prefix, regex, not_regex    | text against each `oid=value`                 |
 *
 * - Text comparisons (eq, ne, in_list, contains, not_contains, prefix on hostname, app_name, message, varbind) ignore
 *   case; regexes are case-sensitive (JavaScript, no flags: write `[Ll]ink`). Pool names and kinds compare exactly.
 * - Text operators see the first FILTER_TEXT_MAX characters of a field (a regex never runs on more).
 * - A field the record does not have (null: a flow's `message`, a syslog message's `trap_oid`) matches no condition,
 *   negative operators included. (`pool` is always set by the tee: the receiving poller's pool, `default` on the core.)
 * - `varbind`: a positive operator holds when it holds for any of the trap's varbinds; a negative one (ne,
 *   not_contains, not_regex) holds when its positive holds for none of them.
 * - `in_list`: comma-separated items, blanks around them trimmed, none empty, at most FILTER_LIST_MAX; each read as
 *   the field's value. `in_cidr`/`not_in_cidr` take the same list of prefixes (a bare address is one host).
 * - Mode `all`: every condition holds; `any`: at least one. No conditions: everything is forwarded.
 */
import { compileSafeRegex, ipv4Number, parseCidr, parseIp, type IpPrefix } from "../../../core/index.js";
import { FILTER_FIELDS, FILTER_OPS, SOURCE_KINDS, type CompiledFilter, type Filter, type FilterField, type FilterOp, type FilterSubject } from "./types.js";

/** Most conditions one filter holds. */
export const FILTER_MAX_CONDITIONS = 32;
/** Most items of an `in_list`, `in_cidr` or `not_in_cidr` value. */
export const FILTER_LIST_MAX = 256;
/** Longest `value` of a condition. */
export const FILTER_VALUE_MAX = 4096;
/** Text operators see at most this many characters of a field. */
export const FILTER_TEXT_MAX = 8192;

type FieldType = "address" | "integer" | "kind" | "pool" | "text" | "oid" | "varbind";

const TEXT_OPS: readonly FilterOp[] = ["eq", "ne", "in_list", "contains", "not_contains", "prefix", "regex", "not_regex"];
const OPS_OF: Record<FieldType, readonly FilterOp[]> = {
  address: ["eq", "ne", "in_list", "in_cidr", "not_in_cidr"],
  integer: ["eq", "ne", "in_list", "lte", "gte"],
  kind: ["eq", "ne", "in_list"],
  pool: TEXT_OPS,
  text: TEXT_OPS,
  oid: ["eq", "ne", "in_list", "prefix", "regex", "not_regex"],
  varbind: ["eq", "ne", "contains", "not_contains", "prefix", "regex", "not_regex"],
};

interface FieldSpec {
  type: FieldType;
  /** Integer fields: the inclusive range. */
  range?: readonly [number, number];
}

/** Each field's type (and range), in the spec's order. */
export const FIELD_SPECS: Readonly<Record<FilterField, FieldSpec>> = {
  source_ip: { type: "address" },
  pool: { type: "pool" },
  kind: { type: "kind" },
  facility: { type: "integer", range: [0, 23] },
  severity: { type: "integer", range: [0, 7] },
  hostname: { type: "text" },
  app_name: { type: "text" },
  message: { type: "text" },
  trap_oid: { type: "oid" },
  varbind: { type: "varbind" },
  src_addr: { type: "address" },
  dst_addr: { type: "address" },
  proto: { type: "integer", range: [0, 255] },
  src_port: { type: "integer", range: [0, 65535] },
  dst_port: { type: "integer", range: [0, 65535] },
  src_as: { type: "integer", range: [0, 4294967295] },
  dst_as: { type: "integer", range: [0, 4294967295] },
};

/** The operators a field takes. */
export function opsOf(field: FilterField): readonly FilterOp[] {
  return OPS_OF[FIELD_SPECS[field].type];
}

const NEGATED: ReadonlySet<FilterOp> = new Set(["ne", "not_contains", "not_regex", "not_in_cidr"]);
const POSITIVE: Partial<Record<FilterOp, FilterOp>> = { ne: "eq", not_contains: "contains", not_regex: "regex", not_in_cidr: "in_cidr" };

/** A filter that does not check: the message says which condition and why (never more of the value than needed). */
export class FilterError extends Error {}

type Test<T> = (v: T) => boolean;

const POOL = /^[A-Za-z0-9_-]{1,63}$/;
const OID = /^[0-9]+(\.[0-9]+)*$/;
const INTEGER = /^[0-9]{1,10}$/;

const cut = (s: string) => (s.length > FILTER_TEXT_MAX ? s.slice(0, FILTER_TEXT_MAX) : s);

/** A dotted OID (a leading dot dropped), or null. */
function parseOid(text: string): string | null {
  const oid = text.startsWith(".") ? text.slice(1) : text;
  if (!OID.test(oid) || oid.length > 1024) return null;
  if (oid.split(".").some((a) => a.length > 10 || Number(a) > 0xffffffff)) return null;
  return oid;
}

/** `oid` equals `prefix` or lies under it, on whole arcs. */
const oidUnder = (oid: string, prefix: string) =>
  oid === prefix || (oid.length > prefix.length && oid.startsWith(prefix) && oid.charCodeAt(prefix.length) === 46);

/** The comma-separated items of a list value, trimmed; throws when one is empty or there are too many. */
function listItems(value: string, where: string): string[] {
  const items = value.split(",").map((s) => s.trim());
  if (items.some((s) => s === "")) throw new FilterError(`${where}: the list has an empty item (comma-separated values, none empty)`);
  if (items.length > FILTER_LIST_MAX) throw new FilterError(`${where}: the list has more than ${FILTER_LIST_MAX} items`);
  return items;
}

/** An address reduced to what comparisons need: IPv4 as a number, IPv6 as its bigint. */
type Addr = { family: 4; n: number } | { family: 6; n: bigint };

/** Recently read IPv6 subject addresses (parsing one is far slower than a lookup); cleared when full. */
const V6_CACHE = new Map<string, Addr | null>();
const V6_CACHE_MAX = 4096;

function addrOf(text: string): Addr | null {
  const n = ipv4Number(text);
  if (n >= 0) return { family: 4, n };
  let a = V6_CACHE.get(text);
  if (a !== undefined) return a;
  const ip = parseIp(text);
  a = !ip ? null : ip.family === 4 ? { family: 4, n: Number(ip.value) } : { family: 6, n: ip.value };
  if (V6_CACHE.size >= V6_CACHE_MAX) V6_CACHE.clear();
  V6_CACHE.set(text, a);
  return a;
}

/** A prefix as bounds of the same kind as Addr's values. */
type Range = { family: 4; lo: number; hi: number } | { family: 6; lo: bigint; hi: bigint };

const rangeOf = (p: IpPrefix): Range => (p.family === 4 ? { family: 4, lo: Number(p.network), hi: Number(p.last) } : { family: 6, lo: p.network, hi: p.last });

const inRange = (r: Range, a: Addr) => r.family === a.family && a.n >= r.lo && a.n <= r.hi;

/** The positive test of one condition on the field's (non-null) value. */
function positiveTest(field: FilterField, op: FilterOp, value: string, where: string): Test<never> {
  const spec = FIELD_SPECS[field];
  const bad = (what: string): never => {
    throw new FilterError(`${where}: ${what}`);
  };
  switch (spec.type) {
    case "address": {
      if (op === "in_cidr") {
        const ranges = listItems(value, where).map((t) =>
          rangeOf(parseCidr(t) ?? bad(`"${t.slice(0, 64)}" is not an IP prefix (such as 10.0.0.0/8 or 2001:db8::/32)`)),
        );
        return ((s: string) => {
          const a = addrOf(s);
          if (a === null) return false;
          for (const r of ranges) if (inRange(r, a)) return true;
          return false;
        }) as Test<never>;
      }
      const items = op === "in_list" ? listItems(value, where) : [value.trim()];
      const v4s = new Set<number>();
      const v6s = new Set<bigint>();
      for (const t of items) {
        const a = addrOf(t) ?? bad(`"${t.slice(0, 64)}" is not an IP address`);
        if (a.family === 4) v4s.add(a.n);
        else v6s.add(a.n);
      }
      return ((s: string) => {
        const a = addrOf(s);
        return a !== null && (a.family === 4 ? v4s.has(a.n) : v6s.has(a.n));
      }) as Test<never>;
    }
    case "integer": {
      const [min, max] = spec.range!;
      const num = (t: string): number => {
        const n = INTEGER.test(t) ? Number(t) : NaN;
        if (!(n >= min && n <= max)) bad(`${field} takes an integer from ${min} to ${max}`);
        return n;
      };
      if (op === "in_list") {
        const set = new Set(listItems(value, where).map(num));
        return ((n: number) => set.has(n)) as Test<never>;
      }
      const x = num(value.trim());
      if (op === "lte") return ((n: number) => n <= x) as Test<never>;
      if (op === "gte") return ((n: number) => n >= x) as Test<never>;
      return ((n: number) => n === x) as Test<never>;
    }
    case "kind": {
      const kind = (t: string) => ((SOURCE_KINDS as readonly string[]).includes(t) ? t : bad(`kind takes ${SOURCE_KINDS.join(", ")}`));
      const set = new Set(op === "in_list" ? listItems(value, where).map(kind) : [kind(value.trim())]);
      return ((k: string) => set.has(k)) as Test<never>;
    }
    case "oid": {
      if (op === "regex") return regexTest(value, where) as Test<never>;
      const oid = (t: string) => parseOid(t) ?? bad(`"${t.slice(0, 64)}" is not a dotted OID (such as 1.3.6.1.6.3.1.1.5.3)`);
      if (op === "prefix") {
        const p = oid(value.trim());
        return ((s: string) => oidUnder(s.startsWith(".") ? s.slice(1) : s, p)) as Test<never>;
      }
      const set = new Set(op === "in_list" ? listItems(value, where).map(oid) : [oid(value.trim())]);
      return ((s: string) => set.has(s.startsWith(".") ? s.slice(1) : s)) as Test<never>;
    }
    case "pool": {
      if (op === "regex") return regexTest(value, where) as Test<never>;
      if (value === "") bad(`${op} needs a non-empty value`);
      if (op === "contains") return ((s: string) => s.includes(value)) as Test<never>;
      if (op === "prefix") return ((s: string) => s.startsWith(value)) as Test<never>;
      const pool = (t: string) => (POOL.test(t) ? t : bad(`"${t.slice(0, 64)}" is not a pool name (1 to 63 letters, digits, _ or -)`));
      const set = new Set(op === "in_list" ? listItems(value, where).map(pool) : [pool(value.trim())]);
      return ((s: string) => set.has(s)) as Test<never>;
    }
    case "text":
    case "varbind": {
      if (op === "regex") return regexTest(value, where) as Test<never>;
      if (value === "") bad(`${op} needs a non-empty value`);
      const lower = value.toLowerCase();
      if (op === "contains") return ((s: string) => cut(s).toLowerCase().includes(lower)) as Test<never>;
      if (op === "prefix") return ((s: string) => cut(s).toLowerCase().startsWith(lower)) as Test<never>;
      if (op === "in_list") {
        const set = new Set(listItems(value, where).map((t) => t.toLowerCase()));
        return ((s: string) => set.has(cut(s).toLowerCase())) as Test<never>;
      }
      return ((s: string) => cut(s).toLowerCase() === lower) as Test<never>;
    }
  }
}

function regexTest(pattern: string, where: string): Test<string> {
  if (pattern === "") throw new FilterError(`${where}: regex needs a non-empty pattern`);
  const re = compileSafeRegex(pattern);
  if (typeof re === "string") throw new FilterError(`${where}: the regex ${re}`);
  return (s) => re.test(cut(s));
}

/** The field's value on a subject (varbind: the list of `oid=value` texts). */
function read(s: FilterSubject, field: FilterField): unknown {
  return field === "varbind" ? s.varbinds : s[field];
}

function compileCondition(c: unknown, i: number): CompiledFilter {
  const where = `conditions[${i}]`;
  if (typeof c !== "object" || c === null || Array.isArray(c)) throw new FilterError(`${where}: a condition is an object {field, op, value}`);
  const { field, op, value } = c as Record<string, unknown>;
  if (typeof field !== "string" || !(FILTER_FIELDS as readonly string[]).includes(field))
    throw new FilterError(`${where}: field must be one of ${FILTER_FIELDS.join(", ")}`);
  if (typeof op !== "string" || !(FILTER_OPS as readonly string[]).includes(op)) throw new FilterError(`${where}: op must be one of ${FILTER_OPS.join(", ")}`);
  const f = field as FilterField;
  const o = op as FilterOp;
  const allowed = opsOf(f);
  if (!allowed.includes(o)) throw new FilterError(`${where}: ${o} does not apply to ${f} (it takes ${allowed.join(", ")})`);
  if (typeof value !== "string") throw new FilterError(`${where}: value is a string`);
  if (value.length > FILTER_VALUE_MAX) throw new FilterError(`${where}: value is longer than ${FILTER_VALUE_MAX} characters`);
  const negated = NEGATED.has(o);
  const test = positiveTest(f, negated ? POSITIVE[o]! : o, value, where) as Test<unknown>;
  if (f === "varbind") {
    return negated
      ? (s) => {
          const vs = s.varbinds;
          return vs !== null && !vs.some(test);
        }
      : (s) => {
          const vs = s.varbinds;
          return vs !== null && vs.some(test);
        };
  }
  return negated
    ? (s) => {
        const v = read(s, f);
        return v !== null && v !== undefined && !test(v);
      }
    : (s) => {
        const v = read(s, f);
        return v !== null && v !== undefined && test(v);
      };
}

/** Compiles a filter (null or absent: forward everything); throws FilterError naming the condition that does not check. */
export function compileFilter(filter: Filter | null | undefined): CompiledFilter {
  if (filter === null || filter === undefined) return () => true;
  if (typeof filter !== "object" || Array.isArray(filter)) throw new FilterError("filter is an object {mode, conditions}");
  const { mode = "all", conditions = [] } = filter as Partial<Filter>;
  if (mode !== "all" && mode !== "any") throw new FilterError("mode must be all or any");
  if (!Array.isArray(conditions)) throw new FilterError("conditions is an array");
  if (conditions.length > FILTER_MAX_CONDITIONS) throw new FilterError(`a filter has at most ${FILTER_MAX_CONDITIONS} conditions`);
  const compiled = conditions.map((c, i) => compileCondition(c, i));
  if (compiled.length === 0) return () => true;
  if (compiled.length === 1) return compiled[0];
  return mode === "all" ? (s) => compiled.every((t) => t(s)) : (s) => compiled.some((t) => t(s));
}

/** Null when the filter checks, else the reason (what 400 invalid_filter says). */
export function filterProblem(filter: unknown): string | null {
  try {
    compileFilter(filter as Filter);
    return null;
  } catch (err) {
    if (err instanceof FilterError) return err.message;
    throw err;
  }
}
