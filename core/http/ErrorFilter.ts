import { Catch, type ExceptionFilterMethods } from "@tsed/platform-exceptions";
import type { BaseContext } from "@tsed/di";
import { Exception } from "@tsed/exceptions";
import { findPgError, pgErrorEnvelope } from "../store/pgErrors.js";
import { ApiError } from "../errors.js";
import { kernelLogger } from "./requestContext.js";
import { routeTable } from "./routeTable.js";

export interface AjvLikeError {
  instancePath?: string;
  dataPath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** A readable, value-free sentence from Ajv errors ("name must NOT have fewer than 1 characters"). */
export function describeValidation(errors: AjvLikeError[], where: string): string {
  const parts = errors.slice(0, 5).map((e) => {
    const path = (e.instancePath ?? e.dataPath ?? "").replace(/^\//, "").replace(/\//g, ".");
    if (e.keyword === "additionalProperties") return `unknown field "${[path, e.params?.additionalProperty].filter(Boolean).join(".")}"`;
    if (e.keyword === "required") return `"${[path, e.params?.missingProperty].filter(Boolean).join(".")}" is required`;
    if (e.keyword === "enum") return `"${path}" must be one of ${(e.params?.allowedValues as unknown[] | undefined)?.join(", ")}`;
    return `${path ? `"${path}"` : "value"} ${e.message ?? "is invalid"}`;
  });
  return `Invalid ${where}: ${parts.join("; ")}.`;
}

function paramLabel(err: { dataPath?: string; requestType?: string }): string {
  const type = (err.requestType ?? "request").toLowerCase();
  return type === "body" ? "request body" : `${type} parameter${err.dataPath ? ` "${err.dataPath}"` : ""}`;
}

/** Maps anything thrown to the envelope. Unknown errors are 500s whose detail only reaches the log. */
export function toEnvelope(
  error: unknown,
  ctx: { id: string; method: string; url: string },
): { status: number; code: string; message: string; headers?: Record<string, string> } {
  if (error instanceof ApiError) return { status: error.status, code: error.code, message: error.message, headers: error.headers };
  const e = error as Record<string, unknown> & Error;
  // body-parser (JSON syntax, size, charset): these carry `type` and an http status.
  if (e && typeof e === "object" && !(e instanceof Exception) && typeof e.type === "string" && typeof e.status === "number" && e.status < 500) {
    switch (e.type) {
      case "entity.parse.failed":
        return { status: 400, code: "malformed_json", message: "The request body is not valid JSON." };
      case "entity.too.large":
        return { status: 413, code: "payload_too_large", message: "The request body is larger than this service accepts." };
      case "encoding.unsupported":
      case "charset.unsupported":
        return { status: 415, code: "unsupported_encoding", message: "The request body encoding is not supported." };
      default:
        return { status: 400, code: "bad_request", message: "The request could not be read." };
    }
  }
  // A compressed body that does not decompress (zlib / brotli errors surface raw from body-parser).
  if (
    e &&
    typeof e === "object" &&
    typeof (e as { code?: unknown }).code === "string" &&
    /^(Z_|ERR_ZLIB|ERR__?BROTLI)/.test(String((e as { code?: unknown }).code))
  ) {
    return { status: 400, code: "malformed_body", message: "The request body could not be decompressed." };
  }
  // Other client errors raised by body-parser / http-errors (aborted request, bad length).
  if (e && typeof e === "object" && !(e instanceof Exception) && e.expose === true && typeof e.status === "number" && e.status >= 400 && e.status < 500) {
    return { status: 400, code: "bad_request", message: "The request could not be read." };
  }
  if (error instanceof Exception) {
    const origin = (error as Exception & { origin?: unknown }).origin as (Error & { errors?: AjvLikeError[] }) | undefined;
    const ajvErrors = (origin?.errors ?? (error as unknown as { errors?: AjvLikeError[] }).errors) as AjvLikeError[] | undefined;
    if (error.name === "PARAM_VALIDATION_ERROR" || error.name === "AJV_VALIDATION_ERROR" || error.name === "REQUIRED_VALIDATION_ERROR") {
      const label = paramLabel(error as unknown as { dataPath?: string; requestType?: string });
      if (error.name === "REQUIRED_VALIDATION_ERROR" || origin?.name === "REQUIRED_VALIDATION_ERROR") {
        return { status: 400, code: "validation_failed", message: `The ${label} is required.` };
      }
      if (Array.isArray(ajvErrors) && ajvErrors.length) return { status: 400, code: "validation_failed", message: describeValidation(ajvErrors, label) };
      return { status: 400, code: "validation_failed", message: `Invalid ${label}.` };
    }
    if (error.name === "RESOURCE_NOT_FOUND" || (error.status === 404 && /Resource ".*" not found/.test(error.message))) {
      const allowed = routeTable.methodsFor(ctx.url.split("?")[0]);
      if (allowed.length && !allowed.includes(ctx.method.toUpperCase())) {
        return {
          status: 405,
          code: "method_not_allowed",
          message: `Method ${ctx.method.toUpperCase()} is not allowed here; allowed: ${allowed.join(", ")}.`,
          headers: { Allow: allowed.join(", ") },
        };
      }
      return { status: 404, code: "route_not_found", message: "No such route." };
    }
    if (error.status >= 400 && error.status < 500) {
      return { status: error.status, code: "bad_request", message: "The request is not valid." };
    }
  }
  const fromStore = pgErrorEnvelope(error);
  if (fromStore) return fromStore;
  return { status: 500, code: "internal_error", message: `Internal error; the service logged it with request id ${ctx.id}.` };
}

@Catch(Error, Exception, String)
export class EnvelopeErrorFilter implements ExceptionFilterMethods {
  catch(error: unknown, ctx: BaseContext): void {
    const { status, code, message, headers } = toEnvelope(error, { id: ctx.id, method: ctx.request.method, url: ctx.request.url });
    if (status >= 500 && !(error instanceof ApiError)) {
      // The SQLSTATE of a database error that reached here, so the next unmapped one is easy to find.
      const sqlstate = findPgError(error)?.code;
      const fields = { request_id: ctx.id, method: ctx.request.method, path: ctx.request.url.split("?")[0], ...(sqlstate ? { sqlstate } : {}), error };
      if (status === 500) kernelLogger().error("request failed", fields);
      else kernelLogger().warn("request failed: the database is unavailable", fields);
    }
    const res = ctx.response;
    if (res.isHeadersSent()) return;
    if (headers) res.setHeaders(headers);
    res.setHeader("X-Request-Id", ctx.id);
    res.contentType("application/json").status(status).body({ error: { code, message } });
  }
}
