import { ident, type PluginStore } from "./Store.js";

export const DAY_MS = 86_400_000;

/** Start of the UTC day holding `ms`. */
export function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/**
 * The UTC-day partitions of one range-partitioned table of a plugin (`<table>_YYYYMMDD`): which
 * exist, creating the missing ones ahead (replicas racing for the same day take turns on an advisory
 * lock), and the retention that drops whole days. The parent is `PARTITION BY RANGE (<time column>)`.
 */
export class DayPartitions {
  private known = new Set<number>();
  private loaded = false;

  constructor(
    private readonly store: PluginStore,
    private readonly table: string,
  ) {}

  name(day: number): string {
    return `${this.table}_${new Date(day).toISOString().slice(0, 10).replace(/-/g, "")}`;
  }

  /** Days that have a partition (day start, Unix ms), oldest first. */
  async days(): Promise<number[]> {
    const { rows } = await this.store.query<{ relname: string }>(
      `SELECT c.relname FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent
         JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = $1 AND p.relname = $2`,
      [this.store.schema, this.table],
    );
    const pattern = new RegExp(`^${this.table}_(\\d{4})(\\d{2})(\\d{2})$`);
    const days: number[] = [];
    for (const r of rows) {
      const m = pattern.exec(r.relname);
      if (m) days.push(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    }
    return days.sort((a, b) => a - b);
  }

  /** Makes sure the days holding these times have partitions; `refresh` re-reads what exists first (another replica may have dropped one). */
  async ensure(times: Iterable<number>, refresh = false): Promise<void> {
    if (!this.loaded || refresh) {
      this.known = new Set(await this.days());
      this.loaded = true;
    }
    const missing = [...new Set([...times].map(dayStart))].filter((d) => !this.known.has(d));
    if (!missing.length) return;
    await this.store.tx(async (db) => {
      await db.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`${this.store.schema}.${this.table} partitions`]);
      for (const day of missing) {
        const from = new Date(day).toISOString();
        const to = new Date(day + DAY_MS).toISOString();
        await db.query(
          `CREATE TABLE IF NOT EXISTS ${this.store.table(this.name(day))} PARTITION OF ${this.store.table(this.table)} FOR VALUES FROM ('${from}') TO ('${to}')`,
        );
      }
    });
    for (const d of missing) this.known.add(d);
  }

  /** Partitions for today and `ahead` days after; drops days older than `keepDays` before today. Returns the days dropped. */
  async maintain(keepDays: number, ahead: number, now = Date.now()): Promise<number[]> {
    const today = dayStart(now);
    await this.ensure(
      Array.from({ length: ahead + 1 }, (_, i) => today + i * DAY_MS),
      true,
    );
    const cutoff = today - keepDays * DAY_MS;
    const dropped: number[] = [];
    for (const day of await this.days()) {
      if (day >= cutoff) continue;
      await this.store.query(`DROP TABLE IF EXISTS ${ident(this.store.schema)}.${ident(this.name(day))}`);
      this.known.delete(day);
      dropped.push(day);
    }
    return dropped;
  }
}
