import type pg from "pg";
import type { Logger } from "../logging/Logger.js";
import { findPgError, isStoreUnreachable } from "./pgErrors.js";
import { within } from "../util/within.js";
import { closePool, createPool, timedSibling, type ReadDb } from "./Store.js";
import { runNamed } from "./namedStatements.js";

export interface ReadReplicaOptions {
  urls: string[];
  /** A replica that may miss transactions committed longer ago than this is skipped. */
  maxLagSecs: number;
  /** How often the primary's WAL position is sampled and each replica's replay position read. */
  checkIntervalMs: number;
}

/** What the metrics show of one replica. */
export interface ReplicaStatus {
  /** host:port/database (never the credentials). */
  name: string;
  /** Whether it serves reads now. */
  serving: boolean;
  /** Seconds of commits it may miss (null: unknown, never caught up or unreachable). */
  lagSecs: number | null;
}

/** The application_name of the read pools' connections (pg_stat_activity on a replica shows them). */
export const READ_APPLICATION_NAME = "nms-core-read";

/** A replica's reads fail fast (then go to the primary) rather than wait the primary pool's connect timeout. */
const REPLICA_CONNECT_TIMEOUT_MS = 1000;

/**
 * A read a replica has not answered by then (a server or network that hangs rather than refuses) is run again on the
 * primary. Above the longest heavy read (the events routes cap theirs at 20 s with statement_timeout), so a slow but
 * working replica is never read twice.
 */
const REPLICA_QUERY_TIMEOUT_MS = 60_000;

/** How long start() waits for the standbys that answer to replay the primary's position, and how often it looks. */
const START_CATCH_UP_MS = 3000;
const START_RECHECK_MS = 50;

/** pg_lsn text (`16/B374D848`) as a number that compares. */
function lsn(text: string): bigint {
  const [hi, lo] = text.split("/");
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/** A replica's reads that should go to the primary instead: it is unreachable, stopping, or cancelled the query for replay. */
function replicaFailure(err: unknown): boolean {
  if (isStoreUnreachable(err) || (err instanceof Error && err.message === "Query read timeout")) return true;
  // 40001: "canceling statement due to conflict with recovery"; 57P04: its database was dropped by replay.
  const code = findPgError(err)?.code;
  return code === "40001" || code === "57P04";
}

function replicaName(url: string, index: number): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return `replica-${index + 1}`;
  }
}

class Replica {
  /** Local time before which every transaction the primary committed is replayed here (-Infinity: none known). */
  caughtUpAt = -Infinity;
  /** Whether the last check found it a standby; false for a primary (promoted, or named by mistake) or an unreachable one. */
  standby = false;
  warned = false;

  constructor(
    readonly name: string,
    readonly pool: pg.Pool,
  ) {}
}

/**
 * The read replicas of one primary, and how each read picks where it runs. Staleness is measured without trusting
 * any server clock: every check samples the primary's WAL insert position at a local time t (taken before asking),
 * and a replica whose replay position has reached a sample's position holds every transaction committed before that
 * t. A read goes to a replica only while that t is at most `maxLagSecs` old (checked at the read, so a check loop
 * that stalls lets the bound expire rather than stretch); otherwise, and when a replica fails under a read, the read
 * runs on the primary. Round robin over the replicas that qualify.
 */
export class ReadReplicas implements ReadDb {
  private readonly replicas: Replica[];
  private readonly samples: { at: number; lsn: bigint }[] = [];
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;
  private next = 0;
  private closed = false;
  /** Told of every read served, with where: "primary" or a replica's name (the metrics' counter). */
  onServed: (where: string) => void = () => undefined;

  constructor(
    private readonly primary: pg.Pool,
    private readonly options: ReadReplicaOptions,
    private readonly log: Logger,
  ) {
    this.replicas = options.urls.map((url, i) => {
      const name = replicaName(url, i);
      const pool = createPool(url, (err) => log.warn("read replica connection lost", { replica: name, error: err.message }), 10, READ_APPLICATION_NAME, {
        connectTimeoutMs: REPLICA_CONNECT_TIMEOUT_MS,
        queryTimeoutMs: REPLICA_QUERY_TIMEOUT_MS,
      });
      return new Replica(name, pool);
    });
  }

  /**
   * Checks until every standby that answers has replayed the primary's position (so a healthy replica serves from
   * the first read), for at most START_CATCH_UP_MS, then every checkIntervalMs. Replication is asynchronous: a
   * standby a few milliseconds behind at the first sample is healthy, and is waited for rather than left out.
   */
  async start(): Promise<void> {
    const until = Date.now() + Math.min(START_CATCH_UP_MS, this.options.maxLagSecs * 1000);
    await this.check();
    while (!this.closed && Date.now() < until && this.replicas.some((r) => r.standby && !this.qualifies(r, Date.now()))) {
      await new Promise((resolve) => setTimeout(resolve, START_RECHECK_MS));
      await this.check();
    }
    const tick = () => {
      this.timer = setTimeout(() => {
        this.checking = this.check().finally(() => {
          this.checking = undefined;
          if (!this.closed) tick();
        });
      }, this.options.checkIntervalMs);
      this.timer.unref();
    };
    tick();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await within(this.checking ?? Promise.resolve(), 2 * this.checkLimitMs);
    await Promise.all(this.replicas.map((r) => closePool(r.pool)));
  }

  status(now = Date.now()): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      name: r.name,
      serving: this.qualifies(r, now),
      lagSecs: r.standby && r.caughtUpAt > -Infinity ? Math.max(0, now - r.caughtUpAt) / 1000 : null,
    }));
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.route((pool) => runNamed(sql, params, (q) => pool.query<R>(q)));
  }

  async timedQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(timeoutMs: number, sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    // The replica's (or, falling back, the primary's) timed sibling pool: one statement, cancelled by the server past the limit.
    return this.route((pool) => {
      const timed = timedSibling(pool, timeoutMs);
      if (timed) return runNamed(sql, params, (q) => timed.query<R>(q));
      return this.txOn(pool, async (client) => {
        await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
        return client.query<R>(sql, params);
      });
    });
  }

  async tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.route((pool) => this.txOn(pool, fn));
  }

  private async txOn<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let failed: unknown;
    try {
      await client.query("BEGIN READ ONLY");
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      failed = err;
      // A connection that failed or hung is dropped below: no ROLLBACK to wait on.
      if (!replicaFailure(err)) await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      try {
        client.release(failed !== undefined && replicaFailure(failed) ? (failed as Error) : undefined);
      } catch {
        // the server dropped the connection and the pool destroyed the client already
      }
    }
  }

  /** How long one check query may take before its server counts as not answering. */
  private get checkLimitMs(): number {
    return Math.max(REPLICA_CONNECT_TIMEOUT_MS, this.options.checkIntervalMs);
  }

  private qualifies(r: Replica, now: number): boolean {
    return r.standby && now - r.caughtUpAt <= this.options.maxLagSecs * 1000;
  }

  private pick(): Replica | null {
    const now = Date.now();
    for (let i = 0; i < this.replicas.length; i++) {
      const r = this.replicas[(this.next + i) % this.replicas.length];
      if (this.qualifies(r, now)) {
        this.next = (this.next + i + 1) % this.replicas.length;
        return r;
      }
    }
    return null;
  }

  private async route<T>(run: (pool: pg.Pool) => Promise<T>): Promise<T> {
    const replica = this.pick();
    if (replica) {
      try {
        const result = await run(replica.pool);
        this.onServed(replica.name);
        return result;
      } catch (err) {
        if (!replicaFailure(err)) throw err;
        // Out of rotation until a check finds it caught up again; this read is answered by the primary.
        replica.caughtUpAt = -Infinity;
        this.log.warn("read replica failed a read; reading from the primary", { replica: replica.name, error: (err as Error).message });
      }
    }
    const result = await run(this.primary);
    this.onServed("primary");
    return result;
  }

  private async check(): Promise<void> {
    const at = Date.now();
    try {
      const answer = await within(this.primary.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn"), this.checkLimitMs);
      if (answer) this.samples.push({ at, lsn: lsn(answer.rows[0].lsn) });
    } catch {
      // The primary is unreachable: no new sample, so the replicas' bounds age and expire on their own.
    }
    // Samples older than the bound can never qualify a replica: keep the newest one older than it as the floor.
    const horizon = Date.now() - this.options.maxLagSecs * 1000;
    while (this.samples.length > 1 && this.samples[1].at < horizon) this.samples.shift();
    await Promise.all(this.replicas.map((r) => this.checkReplica(r)));
  }

  private async checkReplica(r: Replica): Promise<void> {
    try {
      const answer = await within(
        r.pool.query<{ standby: boolean; replay: string | null }>("SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replay"),
        this.checkLimitMs,
      );
      // A replica that hangs (a stalled network, an overloaded server) serves nothing until it answers a check in time.
      if (!answer) throw new Error("check timed out");
      const { standby, replay } = answer.rows[0];
      r.standby = standby && replay !== null;
      if (!standby && !r.warned) {
        r.warned = true;
        this.log.warn("a read replica is not a standby (promoted, or the primary itself): it serves no reads", { replica: r.name });
      }
      if (!r.standby) return;
      const replayed = lsn(replay!);
      for (let i = this.samples.length - 1; i >= 0; i--) {
        if (this.samples[i].lsn <= replayed) {
          r.caughtUpAt = Math.max(r.caughtUpAt, this.samples[i].at);
          break;
        }
      }
    } catch {
      r.standby = false;
      r.caughtUpAt = -Infinity;
    }
  }
}
