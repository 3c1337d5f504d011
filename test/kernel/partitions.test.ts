/**
 * The partitions of the engines (core/store/Partitions.ts, ADR 0017), two replicas' sets in one process on one database:
 * one set alone holds everything; two split them evenly; a message sent to another owner arrives there in order; when an
 * owner's connection dies its partitions move, and what was sent to it and never read is read by the next owner.
 */
import type pg from "pg";
import { JsonLogger } from "../../core/logging/Logger.js";
import { coreMigrations } from "../../core/store/coreMigrations.js";
import { migratePlugin } from "../../core/store/Migrator.js";
import { PartitionSet, type PartitionMessage, type PartitionSpace } from "../../core/store/Partitions.js";
import { closePool, createPool, Store } from "../../core/store/Store.js";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { until } from "../support/wait.js";

const COUNT = 8;
const RETRY_MS = 200;
const log = new JsonLogger("error", "test", () => undefined);

interface Replica {
  pool: pg.Pool;
  set: PartitionSet;
  space: PartitionSpace<{ n: number }>;
  got: PartitionMessage<{ n: number }>[];
  events: string[];
}

let db: string;
const replicas: Replica[] = [];

async function replica(): Promise<Replica> {
  const pool = createPool(db, () => undefined, 4);
  const set = new PartitionSet(pool, { count: COUNT, retryMs: RETRY_MS }, log);
  const r = { pool, set, got: [], events: [] } as unknown as Replica;
  r.space = await set.join<{ n: number }>("test", {
    // The space comes with the first `acquired` already (join() has not returned it yet then).
    acquired: async (parts, space) => void r.events.push(`acquired ${parts.join(",")} of ${space.count}`),
    lost: async (parts) => void r.events.push(`lost ${parts.join(",")}`),
    received: async (messages) => void r.got.push(...messages),
  });
  replicas.push(r);
  return r;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const store = new Store(createPool(db, () => undefined, 2));
  await migratePlugin(store, "core", coreMigrations, log);
  await store.close();
});

afterAll(async () => {
  for (const r of replicas) {
    await r.set.stop().catch(() => undefined);
    await closePool(r.pool);
  }
});

describe("partitions", () => {
  it("are all held by a replica alone, which then sends nothing", async () => {
    const a = await replica();
    expect(a.set.holding()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(a.space.solo).toBe(true);
    expect(a.events).toEqual(["acquired 0,1,2,3,4,5,6,7 of 8"]);
    expect(a.space.partitionOf("0b0c3c52-3b9e-4d0a-9c53-2a7c1c5c0001")).toBe(a.space.partitionOf("0b0c3c52-3b9e-4d0a-9c53-2a7c1c5c0001"));
  });

  it("split evenly when a second replica joins; each gives up before the other takes", async () => {
    const [a] = replicas;
    const b = await replica();
    await until("four partitions each", async () => a.set.holding().length === 4 && b.set.holding().length === 4, 10_000);
    expect([...a.set.holding(), ...b.set.holding()].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(a.space.solo).toBe(false);
    expect(a.events[1]).toMatch(/^lost /);
    const given = a.events[1].slice(5).split(",").map(Number);
    expect(given.sort()).toEqual(b.set.holding());
  });

  it("carry messages to the owner, in the order sent", async () => {
    const [a, b] = replicas;
    const theirs = b.set.holding()[0];
    for (let n = 0; n < 300; n++) a.space.send(theirs, { n });
    await a.space.flush();
    await until("300 messages received", async () => b.got.length >= 300, 10_000);
    expect(b.got.map((m) => m.payload.n)).toEqual(Array.from({ length: 300 }, (_, n) => n));
    expect(new Set(b.got.map((m) => m.partition))).toEqual(new Set([theirs]));
    expect(a.got).toEqual([]);
  });

  it("move when their owner's connection dies; what it never read goes to the next owner", async () => {
    const [a, b] = replicas;
    const hers = b.set.holding();
    // b stops reading (as a process about to die), messages wait for it, then its lock connection is cut.
    b.space.leave();
    for (let n = 0; n < 50; n++) a.space.send(hers[n % hers.length], { n: 1000 + n });
    await a.space.flush();
    const [{ pid }] = await rawQuery<{ pid: number }>(
      db,
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND objid = $1
          AND classid = (hashtext('nms.partitions')::bigint & 4294967295)::oid`,
      [hers[0]],
    );
    const cut = Date.now();
    await rawQuery(db, "SELECT pg_terminate_backend($1)", [pid]);
    // Dead, not restarting: it must not join again.
    void b.set.stop();
    await until("a holds every partition again", async () => a.set.holding().length === COUNT, 10_000);
    const moved = Date.now() - cut;
    await until("the waiting messages read by a", async () => a.got.length === 50, 10_000);
    expect(a.got.map((m) => m.payload.n)).toEqual(Array.from({ length: 50 }, (_, n) => 1000 + n));
    expect(moved).toBeLessThan(5 * RETRY_MS + 2000);
    const [{ n }] = await rawQuery<{ n: number }>(db, "SELECT count(*)::int AS n FROM core.partition_inbox");
    expect(n).toBe(0);
  });
});
