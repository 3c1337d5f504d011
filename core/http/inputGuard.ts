import type { NextFunction, Request, Response } from "express";
import { badRequest } from "../errors.js";

/**
 * The kernel's boundary check on every request's text, before any handler runs.
 *
 * PostgreSQL refuses U+0000 in `text` and JSON columns, and a lone UTF-16 surrogate
 * cannot be encoded as UTF-8 at all: such a string would reach the store and fail
 * there (a 500), or be silently mangled. So a JSON body, a query value or a path
 * segment holding either is refused here with 400 `invalid_characters`, naming where.
 * Protocol input (syslog, traps, flows) never passes through here; those receivers
 * store such text escaped.
 *
 * The body walk is iterative and bounded: a JSON document nested deeper than
 * MAX_JSON_DEPTH answers 400 `nesting_too_deep` (validators and handlers recurse), on every
 * route; so does a number JSON.parse made infinite (`1e400`): 400 `value_out_of_range`.
 */
export const MAX_JSON_DEPTH = 64;

// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const FORBIDDEN = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether a string holds U+0000 or a lone surrogate. */
export function hasForbiddenCharacters(s: string): boolean {
  return FORBIDDEN.test(s);
}

function refuse(where: string) {
  return badRequest("invalid_characters", `The ${where} contains a NUL character or an unpaired UTF-16 surrogate, which this service does not store.`);
}

export type JsonProblem = "invalid_characters" | "nesting_too_deep" | "value_out_of_range";

/**
 * The first problem in a parsed JSON value (keys included), or undefined. Iterative, so no depth overflows the stack.
 * A number that JSON.parse made infinite (`1e400`) is out of range; `characters: false` skips the text check (protocol
 * routes), never the depth and number checks.
 */
export function checkJsonValue(root: unknown, { characters = true }: { characters?: boolean } = {}): JsonProblem | undefined {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === "string") {
      if (characters && hasForbiddenCharacters(value)) return "invalid_characters";
      continue;
    }
    if (typeof value === "number") {
      if (!Number.isFinite(value)) return "value_out_of_range";
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return "nesting_too_deep";
    if (Array.isArray(value)) {
      for (const item of value) stack.push([item, depth + 1]);
      continue;
    }
    for (const key of Object.keys(value)) {
      if (characters && hasForbiddenCharacters(key)) return "invalid_characters";
      stack.push([(value as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return undefined;
}

function pathProblem(rawPath: string): boolean {
  for (const segment of rawPath.split("/")) {
    if (!segment.includes("%")) {
      if (hasForbiddenCharacters(segment)) return true;
      continue;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return true; // a malformed escape (%ZZ, or bytes that are not UTF-8)
    }
    if (hasForbiddenCharacters(decoded)) return true;
  }
  return false;
}

/** A route path ("/api/v1/things/:id/x") as an anchored regular expression over request paths. */
function routePattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}/?$`);
}

/**
 * Express middleware, mounted after the JSON body parser. `protocolRoutes` are the routes marked
 * `@ProtocolInput()`: their bodies relay protocol data, so their text is not checked (their depth and numbers are,
 * and their path and query).
 */
export function inputGuard(protocolRoutes: { method: string; path: string }[] = []) {
  const exempt = protocolRoutes.map((r) => ({ method: r.method.toUpperCase(), pattern: routePattern(r.path) }));
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (pathProblem(req.path)) return next(refuse("request path"));
    if (req.query && Object.keys(req.query).length && checkJsonValue(req.query) !== undefined) return next(refuse("query string"));
    if (req.body === undefined || req.body === null || typeof req.body !== "object") return next();
    const path = req.originalUrl.split("?")[0];
    const protocol = exempt.some((e) => e.method === req.method && e.pattern.test(path));
    const problem = checkJsonValue(req.body, { characters: !protocol });
    if (problem === "nesting_too_deep") {
      return next(badRequest("nesting_too_deep", `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`));
    }
    if (problem === "value_out_of_range") {
      return next(badRequest("value_out_of_range", "A number in the request body is too large to represent (it would be stored as infinity)."));
    }
    if (problem) return next(refuse("request body"));
    next();
  };
}
