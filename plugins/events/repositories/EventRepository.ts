import { Inject, Injectable } from "@tsed/di";
import { ApiError, isoTimestamp, isPgError, PG_ERROR, plainArrayLiteral, textArrayLiteral, type Queryable } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { REPORT_FLOWS_1H_VIEW, REPORT_FLOWS_1M_VIEW } from "../../flows/contract.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { CountBucket, EventView, TimeBucket } from "../models/EventModels.js";

/** One event as the pipeline writes it. */
export interface EventRow {
  id: string;
  received_at_ms: number;
  kind: string;
  transport: string;
  listener: string;
  source_ip: string | null;
  source_id: string | null;
  node_id: string | null;
  folder_path: readonly string[];
  severity: number | null;
  facility: number | null;
  host: string | null;
  app: string | null;
  msgid: string | null;
  message: string;
  trap_oid: string | null;
  data: Record<string, unknown> | null;
  raw: string | null;
  malformed: boolean;
  action: string;
  rule_id: string | null;
}

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

/**
 * SQL of events.events (daily partitions). Writes are one INSERT over unnest per batch;
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
   * One statement per batch: each column goes as one array literal built here (textArrayLiteral, plainArrayLiteral:
   * node-postgres's own conversion of array parameters cost ~50 µs a row, six times these), the `data` objects as one
   * JSON array (JSON.stringify is native; escaping each one's JSON text inside an array literal cost as much again), zipped
   * back into rows by ROWS FROM (an event without data stays SQL NULL, not a JSON null). PostgreSQL's side costs what the plain unnest did (json_to_recordset over the whole
   * rows cost it twice as much).
   */
  async insert(rows: readonly EventRow[], db: Queryable = this.ctx.store): Promise<void> {
    if (!rows.length) return;
    const text = (get: (r: EventRow) => string | null) => textArrayLiteral(rows, get);
    const plain = (get: (r: EventRow) => number | boolean | null) => plainArrayLiteral(rows, get);
    await db.query(
      `INSERT INTO ${this.t} (id, received_at, kind, transport, listener, source_ip, source_id, node_id, folder_path, severity, facility, host, app, msgid,
              message, trap_oid, data, raw, malformed, action, rule_id)
       SELECT u.id, timestamptz 'epoch' + u.ms * interval '1 millisecond', u.kind, u.transport, u.listener, u.source_ip::inet, u.source_id, u.node_id,
              u.folder_path::uuid[], u.severity, u.facility, u.host, u.app, u.msgid, u.message, u.trap_oid, nullif(u.data::jsonb, 'null'), u.raw, u.malformed, u.action, u.rule_id
         FROM ROWS FROM (unnest($1::uuid[]), unnest($2::float8[]), unnest($3::text[]), unnest($4::text[]), unnest($5::text[]), unnest($6::text[]),
                         unnest($7::uuid[]), unnest($8::uuid[]), unnest($9::text[]), unnest($10::int2[]), unnest($11::int2[]), unnest($12::text[]),
                         unnest($13::text[]), unnest($14::text[]), unnest($15::text[]), unnest($16::text[]), json_array_elements($17::json),
                         unnest($18::text[]), unnest($19::bool[]), unnest($20::text[]), unnest($21::uuid[]))
           AS u(id, ms, kind, transport, listener, source_ip, source_id, node_id, folder_path, severity, facility, host, app, msgid, message, trap_oid,
                data, raw, malformed, action, rule_id)`,
      [
        text((r) => r.id),
        plain((r) => r.received_at_ms),
        text((r) => r.kind),
        text((r) => r.transport),
        text((r) => r.listener),
        text((r) => r.source_ip),
        text((r) => r.source_id),
        text((r) => r.node_id),
        text((r) => `{${r.folder_path.join(",")}}`),
        plain((r) => r.severity),
        plain((r) => r.facility),
        text((r) => r.host),
        text((r) => r.app),
        text((r) => r.msgid),
        text((r) => r.message),
        text((r) => r.trap_oid),
        JSON.stringify(rows.map((r) => r.data)),
        text((r) => r.raw),
        plain((r) => r.malformed),
        text((r) => r.action),
        text((r) => r.rule_id),
      ],
    );
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

  /** Runs a read with a time limit, in its own transaction; over the limit it answers 503 query_timeout. */
  private async read<R extends object>(sql: string, params: unknown[]): Promise<R[]> {
    try {
      return await this.ctx.store.tx(async (db) => {
        await db.query(`SET LOCAL statement_timeout = '${READ_TIMEOUT}'`);
        return (await db.query<R & Record<string, unknown>>(sql, params)).rows;
      });
    } catch (err) {
      if (isPgError(err, PG_ERROR.queryCanceled))
        throw new ApiError(503, "query_timeout", `The query took longer than ${READ_TIMEOUT}: narrow the time range or the filters.`);
      throw err;
    }
  }

  /** One page, newest first; `before` = the last row of the previous page (received_at text, id). */
  page(f: EventFilter, before: readonly [string, string] | null, limit: number): Promise<EventView[]> {
    const params: unknown[] = [];
    const w = this.where(f, params);
    if (before) w.push(`(e.received_at, e.id) < ($${params.push(before[0])}::timestamptz, $${params.push(before[1])}::uuid)`);
    return this.read<EventView>(
      `SELECT ${VIEW_COLUMNS} FROM ${this.t} e ${w.length ? `WHERE ${w.join(" AND ")}` : ""}
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
    const [exists] = (await this.ctx.store.query<{ ok: boolean }>("SELECT to_regclass($1) IS NOT NULL AS ok", [view])).rows;
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
