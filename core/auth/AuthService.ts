import { timingSafeEqual } from "node:crypto";
import type { KernelConfig } from "../config/Config.js";
import { ApiError, badRequest, conflict, notFound, unauthorized } from "../errors.js";
import type { Logger } from "../logging/Logger.js";
import { isPgError, PG_ERROR } from "../store/pgErrors.js";
import type { Store } from "../store/Store.js";
import { isUuid } from "../util/uuid.js";
import { AuthRepository, type AccountRow, type TokenRow } from "./AuthRepository.js";
import { CredentialCache } from "./CredentialCache.js";
import type { Caller, Role, Scope } from "./Caller.js";
import { loginRateLimiter, type LoginRateLimiter } from "./LoginRateLimiter.js";
import { DUMMY_HASH, hashPassword, newToken, randomPassword, tokenHash, verifyPassword } from "./passwords.js";

export interface AccountView {
  id: string;
  username: string;
  role: Role;
  scope: Scope;
  created_at: string;
  updated_at: string;
}

export interface TokenView {
  id: string;
  name: string;
  role: Role;
  scope: Scope;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

const toAccountView = ({ password_hash: _omit, ...rest }: AccountRow): AccountView => rest;
const toTokenView = (t: TokenRow): TokenView => ({ ...t });

const isUnrestrictedAdmin = (a: AccountRow) => a.role === "admin" && a.scope === "All";

function isUniqueViolation(err: unknown): boolean {
  return isPgError(err, PG_ERROR.uniqueViolation);
}

/** Accounts, sessions and API tokens; who a bearer token is. */
export class AuthService {
  readonly repo: AuthRepository;
  private readonly limiter: LoginRateLimiter;
  private readonly bootstrapHash: Buffer | null;
  /** Resolved bearer tokens, valid while the auth epoch stands (see CredentialCache). */
  private readonly cache: CredentialCache;
  /** When this process last wrote each API token's last_used_at (the column has a minute's resolution anyway). */
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly config: KernelConfig,
    private readonly log: Logger,
  ) {
    this.repo = new AuthRepository(store);
    this.limiter = loginRateLimiter(store, config.auth.loginMaxFailures, config.auth.loginWindowSecs * 1000);
    this.bootstrapHash = config.bootstrapToken ? tokenHash(config.bootstrapToken) : null;
    this.cache = new CredentialCache(() => this.repo.readEpoch());
  }

  /** Resolves a bearer token to its caller, or throws 401. */
  async authenticate(token: string): Promise<Caller> {
    const hash = tokenHash(token);
    if (!this.store.available) {
      if (this.bootstrapHash && timingSafeEqual(hash, this.bootstrapHash)) return this.bootstrapCaller();
      throw unauthorized("The bearer token is not valid.");
    }
    // Every request reads the epoch (shared between concurrent requests); a cached credential is used only under it.
    const epoch = await this.cache.current();
    const key = hash.toString("base64");
    let cred = this.cache.get(key, epoch);
    if (!cred) {
      const found = await this.repo.findCredential(hash);
      if (!found) throw unauthorized("The bearer token is not valid.");
      if (found.expired) throw new ApiError(401, "token_expired", "The bearer token has expired.");
      const { expired: _expired, expires_ms, ...rest } = found;
      cred = { ...rest, expiresMs: expires_ms };
      this.cache.set(key, cred, epoch);
    } else if (cred.expiresMs !== null && cred.expiresMs <= epoch.nowMs) {
      throw new ApiError(401, "token_expired", "The bearer token has expired.");
    }
    if (cred.kind === "token") this.touch(cred.id, epoch.nowMs);
    return {
      kind: cred.kind,
      username: cred.username,
      role: cred.role,
      scope: cred.scope,
      accountId: cred.account_id,
      sessionId: cred.kind === "session" ? cred.id : null,
      tokenId: cred.kind === "token" ? cred.id : null,
    };
  }

  /** last_used_at, written at most once a minute per token by this process (the statement itself skips fresher rows). */
  private touch(tokenId: string, nowMs: number): void {
    const last = this.touched.get(tokenId);
    if (last !== undefined && nowMs - last < 60_000) return;
    if (this.touched.size >= 10_000) this.touched.clear();
    this.touched.set(tokenId, nowMs);
    void this.repo.touchToken(tokenId).catch(() => undefined);
  }

  private bootstrapCaller(): Caller {
    return { kind: "token", username: "bootstrap", role: "admin", scope: "All", accountId: null, sessionId: null, tokenId: null };
  }

  async login(username: string, password: string, address: string): Promise<{ token: string; expires_at: string }> {
    const wait = await this.limiter.retryAfter(username, address);
    if (wait > 0) {
      const err = new ApiError(429, "too_many_attempts", `Too many failed logins; try again in ${wait} seconds.`);
      err.setHeaders({ "Retry-After": String(wait) });
      throw err;
    }
    const account = await this.repo.findAccountByUsername(username);
    const ok = await verifyPassword(password, account?.password_hash ?? DUMMY_HASH);
    if (!account || !ok) {
      await this.limiter.fail(username, address);
      this.log.warn("failed login", { username, address });
      throw unauthorized("Wrong username or password.");
    }
    await this.limiter.succeed(username);
    const token = newToken("nmss");
    const session = await this.repo.insertSession(account.id, tokenHash(token), this.config.auth.sessionTtlSecs);
    this.log.info("session opened", { username: account.username });
    return { token, expires_at: session.expires_at };
  }

  async logout(caller: Caller): Promise<void> {
    if (caller.kind !== "session" || !caller.sessionId)
      throw new ApiError(403, "person_required", "Only a session (a person) can be ended here; revoke API tokens under /tokens.");
    await this.repo.deleteSession(caller.sessionId);
  }

  async listAccounts(limit: number, after?: string): Promise<AccountView[]> {
    return (await this.repo.listAccounts(limit, after)).map(toAccountView);
  }

  async getAccount(id: string): Promise<AccountView> {
    const row = await this.repo.getAccount(id);
    if (!row) throw notFound("No such account.");
    return toAccountView(row);
  }

  async createAccount(input: { username: string; password: string; role: Role; scope: Scope }): Promise<string> {
    validateScope(input.scope);
    try {
      return await this.repo.insertAccount({ ...input, passwordHash: await hashPassword(input.password) });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict("username_taken", "An account with that username exists.");
      throw err;
    }
  }

  async updateAccount(id: string, input: { role: Role; scope: Scope; password?: string }): Promise<void> {
    validateScope(input.scope);
    const passwordHash = input.password ? await hashPassword(input.password) : undefined;
    await this.store.tx(async (db) => {
      await this.repo.lockAdmins(db);
      const current = await this.repo.getAccount(id, db);
      if (!current) throw notFound("No such account.");
      const losesSystem = isUnrestrictedAdmin(current) && !(input.role === "admin" && input.scope === "All");
      if (losesSystem && (await this.repo.countUnrestrictedAdmins(db)) <= 1) {
        throw conflict("last_admin", "The last admin account with scope All cannot lose its role or scope.");
      }
      await this.repo.updateAccount(id, { role: input.role, scope: input.scope, passwordHash }, db);
      // A new password ends the account's sessions: whoever knew the old one is logged out.
      if (passwordHash) await this.repo.deleteSessionsOf(id, db);
    });
  }

  async deleteAccount(id: string): Promise<void> {
    await this.store.tx(async (db) => {
      await this.repo.lockAdmins(db);
      const current = await this.repo.getAccount(id, db);
      if (!current) throw notFound("No such account.");
      if (isUnrestrictedAdmin(current) && (await this.repo.countUnrestrictedAdmins(db)) <= 1) {
        throw conflict("last_admin", "The last admin account with scope All cannot be deleted.");
      }
      await this.repo.deleteAccount(id, db);
    });
  }

  async createToken(input: { name: string; role: Role; scope: Scope; expires_at?: string | null }): Promise<{ id: string; token: string }> {
    validateScope(input.scope);
    if (input.expires_at && !(Date.parse(input.expires_at) > Date.now())) throw badRequest("validation_failed", "expires_at must be a future timestamp.");
    const token = newToken("nmst");
    const id = await this.repo.insertToken({
      name: input.name,
      role: input.role,
      scope: input.scope,
      hash: tokenHash(token),
      expiresAt: input.expires_at ?? null,
    });
    this.log.info("API token created", { name: input.name, role: input.role, id });
    return { id, token };
  }

  async listTokens(limit: number, before?: { at: string; id: string | null }): Promise<TokenView[]> {
    return (await this.repo.listTokens(limit, before)).map(toTokenView);
  }

  async deleteToken(id: string): Promise<void> {
    if (!(await this.repo.deleteToken(id))) throw notFound("No such token.");
  }

  /**
   * Boot-time (full mode): the bootstrap token is exactly NMS_BOOTSTRAP_TOKEN (revoked when
   * the variable is removed), and on a store with no accounts at all an `admin` account
   * is created (NMS_ADMIN_PASSWORD, or a generated password printed once).
   */
  async bootstrap(print: (line: string) => void): Promise<void> {
    if (!this.store.available) return;
    await this.repo.setBootstrapToken(this.bootstrapHash);
    if (this.bootstrapHash) this.log.info("bootstrap API token ensured");
    if ((await this.repo.countAccounts()) > 0) return;
    const password = this.config.adminPassword ?? randomPassword();
    try {
      await this.repo.insertAccount({ username: "admin", role: "admin", scope: "All", passwordHash: await hashPassword(password) });
    } catch (err) {
      if (isUniqueViolation(err)) return; // another replica created it first
      throw err;
    }
    if (this.config.adminPassword) this.log.info("admin account created with NMS_ADMIN_PASSWORD");
    else print(`Created account "admin" with generated password: ${password}  (shown once; change it with PUT /api/v1/accounts/{id})`);
  }

  async pruneSessions(): Promise<number> {
    return this.repo.deleteExpiredSessions();
  }
}

export function validateScope(scope: unknown): asserts scope is Scope {
  if (scope === "All") return;
  const folders = (scope as { folders?: unknown })?.folders;
  if (
    scope &&
    typeof scope === "object" &&
    Object.keys(scope).length === 1 &&
    Array.isArray(folders) &&
    folders.length > 0 &&
    folders.length <= 256 &&
    folders.every(isUuid) &&
    new Set(folders).size === folders.length
  ) {
    return;
  }
  throw badRequest("invalid_scope", 'scope must be "All" or {"folders": [<uuid>, ...]} with 1 to 256 distinct folder ids.');
}
