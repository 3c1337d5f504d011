export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = ["read", "ManageConfig", "ManageSystem", "AckAlerts", "ManageMaintenance"] as const;
export type PermissionName = (typeof PERMISSIONS)[number];

/** The role → permission table (docs/adr/0003-auth-and-scope.md). */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<PermissionName>> = {
  viewer: new Set(["read"]),
  operator: new Set(["read", "AckAlerts", "ManageMaintenance", "ManageConfig"]),
  admin: new Set(PERMISSIONS),
};

/** `"All"` = unrestricted; otherwise the folders (and everything beneath them) the account may see. */
export type Scope = "All" | { folders: string[] };

export interface Caller {
  /** `session` = a person logged in; `token` = an API token (no person); `anonymous` = public-dashboard visitor. */
  kind: "session" | "token" | "anonymous";
  username: string;
  role: Role;
  scope: Scope;
  accountId: string | null;
  sessionId: string | null;
  tokenId: string | null;
}

export function hasPermission(caller: Pick<Caller, "role">, permission: PermissionName): boolean {
  return ROLE_PERMISSIONS[caller.role].has(permission);
}

export function isUnrestricted(scope: Scope): scope is "All" {
  return scope === "All";
}

/** The folders a list is filtered by: null for scope All, else the scope's folders (everything beneath them is visible). */
export function scopeFolders(scope: Scope): string[] | null {
  return scope === "All" ? null : scope.folders;
}

/** Whether a scope covers an item filed under `folderPath` (the folder and its ancestors; empty = tree root). */
export function scopeCovers(scope: Scope, folderPath: readonly string[]): boolean {
  if (scope === "All") return true;
  return folderPath.some((f) => scope.folders.includes(f));
}

export const ANONYMOUS_VIEWER: Caller = {
  kind: "anonymous",
  username: "anonymous",
  role: "viewer",
  scope: "All",
  accountId: null,
  sessionId: null,
  tokenId: null,
};
