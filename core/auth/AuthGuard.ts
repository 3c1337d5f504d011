import { Inject } from "@tsed/di";
import { Context } from "@tsed/platform-params";
import { Middleware, type MiddlewareMethods } from "@tsed/platform-middlewares";
import type { PlatformContext } from "@tsed/platform-http";
import { ApiError, forbidden, storeUnavailable, unauthorized } from "../errors.js";
import { setCaller } from "../http/requestContext.js";
import { KernelRuntime } from "../config/KernelRuntime.js";
import { AuthService } from "./AuthService.js";
import { ANONYMOUS_VIEWER, hasPermission, type Caller } from "./Caller.js";
import { RULE, type AccessRule } from "./rules.js";

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthorized('The Authorization header must be "Bearer <token>".');
  return m[1];
}

/**
 * Runs before every handler: who is calling (401), may they (403), and can this
 * deployment serve it (503 in skeleton mode). The rule comes from the route's
 * decorators; a route without one never mounts (see PluginHost).
 */
@Middleware()
export class AuthGuard implements MiddlewareMethods {
  @Inject(AuthService)
  private auth: AuthService;

  @Inject(KernelRuntime)
  private runtime: KernelRuntime;

  async use(@Context() ctx: PlatformContext): Promise<void> {
    const store = ctx.endpoint.store;
    const rule = store.get(RULE.access) as AccessRule;
    let caller: Caller | undefined;
    if (rule.kind === "public") {
      // A public route (health, login, the OpenAPI document) never fails on the Authorization header.
      try {
        const token = bearer(ctx.request.get("authorization"));
        if (token) caller = await this.auth.authenticate(token);
      } catch {
        // Stale, unknown or malformed; or the store is down (health must still answer then).
        caller = undefined;
      }
    } else {
      const token = bearer(ctx.request.get("authorization"));
      if (token) caller = await this.auth.authenticate(token);
      if (!caller) {
        if (this.runtime.publicDashboard && store.get(RULE.dashboard)) caller = ANONYMOUS_VIEWER;
        else throw unauthorized();
      }
      if (rule.kind === "permission" && !hasPermission(caller, rule.permission)) {
        throw forbidden("permission_denied", `Your role (${caller.role}) lacks the ${rule.permission} permission.`);
      }
      // Without a store, nothing a person-only or scope-aware route does can run: say so before finer refusals.
      this.checkSkeleton(ctx.request.method, store);
      if (store.get(RULE.person) && caller.kind !== "session") {
        throw new ApiError(403, "person_required", "Only a person (a session) can do this; API tokens name no person.");
      }
      if (store.get(RULE.scopeUnsupported) && caller.scope !== "All") {
        throw forbidden("scope_unsupported", "This operation cannot honour a folder scope; it needs an account with scope All.");
      }
    }
    if (caller) setCaller(ctx, caller);
    this.checkSkeleton(ctx.request.method, store);
  }

  /** Skeleton mode: every write answers 503, and reads too unless they declared a skeleton answer or need no store. */
  private checkSkeleton(method: string, store: { get(key: string): unknown }): void {
    if (!this.runtime.skeleton) return;
    if (!READ_METHODS.has(method.toUpperCase())) throw storeUnavailable();
    if (!store.get(RULE.skeletonAnswer) && !store.get(RULE.withoutStore)) throw storeUnavailable();
  }
}
