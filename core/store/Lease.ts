import type pg from "pg";
import type { Logger } from "../logging/Logger.js";

/** What a lease holder runs: `acquired` when this replica takes the lease, `lost` when it gives it up or loses it. */
export interface LeaseHandlers {
  acquired(): Promise<void>;
  lost(): Promise<void>;
}

export interface LeaseOptions {
  /** How often a replica without the lease tries to take it, and the holder checks it still holds it (ms). */
  retryMs?: number;
}

/**
 * One job for one replica at a time, held in PostgreSQL: a session advisory lock on a connection of its own. Every
 * replica tries to take it; the holder runs `acquired`, the others retry every `retryMs`. The lock belongs to the
 * holder's database session, so it goes when the holder stops (released at once), is killed (its connection closes)
 * or loses the database (the holder's check fails and it runs `lost`); another replica takes it at its next try.
 */
export class Lease {
  private client: pg.PoolClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private turn: Promise<void> = Promise.resolve();
  private holding = false;

  constructor(
    private readonly pool: pg.Pool,
    /** Namespace and name of the lease (hashed into the lock's two keys). */
    private readonly key: [string, string],
    private readonly handlers: LeaseHandlers,
    private readonly log: Logger,
    private readonly retryMs = 2000,
  ) {}

  /** Whether this replica holds the lease now. */
  get held(): boolean {
    return this.holding;
  }

  /** Starts trying; resolves after the first try (the lease taken, and `acquired` run, if it was free). */
  start(): Promise<void> {
    const first = this.serial(() => this.tick());
    void first.finally(() => this.schedule(this.retryMs));
    return first;
  }

  /** Gives the lease up (running `lost` first when held) and stops trying. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.serial(() => this.release("stopping"));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.serial(() => this.tick()).finally(() => this.schedule(this.retryMs));
    }, ms);
    this.timer.unref();
  }

  /** Runs one step at a time: a try, a check or the release never overlap. */
  private serial(step: () => Promise<void>): Promise<void> {
    this.turn = this.turn.then(step, step);
    return this.turn;
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.holding) {
      try {
        await this.client!.query("SELECT 1");
      } catch (err) {
        await this.release(`its database connection failed: ${(err as Error).message}`);
      }
      return;
    }
    let client: pg.PoolClient | null = null;
    try {
      client = await this.pool.connect();
      const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS ok", this.key);
      if (!rows[0]?.ok) {
        client.release();
        return;
      }
    } catch (err) {
      client?.release(true);
      this.log.warn("lease not taken: the database did not answer", { lease: this.key.join("."), error: (err as Error).message });
      return;
    }
    this.client = client;
    this.holding = true;
    client.on("error", () => {
      if (this.client === client) void this.serial(() => this.release("its database connection closed"));
    });
    this.log.info("lease taken", { lease: this.key.join(".") });
    try {
      await this.handlers.acquired();
    } catch (err) {
      this.log.error("lease holder failed to start; giving the lease up", { lease: this.key.join("."), error: (err as Error).message });
      await this.release("its holder failed to start");
    }
  }

  private async release(why: string): Promise<void> {
    if (!this.holding) return;
    this.holding = false;
    const client = this.client!;
    this.client = null;
    try {
      await this.handlers.lost();
    } catch (err) {
      this.log.error("lease holder failed to stop", { lease: this.key.join("."), error: (err as Error).message });
    }
    // Closing the session releases the lock even when the unlock cannot be sent.
    await client.query("SELECT pg_advisory_unlock(hashtext($1), hashtext($2))", this.key).catch(() => undefined);
    client.release(true);
    this.log.info("lease given up", { lease: this.key.join("."), why });
  }
}
