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
 * The epoch reads are shared: at most one is in flight, and a request waits for one that started after it arrived
 * (never an earlier one, which could predate a revoke it must see), so under load one cheap statement serves many
 * requests.
 */
export class CredentialCache {
  private readonly entries = new Map<string, CachedCredential>();
  private epoch: string | null = null;
  private inFlight = false;
  private waiting: { resolve: (e: AuthEpoch) => void; reject: (err: unknown) => void }[] = [];

  constructor(private readonly readEpoch: () => Promise<AuthEpoch>) {}

  /** The current epoch, read by a statement that began after this call. Drops every entry when the epoch moved. */
  current(): Promise<AuthEpoch> {
    return new Promise<AuthEpoch>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.inFlight) this.readNext();
    });
  }

  private readNext(): void {
    const batch = this.waiting;
    this.waiting = [];
    this.inFlight = true;
    this.readEpoch().then(
      (e) => {
        if (e.v !== this.epoch) {
          this.entries.clear();
          this.epoch = e.v;
        }
        this.settle(batch, (w) => w.resolve(e));
      },
      (err: unknown) => this.settle(batch, (w) => w.reject(err)),
    );
  }

  private settle(batch: typeof this.waiting, fn: (w: (typeof this.waiting)[number]) => void): void {
    this.inFlight = false;
    if (this.waiting.length) this.readNext();
    for (const w of batch) fn(w);
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
