import type { PermissionName } from "./Caller.js";

/** Where the access decorators record a route's rules (read by the guard, and by the boot's route check). */
export const RULE = {
  access: "nms:access",
  person: "nms:person",
  scopeUnsupported: "nms:scopeUnsupported",
  dashboard: "nms:dashboard",
  skeletonAnswer: "nms:skeletonAnswer",
  withoutStore: "nms:withoutStore",
  protocolInput: "nms:protocolInput",
} as const;

/** `public` = no token; `authenticated` = any valid token; otherwise the permission the caller's role must grant. */
export type AccessRule = { kind: "public" } | { kind: "authenticated" } | { kind: "permission"; permission: PermissionName };
