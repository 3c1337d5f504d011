/**
 * The journal ranges a consumer of the ingest journal stored (ADR 0015): each stored batch writes the offsets
 * [first, end) it covered, per journal id, in the batch's own transaction, so a replay after a crash skips exactly
 * what PostgreSQL holds. Each plugin that consumes a journal keeps its own table of this shape (its migration):
 * `(journal_id uuid, first_offset bigint, end_offset bigint, committed_at timestamptz)`.
 */
import type { Queryable } from "./Store.js";

/** Journal offsets [first, end) of one stored batch. */
export interface JournalRange {
  journalId: string;
  first: number;
  end: number;
}

/** Records the ranges (call inside the transaction that stores their rows). */
export async function insertJournalRanges(db: Queryable, table: string, ranges: readonly JournalRange[]): Promise<void> {
  if (!ranges.length) return;
  await db.query(`INSERT INTO ${table} (journal_id, first_offset, end_offset) SELECT * FROM unnest($1::uuid[], $2::int8[], $3::int8[])`, [
    ranges.map((r) => r.journalId),
    ranges.map((r) => r.first),
    ranges.map((r) => r.end),
  ]);
}

/** The ranges [first, end) of journal `id` stored at or past offset `from`, in order (a replay skips them). */
export async function storedJournalRanges(db: Queryable, table: string, id: string, from: number): Promise<[number, number][]> {
  const { rows } = await db.query<{ first: string; end: string }>(
    `SELECT first_offset AS first, end_offset AS end FROM ${table} WHERE journal_id = $1 AND end_offset > $2 ORDER BY first_offset`,
    [id, from],
  );
  return rows.map((r) => [Number(r.first), Number(r.end)]);
}

/** Forgets the ranges of journal `id` wholly below `below` (its checkpoint file holds that much). */
export async function pruneJournalRanges(db: Queryable, table: string, id: string, below: number): Promise<void> {
  await db.query(`DELETE FROM ${table} WHERE journal_id = $1 AND end_offset <= $2`, [id, below]);
}
