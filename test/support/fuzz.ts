/**
 * The pieces of the OpenAPI-driven fuzz (test/reliability/fuzz.test.ts): a seeded PRNG, the operations of the
 * service's own OpenAPI document, plausible bodies built from their schemas, hostile variants of every body,
 * path and query, a raw HTTP client (no URL normalisation, any content type) and the checks on every answer.
 * Nothing here names a route: whatever the document lists is fuzzed.
 */
import { request as httpRequest, Agent } from "node:http";

// ---------------------------------------------------------------- the seeded PRNG

export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  /** `n` distinct items (all of them, shuffled, when there are fewer). */
  sample<T>(items: readonly T[], n: number): T[];
  uuid(): string;
}

/** sfc32, seeded through splitmix32: small, fast and good enough to replay a run from one number. */
export function makeRng(seed: number): Rng {
  let s = seed >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split();
  let b = split();
  let c = split();
  let d = split();
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  const rng: Rng = {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (items) => items[Math.floor(next() * items.length)],
    sample(items, n) {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [copy[i], copy[j]] = [copy[j], copy[i]];
      }
      return copy.slice(0, n);
    },
    uuid() {
      const hex = Array.from({ length: 32 }, () => Math.floor(next() * 16).toString(16));
      hex[12] = "4";
      hex[16] = "89ab"[Math.floor(next() * 4)];
      const h = hex.join("");
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    },
  };
  return rng;
}

/** FUZZ_SEED (a number) when set, else a fresh random one. */
export function fuzzSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.FUZZ_SEED?.trim();
  if (given) {
    const n = Number(given);
    if (!Number.isInteger(n)) throw new Error(`FUZZ_SEED must be an integer, not "${given}"`);
    return n >>> 0;
  }
  return Math.floor(Math.random() * 4294967296) >>> 0;
}

// ---------------------------------------------------------------- the OpenAPI document

export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
}

export interface Parameter {
  in: "path" | "query" | "header" | "cookie";
  name?: string;
  required?: boolean;
  schema?: Schema;
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: Schema }> }; security?: unknown[] }>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface FuzzOperation {
  method: string;
  /** The path template as the document writes it ("/api/v1/nodes/{id}"). */
  path: string;
  pathParams: string[];
  query: Parameter[];
  /** The JSON request body's schema, when the operation declares one. */
  body?: Schema;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

/** Every operation of the document, in document order. */
export function operationsOf(doc: OpenApiDoc): FuzzOperation[] {
  const ops: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const params = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
        query: params.filter((p) => p.in === "query"),
        body: op.requestBody?.content?.["application/json"]?.schema,
      });
    }
  }
  return ops;
}

/** `schema` with its $ref followed and allOf merged; oneOf/anyOf become their first branch that is not only `nullable`. */
export function resolveSchema(doc: OpenApiDoc, schema: Schema | undefined, seen = 0): Schema {
  if (!schema || seen > 20) return {};
  if (schema.$ref) {
    const name = schema.$ref.replace("#/components/schemas/", "");
    const { $ref: _ref, ...rest } = schema;
    return resolveSchema(doc, { ...(doc.components?.schemas?.[name] ?? {}), ...rest }, seen + 1);
  }
  if (schema.allOf) {
    const { allOf, ...rest } = schema;
    let merged: Schema = {};
    for (const part of allOf) {
      const r = resolveSchema(doc, part, seen + 1);
      merged = {
        ...merged,
        ...r,
        properties: { ...merged.properties, ...r.properties },
        required: [...(merged.required ?? []), ...(r.required ?? [])],
      };
    }
    return resolveSchema(doc, { ...merged, ...rest }, seen + 1);
  }
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) {
    const { oneOf: _o, anyOf: _a, ...rest } = schema;
    const real = branches.find((b) => b.$ref || b.type || b.properties) ?? branches[0];
    return resolveSchema(doc, { ...real, ...rest, nullable: rest.nullable || branches.some((b) => b.nullable) }, seen + 1);
  }
  return schema;
}

/** The type a schema names (inferred from its keywords when it names none). */
function typeOf(s: Schema): string {
  if (s.type) return s.type;
  if (s.properties) return "object";
  if (s.items) return "array";
  if (s.enum?.length) return typeof s.enum[0];
  return "string";
}

/**
 * A plausible valid value for `schema`: defaults and enums first, then what the property's name and format
 * suggest (loopback addresses only, so nothing the fuzz writes makes the service reach out beyond this host).
 * `full` also fills optional properties.
 */
export interface SampleOptions {
  /** Fill optional properties too (only at the top level). */
  full?: boolean;
  /** A stored row's id for a property named like `node_id` / `channel_ids`, when there is one. */
  ref?: (name: string) => string | undefined;
}

export function sampleValue(doc: OpenApiDoc, raw: Schema | undefined, rng: Rng, name = "", depth = 0, opts: SampleOptions = {}): unknown {
  const s = resolveSchema(doc, raw);
  if (s.example !== undefined) return s.example;
  if (s.enum?.length) return s.enum[0];
  if (s.default !== undefined && s.default !== null) return s.default;
  const type = typeOf(s);
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      if (depth > 4) return out;
      const required = new Set(s.required ?? []);
      for (const [key, prop] of Object.entries(s.properties ?? {})) {
        if (required.has(key) || (opts.full && depth === 0)) out[key] = sampleValue(doc, prop, rng, key, depth + 1, opts);
      }
      return out;
    }
    case "array": {
      const n = Math.max(1, s.minItems ?? 1);
      if (depth > 4) return [];
      return Array.from({ length: n }, () => sampleValue(doc, s.items, rng, name.replace(/s$/, ""), depth + 1, opts));
    }
    case "integer":
    case "number": {
      const lo = s.minimum ?? 1;
      const hi = Math.min(s.maximum ?? lo + 100, lo + 100);
      return lo + rng.int(Math.max(1, hi - lo + 1));
    }
    case "boolean":
      return false;
    default:
      return matching(s, rng, sampleString(s, rng, name, opts));
  }
}

function sampleString(s: Schema, rng: Rng, name: string, opts: SampleOptions): string | null {
  const n = name.toLowerCase();
  const suffix = rng.uuid().slice(0, 8);
  if (s.format === "uuid" || /(^|_)id$/.test(n)) return opts.ref?.(n) ?? (s.nullable ? null : rng.uuid());
  // Ends of spans in the future, starts and other instants in the recent past.
  if (/(until|^to|end|ends_at|expires_at)$/.test(n)) return new Date(Date.now() + 3600_000 + rng.int(3600_000)).toISOString();
  if (s.format === "date-time" || /(_at|since|^from|^at|time)$/.test(n)) return new Date(Date.now() - rng.int(3600_000)).toISOString();
  if (s.format === "date") return new Date().toISOString().slice(0, 10);
  if (s.format === "email" || /email/.test(n)) return `fuzz-${suffix}@localhost`;
  if (s.format === "uri" || /url$/.test(n)) return `http://127.0.0.1:9/fuzz-${suffix}`;
  if (/cidr|range|prefix/.test(n)) return "127.0.0.0/30";
  if (/address|^ip$|_ip$|host/.test(n)) return `127.0.${rng.int(200)}.${1 + rng.int(250)}`;
  if (/oid/.test(n)) return "1.3.6.1.2.1.1.3.0";
  if (/pool/.test(n)) return "default";
  if (/password|secret|key|token|community/.test(n)) return `fuzz-secret-${suffix}-0123456789`;
  const min = s.minLength ?? 1;
  const max = s.maxLength ?? 64;
  let out = `fuzz_${suffix}`;
  if (out.length < min) out = out.padEnd(min, "x");
  return out.slice(0, Math.max(min, Math.min(max, out.length)));
}

/** `value`, or when the schema's pattern refuses it the first of a few common shapes that the pattern takes. */
function matching(s: Schema, rng: Rng, value: string | null): string | null {
  if (value === null || typeof s.pattern !== "string") return value;
  let re: RegExp;
  try {
    re = new RegExp(s.pattern, "u");
  } catch {
    return value;
  }
  if (re.test(value)) return value;
  const shapes = [
    `fuzz${rng
      .uuid()
      .slice(0, 8)
      .replace(/[^a-z]/g, "")}`,
    "1.3.6.1.4.1.9",
    "12:30",
    String(1 + rng.int(1000)),
    "fuzz",
    "a",
  ];
  return shapes.find((x) => re.test(x)) ?? value;
}

/** Where one property lives in a body (object keys and array indexes) and its schema. */
export interface PropertyPath {
  path: (string | number)[];
  schema: Schema;
}

/** Every declared property of a body, nested objects and the first item of arrays included, up to `maxDepth`. */
export function propertyPaths(doc: OpenApiDoc, raw: Schema | undefined, maxDepth = 3): PropertyPath[] {
  const out: PropertyPath[] = [];
  const walk = (schema: Schema | undefined, path: (string | number)[], depth: number) => {
    const s = resolveSchema(doc, schema);
    const type = typeOf(s);
    if (path.length) out.push({ path, schema: s });
    if (depth >= maxDepth) return;
    if (type === "object") for (const [key, prop] of Object.entries(s.properties ?? {})) walk(prop, [...path, key], depth + 1);
    else if (type === "array" && s.items) walk(s.items, [...path, 0], depth + 1);
  };
  walk(raw, [], 0);
  return out;
}

// ---------------------------------------------------------------- hostile values

/** A hostile value as JSON text (so -0, 1e400 and lone surrogates arrive exactly as written). */
export interface Hostile {
  label: string;
  json: string;
}

const nested = (levels: number, open: string, close: string, leaf = "1") => open.repeat(levels) + leaf + close.repeat(levels);

export function hostileValues(rng: Rng): Hostile[] {
  return [
    { label: "NUL in a string", json: '"a\\u0000b"' },
    { label: "NUL alone", json: '"\\u0000"' },
    { label: "lone high surrogate", json: '"\\ud800"' },
    { label: "lone low surrogate inside text", json: '"x\\udc00y"' },
    { label: "100 KB string", json: JSON.stringify("A".repeat(100_000)) },
    { label: "100 KB multibyte string", json: JSON.stringify("é".repeat(50_000)) },
    { label: "empty string", json: '""' },
    { label: "blank string", json: '"   "' },
    { label: "1e308", json: "1e308" },
    { label: "-1e308", json: "-1e308" },
    { label: "1e400 (Infinity once parsed)", json: "1e400" },
    { label: "-1e400 (-Infinity once parsed)", json: "-1e400" },
    { label: "2**63", json: "9223372036854775808" },
    { label: "-(2**63)-1", json: "-9223372036854775809" },
    { label: "2**64", json: "18446744073709551616" },
    { label: "2**31", json: "2147483648" },
    { label: "-1", json: "-1" },
    { label: "-2**31-1", json: "-2147483649" },
    { label: "-0", json: "-0" },
    { label: "0.5", json: "0.5" },
    { label: "1e-400", json: "1e-400" },
    { label: '"NaN"', json: '"NaN"' },
    { label: '"Infinity"', json: '"-Infinity"' },
    { label: '"1e308" as text', json: '"1e308"' },
    { label: "true", json: "true" },
    { label: "null", json: "null" },
    { label: "empty object", json: "{}" },
    { label: "empty array", json: "[]" },
    { label: "mixed array", json: '[1,"a",null,{},[]]' },
    { label: "5000-item array", json: `[${Array.from({ length: 5000 }, (_, i) => i).join(",")}]` },
    { label: "object 50 deep", json: nested(50, '{"a":', "}") },
    { label: "array 50 deep", json: nested(50, "[", "]") },
    { label: "__proto__ object", json: '{"__proto__":{"polluted":true,"role":"admin"}}' },
    { label: "constructor.prototype object", json: '{"constructor":{"prototype":{"polluted":true}}}' },
    { label: '"__proto__" as text', json: '"__proto__"' },
    { label: "not a uuid", json: '"not-a-uuid"' },
    { label: "nil uuid", json: '"00000000-0000-0000-0000-000000000000"' },
    { label: "random uuid", json: JSON.stringify(rng.uuid()) },
    { label: "bad date", json: '"2026-13-45T25:61:61Z"' },
    { label: "year 99999 date", json: '"+099999-01-01T00:00:00Z"' },
    { label: "bad IPv4", json: '"999.999.999.999"' },
    { label: "bad CIDR", json: '"127.0.0.1/99"' },
    { label: "bad IPv6", json: '"::ffff:::1:zz"' },
    { label: "SQL text", json: `"' OR 1=1; DROP TABLE x; --"` },
    { label: "format string", json: '"%s%n%x%d"' },
    { label: "bad regex", json: '"(a+)+$[("' },
    { label: "path traversal", json: '"../../../../etc/passwd"' },
    { label: "markup", json: '"<script>alert(1)</script>"' },
    { label: "emoji and RTL override", json: '"😀\\u202e🔥"' },
    { label: "control characters", json: '"\\u0001\\u001b[31m\\r\\n\\t"' },
    { label: "backslashes", json: '"\\\\\\\\x00\\\\"' },
  ];
}

/** Values at and just past what a property's schema declares: every enum member, bounds, lengths, extreme dates. */
export function boundaryValues(s: Schema): Hostile[] {
  const out: Hostile[] = [];
  for (const v of (s.enum ?? []).slice(0, 12)) out.push({ label: `enum ${JSON.stringify(v)}`, json: JSON.stringify(v) });
  const type = s.type ?? (s.properties ? "object" : s.items ? "array" : "string");
  if (type === "number" || type === "integer") {
    if (s.minimum !== undefined) out.push({ label: "minimum", json: String(s.minimum) }, { label: "below minimum", json: String(s.minimum - 1) });
    if (s.maximum !== undefined) out.push({ label: "maximum", json: String(s.maximum) }, { label: "above maximum", json: String(s.maximum + 1) });
    out.push({ label: "2**53+1", json: "9007199254740993" }, { label: "1.5 (fraction)", json: "1.5" });
  }
  if (type === "string") {
    if (s.maxLength !== undefined && s.maxLength < 200_000) {
      out.push(
        { label: "maxLength", json: JSON.stringify("m".repeat(s.maxLength)) },
        { label: "maxLength+1", json: JSON.stringify("m".repeat(s.maxLength + 1)) },
      );
      out.push({ label: "maxLength of 4-byte characters", json: JSON.stringify("😀".repeat(Math.ceil(s.maxLength / 2))) });
    }
    for (const d of ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00+14:00", "2026-02-30T00:00:00Z", "1712345678"]) {
      out.push({ label: `date ${d}`, json: JSON.stringify(d) });
    }
  }
  return out;
}

const PLACEHOLDER = "@@fuzz-value-7f3a@@";

/** `base` with the value at `path` replaced by the JSON text `json` (containers on the way created as needed). */
export function withValueAt(base: unknown, path: (string | number)[], json: string): string {
  const root = structuredClone(base) as Record<string | number, unknown>;
  let cur: Record<string | number, unknown> = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    const nextIsIndex = typeof path[i + 1] === "number";
    if (cur[key] === null || typeof cur[key] !== "object") cur[key] = nextIsIndex ? [] : {};
    cur = cur[key] as Record<string | number, unknown>;
  }
  cur[path[path.length - 1]] = PLACEHOLDER;
  return JSON.stringify(root).replace(JSON.stringify(PLACEHOLDER), () => json);
}

// ---------------------------------------------------------------- cases and the raw client

export interface FuzzCase {
  /** What the case does, for the report. */
  label: string;
  method: string;
  /** The raw request target (path and query), sent as written. */
  target: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Who asks: the admin API token, a viewer's token, an admin's session, nobody, or a literal Authorization header. */
  auth: "admin" | "viewer" | "session" | "none" | { header: string };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/** One HTTP request with nothing normalised: the target, headers and body go out as given. */
export function rawRequest(
  base: string,
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  timeoutMs = 20000,
): Promise<RawResponse> {
  const url = new URL(base);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: target,
        agent,
        headers: { ...headers, ...(body === undefined ? {} : { "Content-Length": String(Buffer.byteLength(body)) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8"), ms: Date.now() - started }),
        );
        res.on("error", reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export function closeAgent(): void {
  agent.destroy();
}

// ---------------------------------------------------------------- the checks on every answer

/** Internal text that must never reach a client: stack frames, file paths, driver and SQL messages. */
export const INTERNAL_TEXT: { label: string; re: RegExp }[] = [
  { label: "stack frame", re: /\n\s+at [\w.<>[\]]+ \(|\bat \/|at file:\/\// },
  { label: "node_modules", re: /node_modules/ },
  { label: "SQL syntax error", re: /syntax error at or near/i },
  { label: "constraint text", re: /violates (unique|foreign key|check|not-null|exclusion)|\bviolates\b/i },
  { label: "relation name", re: /relation \\?"/i },
  { label: "cast error", re: /invalid input syntax/i },
  { label: "encoding error", re: /invalid byte sequence/i },
  { label: "JS error name", re: /\b(TypeError|ReferenceError|RangeError|SyntaxError): /i },
  { label: "property access error", re: /Cannot read propert(y|ies) of/i },
  { label: "Maximum call stack", re: /Maximum call stack/i },
];

/** Statuses >= 500 that are answers, not bugs, each with the only code it may carry (502/504: an upstream platform failed, e.g. netcloud). */
const ALLOWED_5XX: Record<number, string> = { 501: "not_implemented", 502: "upstream_failed", 503: "store_unavailable", 504: "upstream_timeout" };

/** What is wrong with one answer (empty when nothing). */
export function answerProblems(res: RawResponse, opts: { skipLeakCheck?: boolean } = {}): string[] {
  const problems: string[] = [];
  let parsed: unknown;
  let json = false;
  try {
    parsed = res.text ? JSON.parse(res.text) : undefined;
    json = res.text.length > 0;
  } catch {
    json = false;
  }
  if (res.status >= 400) {
    const err = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    if (!json || !err || typeof err.code !== "string" || typeof err.message !== "string" || !err.code) {
      problems.push(`status ${res.status} without the {error:{code,message}} envelope`);
    }
    if (res.status >= 500) {
      const allowed = ALLOWED_5XX[res.status];
      if (!allowed || err?.code !== allowed) problems.push(`status ${res.status}${err?.code ? ` (${String(err.code)})` : ""}`);
    }
  }
  if (!opts.skipLeakCheck) {
    for (const { label, re } of INTERNAL_TEXT) if (re.test(res.text)) problems.push(`internal text in the answer (${label})`);
  }
  return problems;
}

/** A short, printable excerpt (escapes shown, long runs cut). */
export function excerpt(text: string | Buffer | undefined, max = 300): string {
  if (text === undefined) return "(none)";
  const s = typeof text === "string" ? text : text.toString("utf8");
  const shown = JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s).slice(1, -1);
  return `${shown}${s.length > max ? ` (${s.length} chars)` : ""}`;
}
