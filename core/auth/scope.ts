import { unauthorized } from "../http/errors.js";
import { currentCaller } from "../http/requestContext.js";
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
