import type { Type } from "@tsed/core";
import { StoreSet } from "@tsed/core";
import { OverrideProvider } from "@tsed/di";
import { getJsonMapperTypes } from "@tsed/json-mapper";
import type { PlatformContext } from "@tsed/platform-http";
import { PlatformResponseFilter } from "@tsed/platform-response-filter";
import { getPropertiesStores, type JsonPropertyStore } from "@tsed/schema";

/**
 * The JSON of hot read routes without the generic json-mapper: a mapping compiled once per response model from the same
 * @tsed/schema metadata the mapper reads. Each row becomes an object literal with the model's keys in declaration order
 * (aliases applied, extra columns dropped), and one JSON.stringify writes the answer: undefined values drop out there,
 * nulls stay, exactly as the mapper's object then Express's JSON.stringify did. One literal shape per model is what V8's
 * JSON.stringify is fastest at; on a 100-row page the mapper's per-row, per-property calls plus the stringify of their
 * result were ~20 % of the service's CPU (docs/performance.md, issue 29).
 *
 * Only what the mapping proves equal to the mapper takes this path: a model with anything it does not handle (groups,
 * hooks, discriminators, generics, custom type mappers, Date, Set/Map) is not compiled, and a value outside the plain
 * shapes (a number in a string field, a Date, a class instance answered at the top, NaN, an undefined array item, …)
 * sends the whole answer back to the mapper. test/kernel/fast-json.test.ts compares the two on generated rows of every
 * model that uses it; test/kernel/fast-json-http.test.ts compares whole HTTP answers.
 */

/** Store key of routes whose 2xx answers take the compiled mapping (see FastJson). */
export const FAST_JSON = "nms:fastJson";

/** The route's JSON answers are written through the mapping compiled for its declared model (same bytes as the json-mapper). */
export function FastJson() {
  return StoreSet(FAST_JSON, true);
}

/** Thrown inside a mapping when a value is not one it may pass itself: the answer goes to the generic mapper. */
class NotPlain extends Error {}
const NOT_PLAIN = new NotPlain("value outside the mapping's plain shapes");

/** A row (or nested object) → the object JSON.stringify then writes; throws NOT_PLAIN. */
type MapFn = (value: unknown) => unknown;

/** A JSON tree as JSON.parse makes it (what pg returns for json/jsonb): the mapper's generic walk gives JSON.stringify's bytes. */
function isJsonTree(v: unknown, depth = 0): boolean {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v !== "object" || depth > 64) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!(i in v) || !isJsonTree(v[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const k in v) if (!isJsonTree((v as Record<string, unknown>)[k], depth + 1)) return false;
  return true;
}

/** A value the mapper would hand to a model's compiled mapper as it is (not a collection, no toJSON). */
function isPlainRecord(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v) || v instanceof Map || v instanceof Set) return false;
  return typeof (v as { toJSON?: unknown }).toJSON !== "function";
}

/** Checks of one value of a primitive kind (null and undefined pass: JSON.stringify writes null, or drops the key). */
const ITEM_CHECKS = {
  string: (v: unknown) => typeof v === "string" || v === null,
  // The mapper passes a finite number through (+v); NaN throws there and Infinity becomes null: left to it.
  number: (v: unknown) => (typeof v === "number" && Number.isFinite(v)) || v === null,
  boolean: (v: unknown) => typeof v === "boolean" || v === null,
};
type Kind = keyof typeof ITEM_CHECKS;

/** An array of a primitive kind, passed as it is: no hole, no undefined (the mapper maps those differently). */
function checkArray(v: unknown, check: (item: unknown) => boolean): void {
  if (!Array.isArray(v)) throw NOT_PLAIN;
  for (let i = 0; i < v.length; i++) if (!(i in v) || v[i] === undefined || !check(v[i])) throw NOT_PLAIN;
}

/** An array of a model's objects, each mapped (a null item stays null, as the mapper leaves it). */
function mapArray(v: unknown, map: MapFn): unknown[] {
  if (!Array.isArray(v)) throw NOT_PLAIN;
  const out = new Array<unknown>(v.length);
  for (let i = 0; i < v.length; i++) {
    if (!(i in v) || v[i] === undefined) throw NOT_PLAIN;
    out[i] = map(v[i]);
  }
  return out;
}

const compiled = new Map<Type<unknown>, MapFn | null>();

/** The mapping of one model's objects, or null when the model has something the mapping does not reproduce. */
export function compileModelWriter(model: Type<unknown>, seen = new Set<Type<unknown>>()): MapFn | null {
  if (compiled.has(model)) return compiled.get(model)!;
  if (seen.has(model)) return null; // recursive models: the mapper's
  seen.add(model);
  const map = buildModelMap(model, seen);
  compiled.set(model, map);
  return map;
}

const PRIMITIVES = new Map<unknown, Kind>([
  [String, "string"],
  [Number, "number"],
  [Boolean, "boolean"],
]);

function buildModelMap(model: Type<unknown>, seen: Set<Type<unknown>>): MapFn | null {
  if (getJsonMapperTypes().has(model)) return null;
  const props = [...getPropertiesStores(model).values()] as JsonPropertyStore[];
  if (!props.length) return null;
  const entity = props[0]!.parent;
  if (entity.schema.get("additionalProperties") || (entity as unknown as { discriminatorAncestor?: unknown }).discriminatorAncestor) return null;
  const nested: MapFn[] = [];
  const checks: string[] = [];
  const fields: string[] = [];
  for (const [i, p] of props.entries()) {
    const key = String(p.propertyKey);
    const alias = String(p.parent.schema.getAliasOf(key) || key);
    // Keys JSON.stringify would not write in declaration order (array indexes), or that a literal would take as the prototype.
    if (/^(?:0|[1-9]\d*)$/.test(alias) || alias === "__proto__" || key === "__proto__") return null;
    const schema = p.schema as unknown as { $hooks?: { has(name: string): boolean }; $ignore?: unknown };
    if (schema.$hooks?.has("ignore") || schema.$hooks?.has("onSerialize") || schema.$hooks?.has("groups") || schema.$ignore) return null;
    if (p.itemSchema.hasDiscriminator || p.itemSchema.isGeneric) return null;
    if (p.isCollection && p.collectionType !== Array) return null;
    const type = p.getBestType();
    const kind = PRIMITIVES.get(type);
    const v = `v${i}`;
    checks.push(`let ${v} = r[${JSON.stringify(key)}];`);
    if (kind) {
      checks.push(
        p.isCollection ? `if (${v} != null) checkArray(${v}, ITEM_CHECKS.${kind});` : `if (${v} !== undefined && !ITEM_CHECKS.${kind}(${v})) throw NOT_PLAIN;`,
      );
    } else if (type === Object && !p.isCollection) {
      checks.push(`if (${v} !== undefined && !isJsonTree(${v})) throw NOT_PLAIN;`);
    } else if (typeof type === "function" && type !== Date && type !== Array && type !== Map && type !== Set) {
      const map = compileModelWriter(type as Type<unknown>, seen);
      if (!map) return null;
      nested.push(map);
      const m = `nested[${nested.length - 1}]`;
      checks.push(p.isCollection ? `if (${v} != null) ${v} = mapArray(${v}, ${m});` : `if (${v} != null) ${v} = ${m}(${v});`);
    } else {
      return null;
    }
    fields.push(`${JSON.stringify(alias)}: ${v}`);
  }
  // One literal per model: every object of it has the same shape (what V8's JSON.stringify is fastest at). The code is
  // made of this model's own property names, quoted by JSON.stringify.
  const body = `return function map(r) {
    if (r === null) return null;
    if (!isPlainRecord(r)) throw NOT_PLAIN;
    ${checks.join("\n    ")}
    return { ${fields.join(", ")} };
  };`;
  const make = new Function("NOT_PLAIN", "isPlainRecord", "isJsonTree", "ITEM_CHECKS", "checkArray", "mapArray", "nested", body) as (
    ...args: unknown[]
  ) => MapFn;
  return make(NOT_PLAIN, isPlainRecord, isJsonTree, ITEM_CHECKS, checkArray, mapArray, nested);
}

/**
 * The JSON text of `data` answered as `model` (a list when `data` is an array), the bytes the json-mapper then
 * JSON.stringify give; undefined when a value is one this mapping leaves to the mapper.
 */
export function writeJson(model: Type<unknown>, data: unknown): string | undefined {
  const map = compileModelWriter(model);
  if (!map) return undefined;
  try {
    if (Array.isArray(data)) return JSON.stringify(mapArray(data, map));
    // The mapper answers a class instance as its own class, not the declared model: plain objects only.
    if (data === null || typeof data !== "object" || Object.getPrototypeOf(data) !== Object.prototype) return undefined;
    return JSON.stringify(map(data));
  } catch (err) {
    if (err instanceof NotPlain) return undefined;
    throw err;
  }
}

let enabled = true;

/** Answers written by the writer, and answers of marked routes it left to the mapper (odd values), since start. */
export const fastJsonStats = { written: 0, declined: 0 };

/** Turns the writer off (every answer through the json-mapper) or back on: for the tests that compare the two paths' bytes. */
export function setFastJsonEnabled(on: boolean): void {
  enabled = on;
}

/** Per route: the model its writer was compiled for, or null (not marked, or a model the writer does not reproduce). */
const routeModels = new WeakMap<object, Type<unknown> | null>();

function routeModel($ctx: PlatformContext): Type<unknown> | null {
  const endpoint = $ctx.endpoint;
  let model = routeModels.get(endpoint);
  if (model === undefined) {
    model = null;
    if (endpoint.store.get(FAST_JSON)) {
      const opts = endpoint.getResponseOptions(200, {}) as { type?: Type<unknown>; groups?: unknown };
      if (opts.type && !opts.groups && compileModelWriter(opts.type)) model = opts.type;
    }
    routeModels.set(endpoint, model);
  }
  return model;
}

/** Ts.ED's response filter, with the writer for routes marked FastJson (answers 200 only; everything else as before). */
@OverrideProvider(PlatformResponseFilter)
export class FastJsonResponseFilter extends PlatformResponseFilter {
  override async serialize(data: unknown, $ctx: PlatformContext): Promise<unknown> {
    const model = enabled && $ctx.response.statusCode === 200 && !$ctx.request.query.includes ? routeModel($ctx) : null;
    const text = model ? writeJson(model, data) : undefined;
    if (text === undefined) {
      if (model) fastJsonStats.declined++;
      return super.serialize(data, $ctx);
    }
    fastJsonStats.written++;
    // res.json would set this; a string answer must set it itself (the rest, charset and ETag included, is Express's send).
    $ctx.response.contentType("application/json");
    return text;
  }
}
