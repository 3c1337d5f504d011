import type { ResolvedCredential } from "./AuthRepository.js";

/** What every replica reads before trusting its cache: the auth epoch (core.auth_epoch) and the database's clock. */
export interface AuthEpoch {
  v: string;
  nowMs: number;
}

/** A credential as cached: expiry kept as a time, judged against the database's clock of each request. */
export interface CachedCredential extends Omit<ResolvedCredential, "expired" | "expires_ms"> {
  expiresMs: number | null;
}

/** Most credentials one process keeps; past it the cache starts again (bounded memory, whatever the token churn). */
const MAX_ENTRIES = 10_000;

/**
 * Resolved bearer tokens of this process, valid for one auth epoch. Any change that can end or narrow a credential
 * (revoke, logout, role, scope, password, deletion) moves core.auth_epoch in the same transaction (triggers of
 * migration 0006), and every request reads the epoch first: a change committed before a request began is seen by
 * that request on every replica, so nothing cached outlives it. LISTEN/NOTIFY would save that read but arrives
 * asynchronously: a replica could still accept a token another replica has just revoked.
 *
 * The epoch read is one prepared statement of one row: it replaces the credential look-up (a two-table union) and the
 * last_used_at update that every request used to run.
 */
export class CredentialCache {
  private readonly entries = new Map<string, CachedCredential>();
  private epoch: string | null = null;

  constructor(private readonly readEpoch: () => Promise<AuthEpoch>) {}

  /**
   * The current epoch, read by a statement of this request's own (so it began after the request arrived). Drops every
   * entry when the epoch moved. Not shared between concurrent requests: a request resumed from another request's
   * query callback ran in that request's context, and Ts.ED then skipped body validation for some (the fuzz test's
   * 500s with a shared read; none without).
   */
  async current(): Promise<AuthEpoch> {
    const e = await this.readEpoch();
    if (e.v !== this.epoch) {
      this.entries.clear();
      this.epoch = e.v;
    }
    return e;
  }

  get(key: string, epoch: AuthEpoch): CachedCredential | undefined {
    return epoch.v === this.epoch ? this.entries.get(key) : undefined;
  }

  /** Keeps `cred` if the epoch it was read under is still the one this cache holds. */
  set(key: string, cred: CachedCredential, epoch: AuthEpoch): void {
    if (epoch.v !== this.epoch) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, cred);
  }

  get size(): number {
    return this.entries.size;
  }
}
