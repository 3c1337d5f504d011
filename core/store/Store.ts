import pg from "pg";
import { storeUnavailable } from "../errors.js";
import type { Logger } from "../logging/Logger.js";
import { Lease, type LeaseHandlers, type LeaseOptions } from "./Lease.js";
import { runNamed, withPlanCacheMode } from "./namedStatements.js";
import { DEFAULT_PARTITIONS, PartitionSet, type PartitionHandlers, type PartitionSettings, type PartitionSpace } from "./Partitions.js";

/** Anything that runs a parameterised query: the store, a plugin store, or a transaction's client. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** What serves a plugin's heavy reads: the primary itself, or the read replicas in front of it (ReadReplicas.ts). */
export interface ReadDb extends Queryable {
  /** One read-only unit of work on one connection (a `SET LOCAL` then the query); rerun on the primary if a replica fails under it. */
  tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /**
   * One query the server cancels after `timeoutMs` (SQLSTATE 57014), in one round trip: it runs on a sibling pool whose
   * connections got that statement_timeout at connect (timedSibling), not in a transaction with `SET LOCAL`.
   */
  timedQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(timeoutMs: number, sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * SQL rendering a timestamptz column as RFC 3339 UTC text with its full microseconds
 * (a JS Date would drop them, and keyset cursors built from it would skip rows).
 */
export function isoTimestamp(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** Quotes an identifier for SQL (schema, table or column names that come from code, never from users). */
export function ident(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/**
 * The one durable store (PostgreSQL). In skeleton mode there is none: `available`
 * is false and every use throws the 503 envelope error.
 */
export class Store implements ReadDb {
  private replicas: ReadDb | null = null;
  private partitionSettings: PartitionSettings = DEFAULT_PARTITIONS;
  private partitionSet: PartitionSet | null = null;

  constructor(public readonly pool: pg.Pool | null) {}

  /**
   * Where heavy reads that may be a few seconds stale go: the read replicas when DATABASE_READ_URL names some (each
   * read falls back to the primary when none is fresh enough), else the primary. Writes, and reads that must see a
   * write just made, use the store itself.
   */
  get read(): ReadDb {
    return this.replicas ?? this;
  }

  /** The kernel's store phase sets this once when read replicas are configured. */
  useReadReplicas(replicas: ReadDb): void {
    this.replicas = replicas;
  }

  /** The kernel's `partitions` settings (before any plugin joins). */
  configurePartitions(settings: PartitionSettings): void {
    this.partitionSettings = settings;
  }

  /** The replica's partitions (ADR 0017), made on the first join. */
  partitions(log: Logger): PartitionSet {
    const pool = this.requirePool();
    this.partitionSet ??= new PartitionSet(pool, this.partitionSettings, log);
    return this.partitionSet;
  }

  get available(): boolean {
    return this.pool !== null;
  }

  private requirePool(): pg.Pool {
    if (!this.pool) throw storeUnavailable();
    return this.pool;
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    const pool = this.requirePool();
    return runNamed(sql, params, (q) => pool.query<R>(q));
  }

  async timedQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(timeoutMs: number, sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    const pool = this.requirePool();
    const timed = timedSibling(pool, timeoutMs);
    if (timed) return runNamed(sql, params, (q) => timed.query<R>(q));
    return this.tx(async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${statementTimeout(timeoutMs)}`);
      return client.query<R>(sql, params);
    });
  }

  /** Runs `fn` in one transaction; any throw rolls everything back. */
  async tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.requirePool().connect();
    try {
      await client.query("BEGIN");
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      try {
        client.release();
      } catch {
        // the server dropped the connection and the pool destroyed the client already (see createPool)
      }
    }
  }

  forPlugin(pluginId: string): PluginStore {
    return new PluginStore(this, pluginId);
  }

  async close(): Promise<void> {
    // The partitions go first, so the other replicas take them at their next tick.
    await this.partitionSet?.stop();
    if (this.pool) await closePool(this.pool);
  }
}

/**
 * A plugin's handle on the store: the shared pool, plus its own schema name so
 * repositories write `${store.table("nodes")}` and never reach another plugin's tables.
 */
export class PluginStore {
  readonly schema: string;

  constructor(
    private readonly store: Store,
    pluginId: string,
  ) {
    this.schema = schemaName(pluginId);
  }

  get available(): boolean {
    return this.store.available;
  }

  /** The schema-qualified, quoted name of one of this plugin's tables. */
  table(name: string): string {
    return `${ident(this.schema)}.${ident(name)}`;
  }

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.store.query<R>(sql, params);
  }

  tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.store.tx(fn);
  }

  timedQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(timeoutMs: number, sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.store.timedQuery<R>(timeoutMs, sql, params);
  }

  /**
   * The read replicas (DATABASE_READ_URL), for heavy reads that may be up to `readReplicas.maxLagSecs` stale (history,
   * lists, statistics); the primary when none is configured or fresh enough. Never for writes, nor for a read that must
   * see a write this request (or the client's previous one) just made.
   */
  get read(): ReadDb {
    return this.store.read;
  }

  /**
   * A job that must run on one replica at a time (the embedded poller of a pool): the replica that takes the lease
   * runs `acquired`, the others wait; it moves within about `retryMs` when its holder stops or dies. Call `start()`.
   */
  lease(name: string, handlers: LeaseHandlers, log: Logger, options: LeaseOptions = {}): Lease {
    if (!this.store.pool) throw storeUnavailable();
    return new Lease(this.store.pool, [this.schema, name], handlers, log, options.retryMs);
  }

  /**
   * Joins the replica's partitioned engines (ADR 0017) as space `name`: subjects are split into partitions, each held by
   * one live replica; `acquired` and `lost` follow this replica's share, `received` gets what other replicas sent to its
   * partitions. Resolves once this replica took its first share. The space name must be unique (the plugin id, or
   * `<plugin id>.<engine>`).
   */
  partitions<M>(name: string, handlers: PartitionHandlers<M>, log: Logger): Promise<PartitionSpace<M>> {
    return this.store.partitions(log).join(name, handlers);
  }
}

/** A plugin id is kebab-case; its schema uses underscores so it needs no quoting in hand-written SQL. */
export function schemaName(pluginId: string): string {
  return pluginId.replace(/-/g, "_");
}

/** How long a query waits for a connection before failing (503 store_unavailable) rather than hanging while the database is down. */
export const CONNECT_TIMEOUT_MS = 5000;

/** A client the server dropped while it was checked out and that nobody gave back within this time is destroyed by the pool's owner. */
const ABANDONED_CLIENT_MS = 1000;

/**
 * A pool whose idle-client errors (server restart, shutdown) are logged instead of crashing the process, that fails
 * fast when the server is unreachable, and that does not leak the slot of a client held for good (a LISTEN client)
 * when the server ends its connection: the libraries holding one reconnect with a new client and never release the old.
 */
export function createPool(url: string, onError: (err: Error) => void, max = 10, applicationName = "nms-core", limits: PoolLimits = {}): pg.Pool {
  const pool = new pg.Pool({
    // Named statements planned for their parameters on every connection (namedStatements.ts).
    ...withPlanCacheMode(url),
    max,
    application_name: applicationName,
    connectionTimeoutMillis: limits.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    // Client-side: a query with no answer by then fails ("Query read timeout") and its connection is dropped.
    ...(limits.queryTimeoutMs ? { query_timeout: limits.queryTimeoutMs } : {}),
    // Server-side, sent in the startup packet: every statement of the connection is cancelled past it (57014).
    ...(limits.statementTimeoutMs ? { statement_timeout: limits.statementTimeoutMs } : {}),
  });
  poolMakers.set(pool, { make: (ms) => createPool(url, onError, max, applicationName, { ...limits, statementTimeoutMs: ms }), timed: new Map() });
  const connected = new Set<pg.PoolClient>();
  const checkedOut = new Set<pg.PoolClient>();
  liveClients.set(pool, connected);
  pool.on("connect", (client) => {
    connected.add(client);
    // The pool reports errors of idle clients; a client checked out for good (the Socket.IO adapter's LISTEN connection)
    // reports them on itself, and without a listener the process dies when the server ends connections.
    client.on("error", onError);
    client.once("end", () => {
      const timer = setTimeout(() => {
        if (!checkedOut.has(client)) return;
        try {
          client.release(true);
        } catch {
          // released meanwhile
        }
      }, ABANDONED_CLIENT_MS);
      timer.unref();
    });
  });
  pool.on("acquire", (client) => checkedOut.add(client));
  pool.on("release", (_err, client) => checkedOut.delete(client));
  pool.on("remove", (client) => {
    connected.delete(client);
    checkedOut.delete(client);
  });
  pool.on("error", onError);
  return pool;
}

const liveClients = new WeakMap<pg.Pool, Set<pg.PoolClient>>();

export interface PoolLimits {
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
  /** statement_timeout of every connection, set at connect (timedSibling). */
  statementTimeoutMs?: number;
}

/** How createPool made a pool (to make its timed siblings), and the siblings made so far (by timeout). */
const poolMakers = new WeakMap<pg.Pool, { make: (statementTimeoutMs: number) => pg.Pool; timed: Map<number, pg.Pool> }>();

/** A statement_timeout value (integer ms, at least 1: 0 would mean none). */
function statementTimeout(ms: number): number {
  return Math.max(1, Math.floor(ms));
}

/**
 * The sibling of a createPool pool (same server, settings and size) whose connections run every statement under
 * statement_timeout = `ms`, set once at connect: a time-limited read is then one statement, where a transaction with
 * `SET LOCAL` is four (BEGIN, SET, the query, COMMIT; pg's writes of those were 9 % of the event list's CPU). Made on
 * first use; idle connections close as the pool's do; closePool(pool) ends it. Null for a pool createPool did not make.
 */
export function timedSibling(pool: pg.Pool, ms: number): pg.Pool | null {
  const maker = poolMakers.get(pool);
  if (!maker) return null;
  const key = statementTimeout(ms);
  let timed = maker.timed.get(key);
  if (!timed) maker.timed.set(key, (timed = maker.make(key)));
  return timed;
}

/** A createPool pool and the timed siblings made of it so far: every connection it holds against the server. */
export function poolFamily(pool: pg.Pool): pg.Pool[] {
  return [pool, ...(poolMakers.get(pool)?.timed.values() ?? [])];
}

/**
 * Ends a pool and waits (up to `ms`) until its connections are really closed: `pool.end()` resolves once each client
 * was asked to end, and a server stopped right then would end the rest itself, each an error in the log.
 */
export async function closePool(pool: pg.Pool, ms = 5000): Promise<void> {
  const siblings = poolMakers.get(pool)?.timed;
  if (siblings?.size) {
    const all = [...siblings.values()];
    siblings.clear();
    await Promise.all(all.map((p) => closePool(p, ms)));
  }
  const connected = liveClients.get(pool);
  const ended = pool.end();
  if (!(await settlesWithin(ended, ms))) {
    // A client still checked out holds end() forever: a library that took one and never gave it back (the Socket.IO
    // adapter, closed while its LISTEN client was being set up). Destroy what is left rather than hang the shutdown.
    for (const client of connected ?? []) {
      try {
        client.release(true);
      } catch {
        // already released
      }
    }
    await settlesWithin(ended, ms);
  }
  const deadline = Date.now() + ms;
  while (connected?.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  return done;
}
