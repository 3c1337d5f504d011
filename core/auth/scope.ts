import { randomUUID } from "node:crypto";
import { DIContext, getAsyncStore } from "@tsed/di";
import { unauthorized } from "../errors.js";
import { currentCaller, setCaller } from "../http/requestContext.js";
import type { Caller, Scope } from "./Caller.js";

/** The caller of the current request; throws 401 outside an authenticated request. */
export function requireCaller(): Caller {
  const caller = currentCaller();
  if (!caller) throw unauthorized();
  return caller;
}

/** The folder scope services filter by: "All", or the folders (with everything beneath) the caller may see. */
export function callerScope(): Scope {
  return requireCaller().scope;
}

/** The caller a background job acts as in {@link runAsSystem}: an unrestricted admin that names no person. */
export function systemCaller(name: string): Caller {
  return { kind: "token", username: `system:${name}`, role: "admin", scope: "All", accountId: null, sessionId: null, tokenId: null };
}

/**
 * Runs `fn` as an unrestricted system caller named `name` (outside any request, or replacing the request's caller):
 * for jobs that call another plugin's services which read the caller's scope (a sync importing nodes).
 */
export function runAsSystem<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const ctx = new DIContext({ id: `system-${randomUUID()}` });
  setCaller(ctx, systemCaller(name));
  return getAsyncStore().run({ current: ctx }, fn) as Promise<T>;
}
