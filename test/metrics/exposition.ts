/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests: every line must be a HELP, a TYPE, a
 * sample or empty; each family's HELP and TYPE come once, before its samples, and its samples are contiguous;
 * label values are unescaped; histograms have monotone buckets ending in +Inf equal to _count, and a _sum.
 * Throws naming the line on the first thing wrong.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(text: string, where: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: "${text}" is not a float`);
  return Number(text);
}

function unescapeHelp(text: string, where: string): string {
  return text.replace(/\\(.?)/g, (_, c: string) => {
    if (c === "\\") return "\\";
    if (c === "n") return "\n";
    throw new Error(`${where}: bad escape \\${c} in HELP`);
  });
}

/** Reads `{a="x",b="y"}` from position `i` of `line`; returns the labels and the position after `}`. */
function parseLabels(line: string, i: number, where: string): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  i++; // past {
  for (;;) {
    if (line[i] === "}") return { labels, end: i + 1 };
    const eq = line.indexOf("=", i);
    if (eq < 0) throw new Error(`${where}: label without =`);
    const name = line.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`${where}: bad label name "${name}"`);
    if (name in labels) throw new Error(`${where}: label "${name}" twice`);
    if (line[eq + 1] !== '"') throw new Error(`${where}: label value not quoted`);
    let j = eq + 2;
    let value = "";
    for (;;) {
      const c = line[j];
      if (c === undefined) throw new Error(`${where}: unterminated label value`);
      if (c === '"') break;
      if (c === "\\") {
        const n = line[j + 1];
        if (n === "\\") value += "\\";
        else if (n === '"') value += '"';
        else if (n === "n") value += "\n";
        else throw new Error(`${where}: bad escape \\${n ?? ""} in a label value`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    j++; // past closing quote
    if (line[j] === ",") j++;
    else if (line[j] !== "}") throw new Error(`${where}: expected , or } after a label`);
    i = j;
  }
}

function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  const exact = families.get(sampleName);
  if (exact) return exact;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sampleName.endsWith(suffix)) continue;
    const f = families.get(sampleName.slice(0, -suffix.length));
    if (f && (f.type === "histogram" || f.type === "summary")) return f;
  }
  return undefined;
}

const key = (labels: Record<string, string>, drop: string) =>
  JSON.stringify(
    Object.entries(labels)
      .filter(([k]) => k !== drop)
      .sort(),
  );

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const k = key(s.labels, "le");
    const g = groups.get(k) ?? { buckets: [] };
    groups.set(k, g);
    if (s.name === `${f.name}_bucket`) {
      if (!("le" in s.labels)) throw new Error(`${f.name}: a bucket without le`);
      g.buckets.push([parseValue(s.labels.le!, `${f.name} le`), s.value]);
    } else if (s.name === `${f.name}_sum`) g.sum = s.value;
    else if (s.name === `${f.name}_count`) g.count = s.value;
    else throw new Error(`${f.name}: sample ${s.name} does not belong to a histogram`);
  }
  for (const [k, g] of groups) {
    if (g.count === undefined || g.sum === undefined) throw new Error(`${f.name}${k}: _sum or _count missing`);
    if (!g.buckets.length) throw new Error(`${f.name}${k}: no buckets`);
    for (let i = 1; i < g.buckets.length; i++) {
      if (!(g.buckets[i]![0] > g.buckets[i - 1]![0])) throw new Error(`${f.name}${k}: le not increasing`);
      if (g.buckets[i]![1] < g.buckets[i - 1]![1]) throw new Error(`${f.name}${k}: bucket counts not monotone`);
    }
    const last = g.buckets[g.buckets.length - 1]!;
    if (last[0] !== Infinity) throw new Error(`${f.name}${k}: the last bucket is not +Inf`);
    if (last[1] !== g.count) throw new Error(`${f.name}${k}: +Inf bucket ${last[1]} != _count ${g.count}`);
  }
}

export function parseExposition(text: string): Map<string, Family> {
  if (text && !text.endsWith("\n")) throw new Error("the exposition does not end with a newline");
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: Family | undefined;
  const pendingHelp = new Map<string, string>();
  text.split("\n").forEach((line, n) => {
    const where = `line ${n + 1} "${line.slice(0, 120)}"`;
    if (line === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) {
        if (/^# (HELP|TYPE)/.test(line)) throw new Error(`${where}: malformed ${line.slice(2, 6)}`);
        return; // a comment
      }
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      if (kind === "HELP") {
        if (pendingHelp.has(name) || families.has(name)) throw new Error(`${where}: second HELP for ${name}`);
        pendingHelp.set(name, unescapeHelp(rest, where));
        return;
      }
      if (families.has(name)) throw new Error(`${where}: second TYPE for ${name}`);
      if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) throw new Error(`${where}: unknown type`);
      const help = pendingHelp.get(name);
      if (help === undefined) throw new Error(`${where}: TYPE without HELP before it`);
      if (current) closed.add(current.name);
      current = { name, help, type: rest as Family["type"], samples: [] };
      families.set(name, current);
      return;
    }
    const nameEnd = line.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`${where}: not a sample`);
    const name = line.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (line[i] === "{") ({ labels, end: i } = parseLabels(line, i, where));
    if (line[i] !== " ") throw new Error(`${where}: no space before the value`);
    const parts = line.slice(i + 1).split(" ");
    if (parts.length > 2 || (parts.length === 2 && !/^-?\d+$/.test(parts[1]!))) throw new Error(`${where}: bad value or timestamp`);
    const value = parseValue(parts[0]!, where);
    const family = familyOf(name, families);
    if (!family) throw new Error(`${where}: sample without TYPE`);
    if (family !== current || closed.has(family.name)) throw new Error(`${where}: samples of ${family.name} are not contiguous`);
    if (family.type === "counter" && !(value >= 0)) throw new Error(`${where}: a counter below 0`);
    family.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

/** The value of the series `name` with exactly these labels (among others when `partial`), or undefined. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== name) continue;
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}

/** The sum over the series of `name` whose labels include these. */
export function sampleSum(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const f of families.values())
    for (const s of f.samples) if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  return sum;
}

/** GET <url>/metrics, parsed strictly (fails on a non-200 or a wrong content type). */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Map<string, Family>> {
  const res = await fetch(`${url}/metrics`, { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${text}`);
  if (res.headers.get("content-type") !== "text/plain; version=0.0.4; charset=utf-8") throw new Error(`content type ${res.headers.get("content-type")}`);
  return parseExposition(text);
}
