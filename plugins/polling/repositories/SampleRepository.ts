import { Inject, Injectable } from "@tsed/di";
import { ident, type Queryable } from "../../../core/index.js";
import type { Sample } from "../contract.js";
import type { InterfaceState } from "../poller/types.js";
import type { InterfaceUpdate } from "../poller/wire.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

/** "none" in the key columns of latest and samples. */
const NONE = -1;
const DAY_MS = 86_400_000;

/** The partition of polling.samples holding one UTC day: samples_YYYYMMDD. */
export function partitionName(dayStartMs: number): string {
  return `samples_${new Date(dayStartMs).toISOString().slice(0, 10).replace(/-/g, "")}`;
}

export function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** A stored sample's key, as the bus filter compares them. */
export function sampleKey(node: string, metric: string, ifindex: number, row: number, atMs: number | string): string {
  return `${node}|${metric}|${ifindex}|${row}|${atMs}`;
}

/** Millisecond timestamps go in as an exact interval from the epoch (no float rounding). */
const AT = (param: string) => `timestamptz 'epoch' + ${param} * interval '1 millisecond'`;

/** SQL for the sample history (day partitions), latest values and interface state. */
@Injectable()
export class SampleRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  /** Day partitions of polling.samples that exist (their day start, Unix ms). */
  async partitionDays(db: Queryable = this.ctx.store): Promise<number[]> {
    const { rows } = await db.query<{ relname: string }>(
      `SELECT c.relname FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent
         JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = $1 AND p.relname = 'samples'`,
      [this.ctx.store.schema],
    );
    const days: number[] = [];
    for (const r of rows) {
      const m = /^samples_(\d{4})(\d{2})(\d{2})$/.exec(r.relname);
      if (m) days.push(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    }
    return days.sort((a, b) => a - b);
  }

  /** Creates the day partitions that are missing (replicas racing for the same day take turns on a lock). */
  async createPartitions(days: number[]): Promise<void> {
    if (!days.length) return;
    await this.ctx.store.tx(async (db) => {
      await db.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`${this.ctx.store.schema}.samples partitions`]);
      for (const day of days) {
        const from = new Date(day).toISOString();
        const to = new Date(day + DAY_MS).toISOString();
        await db.query(
          `CREATE TABLE IF NOT EXISTS ${this.ctx.store.table(partitionName(day))} PARTITION OF ${this.ctx.store.table("samples")}
             FOR VALUES FROM ('${from}') TO ('${to}')`,
        );
      }
    });
  }

  async dropPartition(day: number): Promise<void> {
    await this.ctx.store.query(`DROP TABLE IF EXISTS ${ident(this.ctx.store.schema)}.${ident(partitionName(day))}`);
  }

  /**
   * Appends samples to the history; a sample already stored (same node, metric, interface or row,
   * and time) is skipped. Returns the keys of those inserted.
   */
  async insertSamples(samples: readonly Sample[], db: Queryable): Promise<Set<string>> {
    if (!samples.length) return new Set();
    const { rows } = await db.query<{ k: string }>(
      `INSERT INTO ${this.ctx.store.table("samples")} AS s (node_id, metric, ifindex, row_key, at, value)
       SELECT u.node_id, u.metric, u.ifindex, u.row_key, ${AT("u.at_ms")}, u.value
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::bigint[], $6::float8[]) AS u(node_id, metric, ifindex, row_key, at_ms, value)
       ON CONFLICT (node_id, metric, ifindex, row_key, at) DO NOTHING
       RETURNING s.node_id || '|' || s.metric || '|' || s.ifindex || '|' || s.row_key || '|' || (extract(epoch FROM s.at) * 1000)::bigint AS k`,
      [
        samples.map((s) => s.node_id),
        samples.map((s) => s.metric),
        samples.map((s) => s.ifindex ?? NONE),
        samples.map((s) => s.row ?? NONE),
        samples.map((s) => Math.round(s.at_unix_ms)),
        samples.map((s) => s.value),
      ],
    );
    return new Set(rows.map((r) => r.k));
  }

  /** Latest value per (node, metric, ifindex, row): a sample older than the stored one (backfill) leaves it. */
  async upsertLatest(samples: readonly Sample[], db: Queryable): Promise<void> {
    // One row per key (ON CONFLICT cannot touch a row twice): the newest sample of the batch.
    const newest = new Map<string, Sample>();
    for (const s of samples) {
      const key = `${s.node_id}|${s.metric}|${s.ifindex ?? NONE}|${s.row ?? NONE}`;
      const had = newest.get(key);
      if (!had || had.at_unix_ms <= s.at_unix_ms) newest.set(key, s);
    }
    const rows = [...newest.values()];
    if (!rows.length) return;
    await db.query(
      `INSERT INTO ${this.ctx.store.table("latest")} AS l (node_id, metric, ifindex, row_key, value, at, if_name, row_name)
       SELECT u.node_id, u.metric, u.ifindex, u.row_key, u.value, ${AT("u.at_ms")}, u.if_name, u.row_name
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::float8[], $6::bigint[], $7::text[], $8::text[])
              AS u(node_id, metric, ifindex, row_key, value, at_ms, if_name, row_name)
       ON CONFLICT (node_id, metric, ifindex, row_key) DO UPDATE
          SET value = EXCLUDED.value, at = EXCLUDED.at, if_name = EXCLUDED.if_name, row_name = EXCLUDED.row_name
        WHERE l.at <= EXCLUDED.at`,
      [
        rows.map((s) => s.node_id),
        rows.map((s) => s.metric),
        rows.map((s) => s.ifindex ?? NONE),
        rows.map((s) => s.row ?? NONE),
        rows.map((s) => s.value),
        rows.map((s) => Math.round(s.at_unix_ms)),
        rows.map((s) => s.if_name),
        rows.map((s) => s.row_name),
      ],
    );
  }

  /** What pollers learnt of interfaces (name, alias, speed, oper status, last counters); an older report leaves a newer row. */
  async upsertInterfaces(updates: readonly InterfaceUpdate[], db: Queryable): Promise<void> {
    const newest = new Map<string, InterfaceUpdate>();
    for (const u of updates) {
      const key = `${u.node_id}|${u.ifindex}`;
      const had = newest.get(key);
      if (!had || had.at_unix_ms <= u.at_unix_ms) newest.set(key, u);
    }
    const rows = [...newest.values()];
    if (!rows.length) return;
    await db.query(
      `INSERT INTO ${this.ctx.store.table("interfaces")} AS i
              (node_id, ifindex, if_name, if_alias, if_speed_bps, oper_up, counter_bits, last_counters, last_uptime_ticks, last_polled_at, updated_at)
       SELECT u.node_id, u.ifindex, u.if_name, u.if_alias, u.speed, u.oper_up, u.bits, u.counters::jsonb, u.uptime, ${AT("u.at_ms")}, now()
         FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::bigint[], $6::boolean[], $7::smallint[], $8::text[], $9::bigint[], $10::bigint[])
              AS u(node_id, ifindex, if_name, if_alias, speed, oper_up, bits, counters, uptime, at_ms)
       ON CONFLICT (node_id, ifindex) DO UPDATE
          SET if_name = EXCLUDED.if_name, if_alias = EXCLUDED.if_alias, if_speed_bps = EXCLUDED.if_speed_bps, oper_up = EXCLUDED.oper_up,
              counter_bits = EXCLUDED.counter_bits, last_counters = EXCLUDED.last_counters, last_uptime_ticks = EXCLUDED.last_uptime_ticks,
              last_polled_at = EXCLUDED.last_polled_at, updated_at = now()
        WHERE i.last_polled_at IS NULL OR i.last_polled_at <= EXCLUDED.last_polled_at`,
      [
        rows.map((u) => u.node_id),
        rows.map((u) => u.ifindex),
        rows.map((u) => u.if_name),
        rows.map((u) => u.if_alias),
        rows.map((u) => (u.if_speed_bps === null ? null : Math.round(u.if_speed_bps))),
        rows.map((u) => u.oper_up),
        rows.map((u) => u.counter_bits),
        rows.map((u) => JSON.stringify(u.counters)),
        rows.map((u) => u.uptime_ticks),
        rows.map((u) => Math.round(u.at_unix_ms)),
      ],
    );
  }

  /** Rate state of the interfaces of a pool's nodes (to seed a poller that restarts). */
  async interfaceStates(pool: string): Promise<(InterfaceState & { node_id: string })[]> {
    const { rows } = await this.ctx.store.query<{
      node_id: string;
      ifindex: number;
      counter_bits: number;
      last_counters: InterfaceState["counters"];
      last_uptime_ticks: string | null;
      at_ms: string;
    }>(
      `SELECT i.node_id, i.ifindex, i.counter_bits, i.last_counters, i.last_uptime_ticks, (extract(epoch FROM i.last_polled_at) * 1000)::bigint AS at_ms
         FROM ${this.ctx.store.table("interfaces")} i
         JOIN inventory.node_directory d ON d.id = i.node_id
        WHERE d.effective_pool = $1 AND i.last_counters IS NOT NULL AND i.last_polled_at IS NOT NULL AND i.counter_bits IS NOT NULL`,
      [pool],
    );
    return rows.map((r) => ({
      node_id: r.node_id,
      ifindex: r.ifindex,
      counter_bits: r.counter_bits === 64 ? 64 : 32,
      counters: r.last_counters,
      uptime_ticks: r.last_uptime_ticks === null ? null : Number(r.last_uptime_ticks),
      at_unix_ms: Number(r.at_ms),
    }));
  }

  /** A node left the inventory: its latest values and interfaces go (history ages out with its partitions). */
  async forgetNode(nodeId: string): Promise<void> {
    // One statement (atomic as the transaction it replaces, one round trip on a pool connection instead of four).
    await this.ctx.store.query(
      `WITH latest AS (DELETE FROM ${this.ctx.store.table("latest")} WHERE node_id = $1)
       DELETE FROM ${this.ctx.store.table("interfaces")} WHERE node_id = $1`,
      [nodeId],
    );
  }
}
