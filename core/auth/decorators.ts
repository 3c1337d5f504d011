import { StoreSet, useDecorators } from "@tsed/core";
import { Intercept } from "@tsed/di";
import { UseBefore } from "@tsed/platform-middlewares";
import { Returns, Security } from "@tsed/schema";
import { ErrorEnvelope } from "../http/models.js";
import { AuthGuard } from "./AuthGuard.js";
import type { PermissionName } from "./Caller.js";
import { SkeletonReadInterceptor } from "./SkeletonReadInterceptor.js";
import { RULE, type AccessRule } from "./rules.js";

function guarded(rule: AccessRule) {
  const decorators = [
    StoreSet(RULE.access, rule),
    UseBefore(AuthGuard),
    Returns(500, ErrorEnvelope).Description("internal_error: logged with the request id, nothing internal in the message"),
    Returns(503, ErrorEnvelope).Description("No durable store (skeleton mode)"),
  ];
  if (rule.kind !== "public") {
    decorators.push(Security("bearer"), Returns(401, ErrorEnvelope).Description("No valid bearer token"));
  }
  if (rule.kind === "permission") decorators.push(Returns(403, ErrorEnvelope).Description(`Role lacks ${rule.permission}`));
  return useDecorators(...decorators);
}

/** The route needs this permission (viewer = read; operator adds AckAlerts, ManageMaintenance, ManageConfig; admin = all). */
export function Permission(permission: PermissionName) {
  return guarded({ kind: "permission", permission });
}

/** Any valid bearer token (session or API token), no particular permission. */
export function Authenticated() {
  return guarded({ kind: "authenticated" });
}

/** No token needed (health, login). */
export function Public() {
  return guarded({ kind: "public" });
}

/** Only a session (a person) may call it; API tokens get 403 `person_required`. */
export function PersonOnly() {
  return useDecorators(StoreSet(RULE.person, true), Returns(403, ErrorEnvelope).Description("API tokens name no person"));
}

/**
 * The body relays protocol data verbatim (syslog lines, trap varbinds forwarded by a poller): the kernel's
 * check that refuses NUL and lone surrogates in JSON bodies (core/http/inputGuard.ts) does not apply to it,
 * and the handler must make such text storable itself (escape it, or keep it as raw bytes). Path and query
 * are still checked.
 */
export function ProtocolInput() {
  return StoreSet(RULE.protocolInput, true);
}

/** Folder-scoped callers get 403 `scope_unsupported`: the operation cannot honour scope. */
export function ScopeUnsupported() {
  return useDecorators(StoreSet(RULE.scopeUnsupported, true), Returns(403, ErrorEnvelope).Description("scope_unsupported for folder-scoped callers"));
}

/** In public-dashboard mode, anonymous callers may use this read (as a viewer with scope All). */
export function DashboardRead() {
  return StoreSet(RULE.dashboard, true);
}

/** In skeleton mode this read answers `answer` (an empty list, core only) instead of 503. */
export function SkeletonRead(answer: unknown) {
  return useDecorators(StoreSet(RULE.skeletonAnswer, true), Intercept(SkeletonReadInterceptor, { answer }));
}

/** The route needs no store and runs as usual in skeleton mode (reads only: writes always answer 503 there). */
export function WithoutStore() {
  return StoreSet(RULE.withoutStore, true);
}
