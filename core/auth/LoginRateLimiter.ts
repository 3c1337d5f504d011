/**
 * Failed-login limiter: a sliding window of failures per username and per client
 * address (the address gets four times the allowance, so one office behind NAT
 * is not locked out by one person). In memory, per process: a replica set
 * multiplies the allowance by the replica count (docs/adr/0003).
 */
export class LoginRateLimiter {
  private failures = new Map<string, number[]>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
  ) {}

  /** Seconds until the caller may try again, or 0 when allowed. */
  retryAfter(username: string, address: string, now = Date.now()): number {
    const u = this.recent(`u:${username.toLowerCase()}`, now);
    const a = this.recent(`a:${address}`, now);
    let wait = 0;
    if (u.length >= this.maxFailures) wait = Math.max(wait, u[0] + this.windowMs - now);
    if (a.length >= this.maxFailures * 4) wait = Math.max(wait, a[0] + this.windowMs - now);
    return Math.ceil(wait / 1000);
  }

  fail(username: string, address: string, now = Date.now()): void {
    for (const key of [`u:${username.toLowerCase()}`, `a:${address}`]) {
      const list = this.recent(key, now);
      list.push(now);
      this.failures.set(key, list);
    }
  }

  succeed(username: string): void {
    this.failures.delete(`u:${username.toLowerCase()}`);
  }

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (list.length) this.failures.set(key, list);
    else this.failures.delete(key);
    return list;
  }
}
