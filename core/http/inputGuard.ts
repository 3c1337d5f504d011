import type { NextFunction, Request, Response } from "express";
import { badRequest } from "./errors.js";

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
 * MAX_JSON_DEPTH answers 400 `nesting_too_deep` (validators and handlers recurse).
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

/** The first problem in a parsed JSON value (keys included), or undefined. Iterative, so no depth overflows the stack. */
export function checkJsonValue(root: unknown): "invalid_characters" | "nesting_too_deep" | undefined {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === "string") {
      if (hasForbiddenCharacters(value)) return "invalid_characters";
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return "nesting_too_deep";
    if (Array.isArray(value)) {
      for (const item of value) stack.push([item, depth + 1]);
      continue;
    }
    for (const key of Object.keys(value)) {
      if (hasForbiddenCharacters(key)) return "invalid_characters";
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
 * `@ProtocolInput()`: their bodies relay protocol data and are not checked (their path and query are).
 */
export function inputGuard(protocolRoutes: { method: string; path: string }[] = []) {
  const exempt = protocolRoutes.map((r) => ({ method: r.method.toUpperCase(), pattern: routePattern(r.path) }));
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (pathProblem(req.path)) return next(refuse("request path"));
    if (req.query && Object.keys(req.query).length && checkJsonValue(req.query) !== undefined) return next(refuse("query string"));
    if (req.body === undefined || req.body === null || typeof req.body !== "object") return next();
    const path = req.originalUrl.split("?")[0];
    if (exempt.some((e) => e.method === req.method && e.pattern.test(path))) return next();
    const problem = checkJsonValue(req.body);
    if (problem === "nesting_too_deep") {
      return next(badRequest("nesting_too_deep", `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`));
    }
    if (problem) return next(refuse("request body"));
    next();
  };
}
