import type { Store } from "../store/Store.js";

/**
 * Failed-login limiter: a sliding window of failures per username and per client address (the address gets four times
 * the allowance, so one office behind NAT is not locked out by one person). With a store the failures are rows in
 * PostgreSQL (`core.login_failures`), counted on the database's clock, so every replica sees the same window and N
 * replicas allow what one does; without one (skeleton mode, where no login can succeed anyway) they are kept in memory.
 */
export interface LoginRateLimiter {
  /** Seconds until the caller may try again, or 0 when allowed. */
  retryAfter(username: string, address: string): Promise<number>;
  fail(username: string, address: string): Promise<void>;
  succeed(username: string): Promise<void>;
}

const userKey = (username: string) => `u:${username.toLowerCase()}`;
const addressKey = (address: string) => `a:${address}`;

/** The limiter for this deployment: shared through the store when there is one. */
export function loginRateLimiter(store: Store, maxFailures: number, windowMs: number): LoginRateLimiter {
  return store.available ? new SharedLoginRateLimiter(store, maxFailures, windowMs) : new MemoryLoginRateLimiter(maxFailures, windowMs);
}

/** Failures as rows of core.login_failures, read and written by every replica. */
export class SharedLoginRateLimiter implements LoginRateLimiter {
  private lastPrune = 0;

  constructor(
    private readonly store: Store,
    private readonly maxFailures: number,
    private readonly windowMs: number,
  ) {}

  async retryAfter(username: string, address: string): Promise<number> {
    // For each key at its limit: how long until its oldest failure that still counts leaves the window.
    const { rows } = await this.store.query<{ wait_ms: string | null }>(
      `WITH recent AS (
         SELECT key, at, row_number() OVER (PARTITION BY key ORDER BY at DESC) AS nth
           FROM core.login_failures
          WHERE key = ANY($1::text[]) AND at > clock_timestamp() - $2 * interval '1 millisecond'
       )
       SELECT max(extract(epoch FROM (at + $2 * interval '1 millisecond' - clock_timestamp())) * 1000) AS wait_ms
         FROM recent
        WHERE (key = $1[1] AND nth = $3) OR (key = $1[2] AND nth = $4)`,
      [[userKey(username), addressKey(address)], this.windowMs, this.maxFailures, this.maxFailures * 4],
    );
    const wait = Number(rows[0]?.wait_ms ?? 0);
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  async fail(username: string, address: string): Promise<void> {
    await this.store.query(`INSERT INTO core.login_failures (key) VALUES ($1), ($2)`, [userKey(username), addressKey(address)]);
    // Rows past the window count for nothing: dropped at most once a minute per replica.
    const now = Date.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    await this.store.query(`DELETE FROM core.login_failures WHERE at < clock_timestamp() - $1 * interval '1 millisecond'`, [this.windowMs]);
  }

  async succeed(username: string): Promise<void> {
    await this.store.query(`DELETE FROM core.login_failures WHERE key = $1`, [userKey(username)]);
  }
}

/** Failures in this process's memory (no store). */
export class MemoryLoginRateLimiter implements LoginRateLimiter {
  private failures = new Map<string, number[]>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
  ) {}

  async retryAfter(username: string, address: string, now = Date.now()): Promise<number> {
    const u = this.recent(userKey(username), now);
    const a = this.recent(addressKey(address), now);
    let wait = 0;
    if (u.length >= this.maxFailures) wait = Math.max(wait, u[u.length - this.maxFailures] + this.windowMs - now);
    if (a.length >= this.maxFailures * 4) wait = Math.max(wait, a[a.length - this.maxFailures * 4] + this.windowMs - now);
    return Math.ceil(wait / 1000);
  }

  async fail(username: string, address: string, now = Date.now()): Promise<void> {
    for (const key of [userKey(username), addressKey(address)]) {
      const list = this.recent(key, now);
      list.push(now);
      this.failures.set(key, list);
    }
  }

  async succeed(username: string): Promise<void> {
    this.failures.delete(userKey(username));
  }

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (list.length) this.failures.set(key, list);
    else this.failures.delete(key);
    return list;
  }
}
