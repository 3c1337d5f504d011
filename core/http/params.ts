import { useDecorators } from "@tsed/core";
import { Injectable } from "@tsed/di";
import { Context, type PipeMethods, UsePipe } from "@tsed/platform-params";
import { Required } from "@tsed/schema";
import { BodyParams } from "@tsed/platform-params";
import type { Scope } from "../auth/Caller.js";
import { requireCaller } from "../auth/scope.js";
import { parseRfc3339 } from "../util/time.js";
import { badRequest } from "./errors.js";

/** The whole JSON body, required: a missing or non-JSON body is a 400, never an undefined argument. */
export function Body(): ParameterDecorator {
  return useDecorators(BodyParams(), Required()) as ParameterDecorator;
}

/** Reads the authenticated caller's scope (set by the auth guard, which runs before the handler's arguments). */
@Injectable()
export class CallerScopePipe implements PipeMethods<unknown, Scope> {
  transform(): Scope {
    return requireCaller().scope;
  }
}

/**
 * The caller's folder scope as a handler argument, for the controller to hand to its services: `"All"`, or the
 * folders (with everything beneath) the caller may see. Not a request parameter, so not in the OpenAPI document.
 */
export function CallerScope(): ParameterDecorator {
  return useDecorators(Context(), UsePipe(CallerScopePipe)) as ParameterDecorator;
}

/** A timestamp query parameter as text (PostgreSQL keeps its microseconds, a Date would not), or 400. */
export function timestampParam(name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  const parsed = parseRfc3339(value);
  if (!parsed) throw badRequest("validation_failed", `${name} must be an RFC 3339 timestamp (for example 2026-01-31T23:59:59.123456Z).`);
  return parsed.text;
}

/** A comma-separated list of a vocabulary; empty = no filter; an unknown token is 400. */
export function tokenList(name: string, value: string | undefined, vocabulary: readonly string[]): string[] | null {
  if (value === undefined) return null;
  const tokens = value
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  if (!tokens.length) return null;
  if (tokens.some((t) => !vocabulary.includes(t))) throw badRequest("validation_failed", `${name} takes a comma-separated list of ${vocabulary.join(", ")}.`);
  return [...new Set(tokens)];
}
