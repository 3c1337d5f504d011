import { Inject, Injectable } from "@tsed/di";
import {
  ApiError,
  copyLinesWithDeadLetters,
  insertJournalRanges,
  isoTimestamp,
  isPgError,
  PG_ERROR,
  pruneJournalRanges,
  storedJournalRanges,
  type CopyOutcome,
  type CopyWithDeadLettersOptions,
  type JournalRange,
} from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { REPORT_FLOWS_1H_VIEW, REPORT_FLOWS_1M_VIEW } from "../../flows/contract.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { CountBucket, EventView, TimeBucket } from "../models/EventModels.js";
import type { EventRow } from "../lib/types.js";
import { EVENT_COPY_COLUMNS } from "./eventCopy.js";

// EventRow lives in lib/types.ts (eventCopy.ts and the ingest workers need it without this repository).
export type { EventRow, JournalRange };

/** Conditions of the event list and the stats (the spec's stats query table), already validated. */
export interface EventFilter {
  start: string | null;
  end: string | null;
  kinds: string[] | null;
  nodeId: string | null;
  matched: boolean | null;
  actions: string[] | null;
  severities: number[] | null;
  q: { text: string; regex: boolean } | null;
  msg: { text: string; regex: boolean; not: boolean } | null;
  src: { text: string; cidr: boolean; not: boolean } | null;
  /** Folder scope: null = every event; else only events of nodes filed beneath these folders. */
  scopeFolders: string[] | null;
}

const VIEW_COLUMNS = `e.id, ${isoTimestamp("e.received_at")} AS received_at, e.kind, e.transport, e.listener, host(e.source_ip) AS source_ip, e.source_id, e.node_id,
  e.severity, e.facility, e.host, e.app, e.msgid, e.message, e.trap_oid, e.data, e.raw, e.malformed, e.action, e.rule_id`;

/** Stats over ranges up to this count flows from the minute rollups, longer ones from the hour rollups (as the reports do). */
const FLOW_MINUTES_UP_TO_MS = 2 * 86_400_000;

/** Longest a read of the events may run (a costly regex over a long range is stopped, not left to load the store). */
const READ_TIMEOUT = "20s";
const READ_TIMEOUT_MS = 20_000;

/**
 * SQL of events.events (daily partitions). Writes are one COPY per batch;
 * the list walks (received_at DESC, id DESC); stats aggregate over the same conditions.
 */
@Injectable()
export class EventRepository {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  private get t() {
    return this.ctx.store.table("events");
  }

  /**
   * Stores COPY lines (eventCopy.ts) and the journal ranges they came from, in one transaction: a row PostgreSQL
   * refuses is kept in the dead-letter table (core's copyLinesWithDeadLetters) and the rest stored; the ranges are
   * committed with the rows, so a replay after a crash skips exactly what was stored. Any other failure rolls back
   * the whole (the caller retries).
   */
  async store(text: string, ranges: readonly JournalRange[], opts: CopyWithDeadLettersOptions): Promise<CopyOutcome> {
    return this.ctx.store.tx(async (client) => {
      const outcome = text.length
        ? await copyLinesWithDeadLetters(client, { table: this.t, columns: EVENT_COPY_COLUMNS, target: "events.events" }, text, opts)
        : { stored: 0, deadLettered: 0 };
      await insertJournalRanges(client, this.ctx.store.table("journal_commits"), ranges);
      return outcome;
    });
  }

  /** The ranges [first, end) of journal `id` stored at or past offset `from`, in order (a replay skips them). */
  storedRanges(id: string, from: number): Promise<[number, number][]> {
    return storedJournalRanges(this.ctx.store, this.ctx.store.table("journal_commits"), id, from);
  }

  /** Forgets the ranges of journal `id` wholly below `below` (its checkpoint file holds that much). */
  pruneRanges(id: string, below: number): Promise<void> {
    return pruneJournalRanges(this.ctx.store, this.ctx.store.table("journal_commits"), id, below);
  }

  /** The WHERE clause of a filter, its parameters appended to `params`. */
  private where(f: EventFilter, params: unknown[]): string[] {
    const p = (v: unknown) => `$${params.push(v)}`;
    const w: string[] = [];
    if (f.start !== null) w.push(`e.received_at >= ${p(f.start)}::timestamptz`);
    if (f.end !== null) w.push(`e.received_at < ${p(f.end)}::timestamptz`);
    if (f.kinds) w.push(`e.kind = ANY (${p(f.kinds)}::text[])`);
    if (f.nodeId !== null) w.push(`e.node_id = ${p(f.nodeId)}::uuid`);
    if (f.matched !== null) w.push(f.matched ? "e.rule_id IS NOT NULL" : "e.rule_id IS NULL");
    if (f.actions) w.push(`e.action = ANY (${p(f.actions)}::text[])`);
    if (f.severities) w.push(`e.severity = ANY (${p(f.severities)}::int2[])`);
    if (f.scopeFolders) w.push(`e.folder_path && ${p(f.scopeFolders)}::uuid[]`);
    if (f.q) {
      // Anywhere in the message, host, app, msgid, trap OID or raw text.
      const hay = "concat_ws(' ', e.message, e.host, e.app, e.msgid, e.trap_oid, e.raw)";
      w.push(f.q.regex ? `${hay} ~* ${p(f.q.text)}` : `strpos(lower(${hay}), lower(${p(f.q.text)})) > 0`);
    }
    if (f.msg) {
      const m = f.msg.regex ? `e.message ~* ${p(f.msg.text)}` : `strpos(lower(e.message), lower(${p(f.msg.text)})) > 0`;
      w.push(f.msg.not ? `NOT (${m})` : m);
    }
    if (f.src) {
      const s = f.src.cidr
        ? `coalesce(e.source_ip <<= ${p(f.src.text)}::inet, false)`
        : `coalesce(strpos(host(e.source_ip), ${p(f.src.text)}) > 0 OR e.node_id IN (SELECT d.id FROM ${NODE_DIRECTORY_VIEW} d WHERE strpos(lower(d.name), lower($${params.length})) > 0), false)`;
      w.push(f.src.not ? `NOT ${s}` : s);
    }
    return w;
  }

  /**
   * Runs a read with a time limit (the store's timed pool: one statement, no transaction around it); over the limit it
   * answers 503 query_timeout. The list and
   * statistics routes read through `ctx.store.read` (a read replica when configured: events arrive asynchronously
   * anyway, so a few seconds of staleness is within what a caller can observe).
   */
  private async read<R extends object>(sql: string, params: unknown[]): Promise<R[]> {
    try {
      return (await this.ctx.store.read.timedQuery<R & Record<string, unknown>>(READ_TIMEOUT_MS, sql, params)).rows;
    } catch (err) {
      if (isPgError(err, PG_ERROR.queryCanceled))
        throw new ApiError(503, "query_timeout", `The query took longer than ${READ_TIMEOUT}: narrow the time range or the filters.`);
      throw err;
    }
  }

  /** One page, newest first, with the attributed node's name; `before` = the last row of the previous page (received_at text, id). */
  page(f: EventFilter, before: readonly [string, string] | null, limit: number): Promise<EventView[]> {
    const params: unknown[] = [];
    const w = this.where(f, params);
    if (before) w.push(`(e.received_at, e.id) < ($${params.push(before[0])}::timestamptz, $${params.push(before[1])}::uuid)`);
    return this.read<EventView>(
      `SELECT ${VIEW_COLUMNS}, (SELECT d.name FROM ${NODE_DIRECTORY_VIEW} d WHERE d.id = e.node_id) AS node_name
         FROM ${this.t} e ${w.length ? `WHERE ${w.join(" AND ")}` : ""}
        ORDER BY e.received_at DESC, e.id DESC LIMIT $${params.push(limit + 1)}`,
      params,
    );
  }

  /** Counts per time bucket (oldest first, empty buckets left out); `byKind` adds the split. */
  async timeBuckets(f: EventFilter, bucketSecs: number, byKind: boolean): Promise<TimeBucket[]> {
    const params: unknown[] = [];
    const w = this.where(f, params);
    const bucket = `(floor(extract(epoch FROM e.received_at) / $${params.push(bucketSecs)}) * $${params.length} * 1000)::float8`;
    const rows = await this.read<{ ts: number; kind: string | null; count: string }>(
      `SELECT ${bucket} AS ts, ${byKind ? "e.kind" : "NULL::text"} AS kind, count(*) AS count FROM ${this.t} e
        ${w.length ? `WHERE ${w.join(" AND ")}` : ""} GROUP BY 1, 2 ORDER BY 1`,
      params,
    );
    const out: TimeBucket[] = [];
    for (const r of rows) {
      let b = out.at(-1);
      if (!b || b.ts_unix_ms !== Number(r.ts)) out.push((b = { ts_unix_ms: Number(r.ts), count: 0, by_kind: byKind ? {} : null }));
      b.count += Number(r.count);
      if (b.by_kind && r.kind) b.by_kind[r.kind] = Number(r.count);
    }
    return out;
  }

  /** Count-ordered buckets of one dimension (ties by key). */
  async countBuckets(f: EventFilter, by: "kind" | "action" | "trap" | "source", limit: number): Promise<CountBucket[]> {
    const params: unknown[] = [];
    const w = this.where(f, params);
    if (by === "trap") w.push("e.trap_oid IS NOT NULL");
    const key = by === "kind" ? "e.kind" : by === "action" ? "e.action" : by === "trap" ? "e.trap_oid" : "coalesce(d.name, host(e.source_ip), e.listener)";
    const join = by === "source" ? `LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = e.node_id` : "";
    const node = by === "source" ? "d.id" : "NULL::uuid";
    const rows = await this.read<{ key: string; node_id: string | null; count: string }>(
      `SELECT ${key} AS key, ${node} AS node_id, count(*) AS count FROM ${this.t} e ${join}
        ${w.length ? `WHERE ${w.join(" AND ")}` : ""} GROUP BY 1, 2 ORDER BY 3 DESC, 1 LIMIT $${params.push(limit)}`,
      params,
    );
    return rows.map((r) => ({ key: r.key, node_id: r.node_id, count: Number(r.count) }));
  }

  /**
   * The flow records the flows plugin counted (its published rollup views), under the filter's range, node, source
   * and folder scope: 0 when the flows plugin is not installed. Ranges up to two days read the minute rollups, longer
   * ones the hour rollups (kept longer), from the start's hour.
   */
  async flowCount(f: EventFilter): Promise<number> {
    const q = await this.flowQuery(f);
    if (!q) return 0;
    const rows = await this.read<{ n: string | null }>(`SELECT sum(r.flows)::text AS n FROM ${q.from}`, q.params);
    return Number(rows[0]?.n ?? 0);
  }

  /** The flow records per time bucket (oldest first, empty ones left out); a rollup counts in its own minute or hour. */
  async flowTimeBuckets(f: EventFilter, bucketSecs: number): Promise<{ ts_unix_ms: number; count: number }[]> {
    const q = await this.flowQuery(f);
    if (!q) return [];
    const bucket = `(floor(extract(epoch FROM r.at) / $${q.params.push(bucketSecs)}) * $${q.params.length} * 1000)::float8`;
    const rows = await this.read<{ ts: number; count: string }>(
      `SELECT ${bucket} AS ts, sum(r.flows)::text AS count FROM ${q.from} GROUP BY 1 ORDER BY 1`,
      q.params,
    );
    return rows.map((r) => ({ ts_unix_ms: Number(r.ts), count: Number(r.count) }));
  }

  /** `<view> r WHERE …` of the flow rollups under a filter, or null when the flows plugin's views are not there. */
  private async flowQuery(f: EventFilter): Promise<{ from: string; params: unknown[] } | null> {
    if (f.start === null || f.end === null) return null;
    const long = Date.parse(f.end) - Date.parse(f.start) > FLOW_MINUTES_UP_TO_MS;
    const view = long ? REPORT_FLOWS_1H_VIEW : REPORT_FLOWS_1M_VIEW;
    const [exists] = (await this.ctx.store.read.query<{ ok: boolean }>("SELECT to_regclass($1) IS NOT NULL AS ok", [view])).rows;
    if (!exists?.ok) return null;
    const params: unknown[] = [];
    const p = (v: unknown) => `$${params.push(v)}`;
    const w = [long ? `r.at >= date_trunc('hour', ${p(f.start)}::timestamptz)` : `r.at >= ${p(f.start)}::timestamptz`, `r.at < ${p(f.end)}::timestamptz`];
    if (f.nodeId !== null) w.push(`r.node_id = ${p(f.nodeId)}::uuid`);
    if (f.scopeFolders) w.push(`r.folder_path && ${p(f.scopeFolders)}::uuid[]`);
    if (f.src) {
      // The exporter's address or CIDR, or its attributed node's name, as for an event's sender.
      const s = f.src.cidr
        ? `r.exporter <<= ${p(f.src.text)}::inet`
        : `coalesce(strpos(host(r.exporter), ${p(f.src.text)}) > 0 OR r.node_id IN (SELECT d.id FROM ${NODE_DIRECTORY_VIEW} d WHERE strpos(lower(d.name), lower($${params.length})) > 0), false)`;
      w.push(f.src.not ? `NOT ${s}` : s);
    }
    return { from: `${view} r WHERE ${w.join(" AND ")}`, params };
  }
}
