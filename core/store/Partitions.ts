import { hostname } from "node:os";
import type pg from "pg";
import type { Logger } from "../logging/Logger.js";

/**
 * Partitioned engines (ADR 0017). The subjects of the stateful engines (nodes, pools, organizations) are split into a
 * fixed number of partitions (`partitions.count`, partition = hash(subject key) mod count). Each live replica holds its
 * fair share of them as session advisory locks on one connection of its own, next to a membership lock that lets every
 * replica count the live ones. A replica's locks go with its session: released at once on a stop, when its process
 * dies (the server sees the connection close) or when the holder's own check finds the connection gone. Every replica
 * ticks every `retryMs`: it gives back what is above its share and takes free partitions up to it, so a dead
 * replica's partitions move within about one tick.
 *
 * Work for a partition held elsewhere goes through `core.partition_inbox` (rows + one NOTIFY per batch): the owner
 * drains the rows of its partitions on the notification, on every tick (a missed notification) and as soon as it takes
 * a partition, so what was sent to a replica that died meanwhile is read by the next owner.
 */

/** What a plugin's engine does with the partitions (one space per engine; every space of a replica shares its partitions). */
export interface PartitionHandlers<M> {
  /** This replica took these partitions: rebuild their state from the store. Runs before their messages are read. */
  acquired(partitions: readonly number[], space: PartitionSpace<M>): Promise<void>;
  /** This replica gives these partitions up (a rebalance or a stop): write what is pending and forget their state. */
  lost(partitions: readonly number[], space: PartitionSpace<M>): Promise<void>;
  /** Messages other replicas sent to partitions this replica holds, in the order they were sent. */
  received(messages: readonly PartitionMessage<M>[]): Promise<void>;
}

export interface PartitionMessage<M> {
  partition: number;
  payload: M;
}

export interface PartitionSettings {
  /** How many partitions (the same on every replica). */
  count: number;
  /** How often a replica rebalances and checks its connection (ms): the failover time's bound. */
  retryMs: number;
}

/** A plugin's view of the partitions: who owns a subject, and sending work to its owner. */
export interface PartitionSpace<M> {
  /** How many partitions there are (`partitions.count`). */
  readonly count: number;
  /** The partition of a subject key (a node id, `pool:<name>` …). */
  partitionOf(key: string): number;
  /** Whether this replica holds the partition now. */
  owns(partition: number): boolean;
  /** Whether this replica holds every partition (alone, or the others gone): no message needs to leave it. */
  readonly solo: boolean;
  /** Queues a message for the owner of `partition` (written with the next batch, at the end of this turn). */
  send(partition: number, payload: M): void;
  /** Resolves when what was sent so far is written (tests, benches, a stop). */
  flush(): Promise<void>;
  /** Stops taking this space's messages (the replica keeps its partitions for the other spaces). */
  leave(): void;
}

export const DEFAULT_PARTITIONS: PartitionSettings = { count: 32, retryMs: 1000 };
const CHANNEL = "nms_partitions";
const DRAIN_LIMIT = 5000;

/** FNV-1a of the key: stable across replicas and versions (the partition of a subject must not move with a release). */
export function partitionOf(key: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % count;
}

interface Space {
  name: string;
  handlers: PartitionHandlers<unknown>;
  /** What the plugin holds (handed to its handlers too: the first `acquired` runs before join() returns it). */
  view: PartitionSpace<unknown>;
  outbox: { partition: number; payload: unknown }[];
  sending: Promise<void>;
  scheduled: boolean;
  /** A drain is wanted (a notification came while one ran). */
  again: boolean;
  draining: Promise<void> | null;
  left: boolean;
}

/**
 * The replica's partitions: one per store, shared by every plugin's space (so a node's alerts and its event windows
 * live on the same replica).
 */
export class PartitionSet {
  private client: pg.PoolClient | null = null;
  private held = new Set<number>();
  private spaces = new Map<string, Space>();
  private member = 0;
  private timer: NodeJS.Timeout | null = null;
  private turn: Promise<void> = Promise.resolve();
  private started: Promise<void> | null = null;
  private stopped = false;
  private readonly memberKey: string;
  private readonly partKey: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: PartitionSettings,
    private readonly log: Logger,
  ) {
    this.memberKey = "nms.members";
    this.partKey = "nms.partitions";
  }

  get count(): number {
    return this.settings.count;
  }

  /** The partitions this replica holds (a copy). */
  holding(): number[] {
    return [...this.held].sort((a, b) => a - b);
  }

  /** Joins a space (a name without ":"); resolves once this replica took its first share and `acquired` ran for it. */
  async join<M>(name: string, handlers: PartitionHandlers<M>): Promise<PartitionSpace<M>> {
    if (this.spaces.has(name)) throw new Error(`partition space ${name} is joined already`);
    if (name.includes(":")) throw new Error(`partition space ${name}: the name may not hold ":"`);
    const space: Space = {
      name,
      handlers: handlers as PartitionHandlers<unknown>,
      view: null as unknown as PartitionSpace<unknown>,
      outbox: [],
      sending: Promise.resolve(),
      scheduled: false,
      again: false,
      draining: null,
      left: false,
    };
    space.view = this.spaceView(space);
    await this.start();
    // Joined inside a step: no rebalance runs between its `acquired` and its first drain.
    await this.serial(async () => {
      this.spaces.set(name, space);
      const held = this.holding();
      try {
        if (held.length) await space.handlers.acquired(held, space.view);
      } catch (err) {
        this.spaces.delete(name);
        throw err;
      }
    });
    this.drain(space);
    return space.view as PartitionSpace<M>;
  }

  private spaceView<M>(space: Space): PartitionSpace<M> {
    const held = this.held;
    const count = this.settings.count;
    return {
      count,
      partitionOf: (key) => partitionOf(key, count),
      owns: (p) => held.has(p),
      get solo() {
        return held.size === count;
      },
      send: (p, payload) => this.send(space, p, payload),
      flush: () => this.flushSpace(space),
      leave: () => {
        space.left = true;
        this.spaces.delete(space.name);
      },
    };
  }

  private start(): Promise<void> {
    this.started ??= this.serial(() => this.tick()).finally(() => this.schedule());
    return this.started;
  }

  /** Gives every partition up (each space's `lost` first) and stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const s of this.spaces.values()) await this.flushSpace(s).catch(() => undefined);
    await this.serial(() => this.dropAll("stopping"));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.serial(() => this.tick()).finally(() => this.schedule());
    }, this.settings.retryMs);
    this.timer.unref();
  }

  private serial(step: () => Promise<void>): Promise<void> {
    const run = this.turn.then(step, step);
    this.turn = run.catch((err) => this.log.error("partitions: step failed", { error: (err as Error).message }));
    return run;
  }

  // ---- membership and balance ---------------------------------------------------------------------------

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (!this.client && !(await this.connect())) return;
    const client = this.client!;
    let members: number;
    let taken: Set<number>;
    try {
      const { rows } = await client.query<{ members: number; taken: number[] }>(
        `SELECT count(*) FILTER (WHERE classid = (hashtext($1)::bigint & 4294967295)::oid)::int AS members,
                coalesce(array_agg(objid::bigint) FILTER (WHERE classid = (hashtext($2)::bigint & 4294967295)::oid), '{}') AS taken
           FROM pg_locks
          WHERE locktype = 'advisory' AND objsubid = 2 AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [this.memberKey, this.partKey],
      );
      members = Math.max(1, rows[0].members);
      taken = new Set(rows[0].taken.map(Number));
    } catch (err) {
      await this.dropAll(`its database connection failed: ${(err as Error).message}`);
      return;
    }
    const share = Math.ceil(this.settings.count / members);
    if (this.held.size > share)
      await this.giveUp(
        this.preference()
          .filter((p) => this.held.has(p))
          .slice(share),
      );
    else if (this.held.size < share) await this.take(share - this.held.size, taken);
    for (const s of this.spaces.values()) this.drain(s);
  }

  /** A connection of its own, with the membership lock (an id no live replica uses). */
  private async connect(): Promise<boolean> {
    let client: pg.PoolClient | null = null;
    try {
      client = await this.pool.connect();
      for (let i = 0; i < 8 && !this.member; i++) {
        const id = 1 + Math.floor(Math.random() * 0x7ffffffe);
        const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok", [this.memberKey, id]);
        if (rows[0]?.ok) this.member = id;
      }
      if (!this.member) throw new Error("no free member id");
      // pg_stat_activity (and pg_locks by its pid) tell which replica holds which partitions.
      await client.query("SELECT set_config('application_name', $1, false)", [`nms-partitions ${hostname()} ${process.pid}`.slice(0, 63)]);
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      client?.release(true);
      this.member = 0;
      this.log.warn("partitions: not joined, the database did not answer", { error: (err as Error).message });
      return false;
    }
    client.on("notification", (n) => {
      // "<space>:<partition>,<partition>…": only a replica holding one of them reads.
      const payload = n.payload ?? "";
      const cut = payload.lastIndexOf(":");
      const space = this.spaces.get(cut < 0 ? payload : payload.slice(0, cut));
      if (!space) return;
      if (
        cut < 0 ||
        payload
          .slice(cut + 1)
          .split(",")
          .some((p) => this.held.has(Number(p)))
      )
        this.drain(space);
    });
    client.on("error", () => {
      if (this.client === client) void this.serial(() => this.dropAll("its database connection closed"));
    });
    this.client = client;
    this.log.info("partitions: replica joined", { member: this.member, partitions: this.settings.count });
    return true;
  }

  /** This replica's order of preference over the partitions (its share starts at a place of its own). */
  private preference(): number[] {
    const n = this.settings.count;
    const start = this.member % n;
    return Array.from({ length: n }, (_, i) => (start + i) % n);
  }

  private async take(wanted: number, taken: Set<number>): Promise<void> {
    const got: number[] = [];
    for (const p of this.preference()) {
      if (got.length >= wanted) break;
      if (this.held.has(p) || taken.has(p)) continue;
      try {
        const { rows } = await this.client!.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok", [this.partKey, p]);
        if (rows[0]?.ok) got.push(p);
      } catch (err) {
        this.log.warn("partitions: lock attempt failed", { error: (err as Error).message });
        break;
      }
    }
    if (got.length === 0) return;
    const ready: Space[] = [];
    for (const s of this.spaces.values()) {
      try {
        await s.handlers.acquired(got, s.view);
        ready.push(s);
      } catch (err) {
        // The state could not be rebuilt: the partitions go back rather than be served half-known.
        this.log.error("partitions: a space failed to take partitions; giving them back", { space: s.name, error: (err as Error).message });
        for (const r of ready) await r.handlers.lost(got, r.view).catch(() => undefined);
        await this.unlock(got);
        return;
      }
    }
    for (const p of got) this.held.add(p);
    this.log.info("partitions taken", { partitions: got, holding: this.held.size });
  }

  private async giveUp(parts: number[]): Promise<void> {
    if (parts.length === 0) return;
    for (const p of parts) this.held.delete(p);
    await this.lost(parts);
    await this.unlock(parts);
    this.log.info("partitions given up", { partitions: parts, holding: this.held.size });
  }

  private async lost(parts: number[]): Promise<void> {
    for (const s of this.spaces.values()) {
      await this.flushSpace(s).catch(() => undefined);
      try {
        await s.handlers.lost(parts, s.view);
      } catch (err) {
        this.log.error("partitions: a space failed to give partitions up", { space: s.name, error: (err as Error).message });
      }
    }
  }

  private async unlock(parts: number[]): Promise<void> {
    for (const p of parts) await this.client?.query("SELECT pg_advisory_unlock(hashtext($1), $2)", [this.partKey, p]).catch(() => undefined);
  }

  /** Everything goes: the connection (and with its session every lock) is closed. */
  private async dropAll(why: string): Promise<void> {
    const parts = this.holding();
    this.held.clear();
    if (parts.length) await this.lost(parts);
    const client = this.client;
    this.client = null;
    this.member = 0;
    if (client) {
      client.release(true);
      this.log.info("partitions: replica left", { why, partitions: parts.length });
    }
  }

  // ---- messages -----------------------------------------------------------------------------------------

  private send(space: Space, partition: number, payload: unknown): void {
    space.outbox.push({ partition, payload });
    if (space.scheduled) return;
    space.scheduled = true;
    setImmediate(() => {
      space.scheduled = false;
      void this.flushSpace(space).catch((err) => this.log.error("partitions: messages not sent", { space: space.name, error: (err as Error).message }));
    });
  }

  /** Writes the space's outbox: one INSERT and one NOTIFY (sent at its commit). Retries a failed write once per call. */
  private flushSpace(space: Space): Promise<void> {
    const run = space.sending.then(async () => {
      if (space.outbox.length === 0) return;
      const batch = space.outbox;
      space.outbox = [];
      try {
        await this.pool.query(
          `WITH ins AS (
             INSERT INTO core.partition_inbox (space, partition, payload)
             SELECT $1, p, m FROM unnest($2::int[], $3::text[]) AS t (p, m)
             RETURNING 1)
           SELECT pg_notify($4, $5) FROM (SELECT count(*) FROM ins) c`,
          [
            space.name,
            batch.map((b) => b.partition),
            batch.map((b) => JSON.stringify(b.payload)),
            CHANNEL,
            `${space.name}:${[...new Set(batch.map((b) => b.partition))].join(",")}`,
          ],
        );
      } catch (err) {
        space.outbox = batch.concat(space.outbox);
        throw err;
      }
    });
    space.sending = run.catch(() => undefined);
    return run;
  }

  /** Reads (and deletes) the messages of the partitions held, in sending order, and hands them to the space. */
  private drain(space: Space): void {
    if (space.left || this.held.size === 0) return;
    if (space.draining) {
      space.again = true;
      return;
    }
    space.draining = (async () => {
      do {
        space.again = false;
        let more = true;
        while (more && !space.left && this.held.size > 0) {
          const parts = this.holding();
          const { rows } = await this.pool.query<{ id: string; partition: number; payload: string }>(
            `DELETE FROM core.partition_inbox WHERE id IN (
               SELECT id FROM core.partition_inbox WHERE space = $1 AND partition = ANY($2::int[]) ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED)
             RETURNING id, partition, payload`,
            [space.name, parts, DRAIN_LIMIT],
          );
          more = rows.length === DRAIN_LIMIT;
          if (rows.length === 0) break;
          rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
          await space.handlers.received(rows.map((r) => ({ partition: r.partition, payload: JSON.parse(r.payload) as unknown })));
        }
      } while (space.again);
    })()
      .catch((err) => this.log.error("partitions: messages not read", { space: space.name, error: (err as Error).message }))
      .finally(() => (space.draining = null));
  }
}
