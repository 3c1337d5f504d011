/**
 * A static check that a JavaScript regular expression (no flags) cannot take catastrophic time on a bounded text.
 *
 * The pattern is parsed into a small tree (character sets, repetitions, groups, assertions) and refused when it has:
 * - a backreference (matching them is NP-hard in general);
 * - a repetition count above REGEX_MAX_COUNT;
 * - a lookbehind containing a repetition;
 * - a group repeated more than REGEX_MAX_GROUP_REPEAT times (`(ab)+`: each iteration costs a backtracking frame);
 * - nested repetitions (star height above 1: `(a+)+`, `(.*a){20}`), except the delimited form `(\d+\.){3}` where every
 *   variable repetition in the group is a single class followed at once by a character it cannot match;
 * - a repeated group whose alternatives can start with the same character, or one of which matches the empty text
 *   (`(a|aa)+`, `(a|a)*`);
 * - two variable repetitions that can match the same text one after the other, along some path of the pattern
 *   (`.*a.*b`, `\d+\d*`, `[ab]{2,5}\w{2,5}`): the polynomial blow-up (cubic with the search's own start positions);
 * - so many alternatives or optional parts that the check itself would take long ("too complex to check").
 *
 * The check is conservative (some harmless patterns are refused; the message says why and how to rewrite). What stays
 * allowed is at worst quadratic in the text (a single unbounded repetition tried from every start position), and the
 * text must be cut at a bounded length before any regex runs on it (the events plugin cuts at 8 KiB). Plugins take it from
 * the core (`compileSafeRegex`, `regexUnsafeReason`) for every pattern a user sends.
 */
/** A regex repetition count above this is refused (`a{1001}`). */
export const REGEX_MAX_COUNT = 1000;
/** A parenthesised group may repeat at most this many times (`(ab){32}`). */
export const REGEX_MAX_GROUP_REPEAT = 32;

/** Sorted, disjoint, non-adjacent inclusive UTF-16 code unit ranges. */
type Ranges = [number, number][];

type Node = (
  | { t: "set"; set: Ranges }
  | { t: "assert" }
  | { t: "backref" }
  | { t: "group"; alts: Node[][]; look: null | "ahead" | "behind" }
  | { t: "rep"; body: Node; min: number; max: number }
) & { at?: [number, number] };

const MAXCU = 0xffff;

function norm(r: Ranges): Ranges {
  const s = r.filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: Ranges = [];
  for (const [a, b] of s) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}
const union = (a: Ranges, b: Ranges): Ranges => norm([...a.map((x): [number, number] => [x[0], x[1]]), ...b.map((x): [number, number] => [x[0], x[1]])]);
function complement(r: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [a, b] of r) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= MAXCU) out.push([next, MAXCU]);
  return out;
}
function intersect(a: Ranges, b: Ranges): Ranges {
  const out: Ranges = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i][0], b[j][0]);
    const hi = Math.min(a[i][1], b[j][1]);
    if (lo <= hi) out.push([lo, hi]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}
const overlaps = (a: Ranges, b: Ranges) => intersect(a, b).length > 0;

const ch = (c: string): Ranges => [[c.charCodeAt(0), c.charCodeAt(0)]];
const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = norm([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]);
const SPACE: Ranges = norm([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const DOT: Ranges = complement(
  norm([
    [0x0a, 0x0a],
    [0x0d, 0x0d],
    [0x2028, 0x2029],
  ]),
);
const ANY: Ranges = [[0, MAXCU]];

class Unsafe extends Error {}

/** A parser for the flagless (Annex B) syntax; the pattern has already compiled, so it only needs to be understood. */
class Parser {
  private i = 0;
  private readonly named: boolean;
  constructor(private readonly s: string) {
    this.named = /\(\?<[A-Za-z_$]/.test(s);
  }

  parse(): Node & { t: "group" } {
    const alts = this.alts();
    return { t: "group", alts, look: null };
  }

  private alts(): Node[][] {
    const alts: Node[][] = [this.seq()];
    while (this.s[this.i] === "|") {
      this.i++;
      alts.push(this.seq());
    }
    return alts;
  }

  private seq(): Node[] {
    const items: Node[] = [];
    while (this.i < this.s.length && this.s[this.i] !== "|" && this.s[this.i] !== ")") {
      const start = this.i;
      let atom = this.atom();
      atom.at = [start, this.i];
      for (;;) {
        const q = this.quantifier();
        if (!q) break;
        atom = { t: "rep", body: atom, min: q[0], max: q[1], at: [start, this.i] };
      }
      items.push(atom);
    }
    return items;
  }

  private quantifier(): [number, number] | null {
    const c = this.s[this.i];
    let q: [number, number] | null = null;
    if (c === "*") q = [0, Infinity];
    else if (c === "+") q = [1, Infinity];
    else if (c === "?") q = [0, 1];
    if (q) this.i++;
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
      if (!m) return null;
      this.i += m[0].length;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      if (min > REGEX_MAX_COUNT || (max !== Infinity && max > REGEX_MAX_COUNT))
        throw new Unsafe(`a repetition count above ${REGEX_MAX_COUNT} ({${m[0].slice(1, -1)}})`);
      q = [min, max];
    } else return null;
    if (this.s[this.i] === "?") this.i++;
    return q;
  }

  private atom(): Node {
    const s = this.s;
    const c = s[this.i++];
    switch (c) {
      case "^":
      case "$":
        return { t: "assert" };
      case ".":
        return { t: "set", set: DOT };
      case "[":
        return { t: "set", set: this.cls() };
      case "(": {
        let look: null | "ahead" | "behind" = null;
        if (s.startsWith("?:", this.i)) this.i += 2;
        else if (s.startsWith("?=", this.i) || s.startsWith("?!", this.i)) {
          this.i += 2;
          look = "ahead";
        } else if (s.startsWith("?<=", this.i) || s.startsWith("?<!", this.i)) {
          this.i += 3;
          look = "behind";
        } else if (s.startsWith("?<", this.i)) this.i = s.indexOf(">", this.i) + 1;
        const alts = this.alts();
        this.i++; // ")"
        return { t: "group", alts, look };
      }
      case "\\":
        return this.escape(false) as Node;
      default:
        return { t: "set", set: ch(c) };
    }
  }

  /** An escape after the backslash: a set, an assertion (\b, \B) or a backreference; in a class, a set. */
  private escape(inClass: boolean): Node | Ranges {
    const s = this.s;
    const c = s[this.i++];
    const set = (r: Ranges) => (inClass ? r : ({ t: "set", set: r } as Node));
    switch (c) {
      case "d":
        return set(DIGIT);
      case "D":
        return set(complement(DIGIT));
      case "w":
        return set(WORD);
      case "W":
        return set(complement(WORD));
      case "s":
        return set(SPACE);
      case "S":
        return set(complement(SPACE));
      case "b":
        return inClass ? ch("\b") : { t: "assert" };
      case "B":
        return inClass ? ch("B") : { t: "assert" };
      case "n":
        return set(ch("\n"));
      case "r":
        return set(ch("\r"));
      case "t":
        return set(ch("\t"));
      case "f":
        return set(ch("\f"));
      case "v":
        return set(ch("\v"));
      case "c": {
        const l = s[this.i];
        if (l && /[A-Za-z]/.test(l)) {
          this.i++;
          return set([[l.charCodeAt(0) % 32, l.charCodeAt(0) % 32]]);
        }
        return set(ch("\\"));
      }
      case "x": {
        const m = /^[0-9A-Fa-f]{2}/.exec(s.slice(this.i));
        if (!m) return set(ch("x"));
        this.i += 2;
        const v = parseInt(m[0], 16);
        return set([[v, v]]);
      }
      case "u": {
        const m = /^[0-9A-Fa-f]{4}/.exec(s.slice(this.i));
        if (!m) return set(ch("u"));
        this.i += 4;
        const v = parseInt(m[0], 16);
        return set([[v, v]]);
      }
      case "k":
        if (!inClass && this.named && s[this.i] === "<") throw new Unsafe("a backreference (\\k<name>)");
        return set(ch("k"));
      default:
        if (c >= "1" && c <= "9") {
          if (!inClass) throw new Unsafe(`a backreference (\\${c})`);
          return set(ANY); // octal escape in a class: any value will do for the analysis
        }
        if (c === "0") {
          // \0 or a legacy octal escape: consume its digits.
          while (/[0-7]/.test(s[this.i] ?? "") && this.i < s.length) this.i++;
          return set(ANY);
        }
        return set(ch(c));
    }
  }

  private cls(): Ranges {
    const s = this.s;
    let negate = false;
    if (s[this.i] === "^") {
      negate = true;
      this.i++;
    }
    let out: Ranges = [];
    const single = (): Ranges => {
      const c = s[this.i++];
      if (c === "\\") return this.escape(true) as Ranges;
      return ch(c);
    };
    while (this.i < s.length && s[this.i] !== "]") {
      const a = single();
      if (s[this.i] === "-" && s[this.i + 1] !== "]" && this.i + 1 < s.length && a.length === 1 && a[0][0] === a[0][1]) {
        const save = this.i;
        this.i++;
        const b = single();
        if (b.length === 1 && b[0][0] === b[0][1]) {
          out = union(out, [[a[0][0], b[0][0]]]);
          continue;
        }
        // `[a-\d]`: the dash is literal (Annex B).
        this.i = save;
      }
      out = union(out, a);
    }
    this.i++; // "]"
    return negate ? complement(out) : out;
  }
}

const nullable = (n: Node): boolean =>
  n.t === "assert" ||
  n.t === "backref" ||
  (n.t === "rep" && (n.min === 0 || nullable(n.body))) ||
  (n.t === "group" && (n.look !== null || n.alts.some((a) => a.every(nullable))));

/** The characters a node can start with. */
function first(n: Node): Ranges {
  if (n.t === "set") return n.set;
  if (n.t === "rep") return first(n.body);
  if (n.t === "group" && n.look === null) return n.alts.reduce<Ranges>((acc, a) => union(acc, firstSeq(a)), []);
  return [];
}
function firstSeq(items: Node[]): Ranges {
  let acc: Ranges = [];
  for (const it of items) {
    acc = union(acc, first(it));
    if (!nullable(it)) break;
  }
  return acc;
}

const isVariableRep = (n: Node): boolean => n.t === "rep" && n.min < n.max;
function hasVariableRep(n: Node): boolean {
  if (n.t === "rep") return n.min < n.max || hasVariableRep(n.body);
  if (n.t === "group") return n.alts.some((a) => a.some(hasVariableRep));
  return false;
}
/**
 * `(\d+\.){3}`: the group's one alternative is a sequence where every variable repetition is of a single class and is
 * followed at once by a mandatory single character it cannot match; so each iteration's split is forced.
 */
function delimited(body: Node): boolean {
  if (body.t !== "group" || body.look !== null || body.alts.length !== 1) return false;
  const items = body.alts[0];
  for (let k = 0; k < items.length; k++) {
    const it = items[k];
    if (it.t === "group") return false;
    if (it.t !== "rep") continue;
    if (it.body.t !== "set") return false;
    if (!isVariableRep(it)) continue;
    const next = items[k + 1];
    if (!next || next.t !== "set" || overlaps(next.set, it.body.set)) return false;
  }
  return true;
}

function hasRep(n: Node): boolean {
  if (n.t === "rep") return true;
  if (n.t === "group") return n.alts.some((a) => a.some(hasRep));
  return false;
}

/** The structural checks: backreferences and counts were refused while parsing. */
function walk(n: Node): void {
  if (n.t === "group") {
    if (n.look === "behind" && n.alts.some((a) => a.some(hasRep))) throw new Unsafe("a lookbehind containing a repetition");
    for (const a of n.alts) for (const it of a) walk(it);
    return;
  }
  if (n.t !== "rep") return;
  const b = n.body;
  if (n.max > 1) {
    if (hasVariableRep(b) && !delimited(b)) throw new Unsafe("nested repetitions (a repeated group containing a repetition, as in (a+)+)");
    if (b.t === "group" && b.look === null && b.alts.length > 1) {
      if (b.alts.some((a) => a.every(nullable))) throw new Unsafe("a repeated group with an alternative that matches the empty text");
      for (let x = 0; x < b.alts.length; x++)
        for (let y = x + 1; y < b.alts.length; y++)
          if (overlaps(firstSeq(b.alts[x]), firstSeq(b.alts[y]))) throw new Unsafe("a repeated group whose alternatives overlap (as in (a|aa)+)");
    }
  }
  if (b.t === "group" && n.max > REGEX_MAX_GROUP_REPEAT)
    throw new Unsafe(
      `a group repeated more than ${REGEX_MAX_GROUP_REPEAT} times; repeat a character or a class instead ([ab]+ rather than (a|b)+), or bound the group ({1,${REGEX_MAX_GROUP_REPEAT}})`,
    );
  walk(b);
}

/** One element of a linear path through the pattern. */
interface PathItem {
  set: Ranges;
  /** Matches a variable number of characters (a repetition with min < max, or an optional copy). */
  variable: boolean;
  /** Can be skipped (matched by the empty text). */
  optional: boolean;
}

const MAX_PATHS = 256;
/** Path items built and pairs compared by the polynomial check before it gives up on the pattern as too complex. */
const MAX_WORK = 2_000_000;
let work = 0;
const spend = (n: number) => {
  work += n;
  if (work > MAX_WORK) throw new Unsafe("too complex to check in reasonable time; simplify it");
};

/**
 * Every character item of a node once, all optional and variable (its alternatives inlined side by side); a repeated
 * group's body twice (enough for one copy to meet the next).
 */
function flatItems(n: Node): PathItem[] {
  let out: PathItem[];
  switch (n.t) {
    case "set":
      out = [{ set: n.set, variable: true, optional: true }];
      break;
    case "assert":
    case "backref":
      out = [];
      break;
    case "group":
      out = n.look !== null ? [] : n.alts.flatMap((a) => a.flatMap(flatItems));
      break;
    case "rep": {
      const body = flatItems(n.body);
      out = n.max > 1 && n.body.t !== "set" ? [...body, ...body] : body;
    }
  }
  spend(out.length);
  return out;
}

/** Concatenates path sets; past MAX_PATHS the node's items are inlined once, optional, instead of its branches. */
function concat(acc: PathItem[][], tails: PathItem[][], n: Node | null): PathItem[][] {
  if (acc.length * tails.length > MAX_PATHS) {
    const flat = n ? flatItems(n) : tails.flat().map((p) => ({ ...p, optional: true, variable: true }));
    spend(acc.length * flat.length);
    return acc.map((p) => [...p, ...flat]);
  }
  const out = acc.flatMap((p) => tails.map((t) => [...p, ...t]));
  spend(out.reduce((k, p) => k + p.length, 0));
  return out;
}

/** The linear paths of a sequence (alternations multiply them). */
function paths(items: Node[], optional: boolean): PathItem[][] {
  let acc: PathItem[][] = [[]];
  for (const it of items) acc = concat(acc, itemPaths(it, optional), it);
  return acc;
}

function itemPaths(n: Node, optional: boolean): PathItem[][] {
  switch (n.t) {
    case "set":
      return [[{ set: n.set, variable: optional, optional }]];
    case "assert":
    case "backref":
      return [[]];
    case "group": {
      if (n.look !== null) return [[]];
      const out = n.alts.flatMap((a) => paths(a, optional));
      return out.length > MAX_PATHS ? [flatItems(n)] : out;
    }
    case "rep": {
      if (n.body.t === "set") return [[{ set: n.body.set, variable: optional || n.min < n.max, optional: optional || n.min === 0 }]];
      // A group repeated at most REGEX_MAX_GROUP_REPEAT times (walk() refused more), unrolled: one path set per count
      // (the copies past the minimum variable); too many paths: the node's items inlined once, optional.
      const max = Math.min(n.max, REGEX_MAX_GROUP_REPEAT);
      const body = itemPaths(n.body, optional);
      if (body.length > 1 && max > 1 && body.length ** Math.min(max, 8) > MAX_PATHS) return [flatItems(n)];
      const extra = body.map((b) => b.map((p) => ({ ...p, variable: true })));
      let cur: PathItem[][] = [[]];
      for (let k = 0; k < n.min && cur.length <= MAX_PATHS; k++) cur = concat(cur, body, null);
      const all = [...cur];
      for (let k = n.min; k < max && all.length <= MAX_PATHS; k++) {
        cur = concat(cur, extra, null);
        all.push(...cur);
      }
      return all.length <= MAX_PATHS ? all : [flatItems(n)];
    }
  }
}

function polynomial(root: Node): void {
  work = 0;
  for (const path of itemPaths(root, false)) {
    const vars: number[] = [];
    path.forEach((p, k) => p.variable && vars.push(k));
    for (let x = 0; x < vars.length; x++)
      for (let y = x + 1; y < vars.length; y++) {
        const i = vars[x];
        const j = vars[y];
        const common = intersect(path[i].set, path[j].set);
        if (common.length === 0) continue;
        let absorbable = true;
        spend(j - i);
        for (let k = i + 1; k < j && absorbable; k++) absorbable = path[k].optional || overlaps(path[k].set, common);
        if (absorbable) throw new Unsafe("two variable repetitions that can match the same text (as in .*a.*b, \\d+\\d* or \\w{1,5}\\w+): polynomial time");
      }
  }
}

/**
 * For a yes/no test, an unanchored pattern's leading repetition of a single class matters only by its minimum
 * (`\d+x` finds a match exactly when `\dx` does), and so does a trailing one not followed by `$`. Cutting them to
 * their minimum removes the quadratic work of retrying the repetition from every start position. Returns the source
 * to compile (the same when nothing applies); captures and positions of the match are not kept (the engine uses none).
 */
function trimmed(source: string, root: Node & { t: "group" }): string {
  if (root.alts.length !== 1) return source;
  const edits: [number, number, string][] = [];
  const src = (n: Node) => (n.at ? source.slice(n.at[0], n.at[1]) : "");
  const subset = (a: Ranges, b: Ranges) => JSON.stringify(intersect(a, b)) === JSON.stringify(a);
  const cutEdge = (items: Node[], fromEnd: boolean): void => {
    const order = fromEnd ? [...items].reverse() : items;
    for (let k = 0; k < order.length; k++) {
      const it = order[k];
      if (it.t === "rep" && it.at && it.min < it.max) {
        // `(X)?R` finds a match exactly when R does; `X{2,5}R` when `X{2}R` does.
        if (it.min === 0) {
          edits.push([it.at[0], it.at[1], ""]);
          continue;
        }
        edits.push([it.at[0], it.at[1], it.min === 1 ? src(it.body) : `${src(it.body)}{${it.min}}`]);
        return;
      }
      if (it.t === "group" && it.look === null && it.alts.length === 1) return cutEdge(it.alts[0], fromEnd);
      // `.x*R` finds a match exactly when `.R` does (the class of the repetition lies within the edge's class).
      const next = order[k + 1];
      if (it.t === "set" && next && next.t === "rep" && next.body.t === "set" && next.min < next.max && next.at && subset(next.body.set, it.set))
        edits.push([next.at[0], next.at[1], next.min === 0 ? "" : next.min === 1 ? src(next.body) : `${src(next.body)}{${next.min}}`]);
      return;
    }
  };
  const items = root.alts[0];
  cutEdge(items, false);
  const n = edits.length;
  cutEdge(items, true);
  // The two ends met (the whole pattern is trimmable repetitions): keep the leading edits only.
  const lead = edits.slice(0, n);
  const trail = edits.slice(n).filter(([a]) => !lead.some(([, b]) => a < b));
  let out = source;
  for (const [a, b, text] of [...lead, ...trail].sort((x, y) => y[0] - x[0])) out = out.slice(0, a) + text + out.slice(b);
  return out;
}

/** Null when the (compiling, flagless) pattern is safe to run; else the reason it is not. */
export function regexUnsafeReason(pattern: string): string | null {
  const r = analyse(pattern);
  return typeof r === "string" ? r : null;
}

function analyse(pattern: string): string | { source: string } {
  try {
    const root = new Parser(pattern).parse();
    walk(root);
    polynomial(root);
    return { source: trimmed(pattern, root) };
  } catch (e) {
    if (e instanceof Unsafe) return `the pattern may take catastrophic time: ${e.message}`;
    throw e;
  }
}

/** Compiles a flagless regex, refusing a pattern that does not compile or is unsafe: the compiled RegExp or the reason. */
export function compileSafeRegex(pattern: string): RegExp | string {
  if (/^\(\?[a-z]+\)/i.test(pattern)) return "inline flags such as (?i) are not supported (JavaScript regexes have none); use a class such as [Ll]ink";
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (e) {
    return `does not compile: ${(e as Error).message}`;
  }
  const r = analyse(pattern);
  if (typeof r === "string") return r;
  return r.source === pattern ? re : new RegExp(r.source);
}
