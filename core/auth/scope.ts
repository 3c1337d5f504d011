import { randomUUID } from "node:crypto";
import { DIContext, getAsyncStore } from "@tsed/di";
import { notFound, unauthorized } from "../errors.js";
import { currentCaller, setCaller } from "../http/requestContext.js";
import { type Caller, type Scope, scopeCovers } from "./Caller.js";

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

/**
 * 404 `message` unless the item exists (a folder path, not null) and the scope covers it: to a folder-scoped caller
 * what lies outside its folders answers exactly like what does not exist. Returns the path for the caller's use.
 */
export function assertInScope(scope: Scope, folderPath: readonly string[] | null | undefined, message: string): readonly string[] {
  if (folderPath === null || folderPath === undefined || !scopeCovers(scope, folderPath)) throw notFound(message);
  return folderPath;
}

/** {@link assertInScope} for a node by its folder path (empty = the tree root, visible to scope All only). */
export function assertNodeInScope(scope: Scope, folderPath: readonly string[] | null | undefined): readonly string[] {
  return assertInScope(scope, folderPath, "No such node.");
}

/** {@link assertInScope} for a folder by its path from the root down to itself. */
export function assertFolderInScope(scope: Scope, path: readonly string[] | null | undefined): readonly string[] {
  return assertInScope(scope, path, "No such folder.");
}

/** The caller a background job acts as in {@link runAsSystem}: an unrestricted admin that names no person. */
export function systemCaller(name: string): Caller {
  return { kind: "token", username: `system:${name}`, role: "admin", scope: "All", accountId: null, sessionId: null, tokenId: null };
}

/**
 * Runs `fn` as an unrestricted system caller named `name` (outside any request, or replacing the request's caller):
 * for jobs whose work needs a caller's identity (audit names); a service's scope is an explicit argument, "All" for jobs.
 */
export function runAsSystem<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const ctx = new DIContext({ id: `system-${randomUUID()}` });
  setCaller(ctx, systemCaller(name));
  return getAsyncStore().run({ current: ctx }, fn) as Promise<T>;
}
