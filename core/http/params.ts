import { AjvService } from "@tsed/ajv";
import { useDecorators } from "@tsed/core";
import { inject, Injectable } from "@tsed/di";
import { deserialize } from "@tsed/json-mapper";
import { BodyParams, Context, type PipeMethods, RawQueryParams, UsePipe } from "@tsed/platform-params";
import { compile, getPropertiesStores, In, type JsonParameterStore, Required } from "@tsed/schema";
import type { Scope } from "../auth/Caller.js";
import { requireCaller } from "../auth/scope.js";
import { parseRfc3339 } from "../util/time.js";
import { describeValidation, type AjvLikeError } from "./ErrorFilter.js";
import { badRequest } from "../errors.js";

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

/**
 * Reads the query string into an instance of the parameter's model class, each field exactly as a separate
 * `@QueryParams("field")` with the same decorators would be read: "" is absent for a non-string field, "null" is null,
 * a primitive is cast to its type, then checked against the field's schema; the first field that fails (in
 * declaration order) is the 400, worded as for a single parameter. Absent fields keep the model's initial values.
 */
@Injectable()
export class QueryModelPipe implements PipeMethods<Record<string, unknown> | undefined, object> {
  private ajv = inject(AjvService);

  async transform(query: Record<string, unknown> | undefined, param: JsonParameterStore): Promise<object> {
    const model = param.type as new () => Record<string, unknown>;
    const schema = compile(model, { customKeys: true }) as { properties?: Record<string, object>; required?: string[] };
    const out = new model();
    const fields = getPropertiesStores(model);
    // In the schema's order (an inherited class's fields first), which is the OpenAPI document's order of the parameters.
    for (const name of Object.keys(schema.properties ?? {})) {
      const field = fields.get(name)!;
      const label = `query parameter "${name}"`;
      let value = query?.[name];
      if (value === "" && field.type !== String) value = undefined;
      if (value === "null") value = null;
      else if (value !== undefined && field.isArray) value = ([] as unknown[]).concat(value);
      else if (value !== undefined && field.isPrimitive) value = cast(value, field.type);
      if (schema.required?.includes(name) && (value === undefined || value === null || value === "")) {
        throw badRequest("validation_failed", `The ${label} is required.`);
      }
      if (value === undefined) continue;
      try {
        value = await this.ajv.validate(value, { schema: schema.properties?.[name] ?? {} });
      } catch (err) {
        const errors = (err as { errors?: AjvLikeError[] }).errors;
        throw badRequest("validation_failed", errors?.length ? describeValidation(errors, label) : `Invalid ${label}.`);
      }
      out[name] = field.isPrimitive ? cast(value, field.type) : value;
    }
    return out;
  }
}

function cast(value: unknown, type: unknown): unknown {
  try {
    return deserialize(value, { type });
  } catch {
    return value;
  }
}

/**
 * The whole query string as the parameter's model class (fields named as the query names them): the model is the one
 * place a query's rules are written; the OpenAPI document lists its fields as query parameters.
 */
export function Query(): ParameterDecorator {
  return useDecorators(RawQueryParams(), UsePipe(QueryModelPipe)) as ParameterDecorator;
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

/** One query parameter a route reads itself (from the whole query object), as the OpenAPI document lists it. */
export interface QueryParameterDoc {
  name: string;
  description: string;
  schema?: Record<string, unknown>;
}

/**
 * Lists in the OpenAPI document the query parameters of a route that reads the whole query string itself (its service
 * parses and checks them), so integrators and generated clients see every name: `@QueryDoc(...FILTERS)`. Only the
 * document changes; what the route accepts and refuses stays its service's. (The kernel drops the nameless
 * whole-object parameter such a route would otherwise show.)
 */
export function QueryDoc(...params: QueryParameterDoc[]): MethodDecorator {
  return useDecorators(
    ...params.map((p) =>
      In("query")
        .Name(p.name)
        .Schema(p.schema ?? { type: "string" })
        .Description(p.description),
    ),
  ) as MethodDecorator;
}
