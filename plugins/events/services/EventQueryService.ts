import { Inject, Injectable } from "@tsed/di";
import {
  badRequest,
  decodeCursor,
  isPgError,
  isRfc3339,
  isUuid,
  MAX_TIMESTAMP_MS,
  page,
  parseCidr,
  parseRfc3339,
  PG_ERROR,
  type Scope,
  scopeFolders,
} from "../../../core/index.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import { ACTIONS, GROUP_BY, type CountBucket, type EventView, type TimeBucket } from "../models/EventModels.js";
import { EventRepository, type EventFilter } from "../repositories/EventRepository.js";
import { EVENT_KINDS } from "../lib/types.js";
import { TrapNameService } from "./TrapNameService.js";

/** The spec's passive streams a `kind` may name: the events plugin's own two, and flow (counted from the flows plugin). */
const STAT_KINDS = [...EVENT_KINDS, "flow"] as const;

/** The query of GET /events and GET /events/stats as received (strings; checked here). */
export interface EventQuery {
  start?: string;
  end?: string;
  kind?: string;
  node_id?: string;
  matched?: string;
  action?: string;
  severity?: string;
  q?: string;
  regex?: string;
  msg?: string;
  msg_regex?: string;
  msg_not?: string;
  src?: string;
  src_not?: string;
}

export interface StatsQuery extends EventQuery {
  group_by?: string;
  limit?: string;
  bucket_secs?: string;
  split?: string;
}

const DAY_SECS = 86_400;
/** Stats over no range look at the last day. */
const DEFAULT_RANGE_MS = DAY_SECS * 1000;
/** Most time buckets one answer carries. */
export const MAX_BUCKETS = 10_000;
const MAX_TEXT = 1024;

const invalid = (message: string) => badRequest("validation_failed", message);

/** A time bound: RFC 3339 (a real calendar date), or Unix milliseconds up to the end of year 9999. */
function parseBound(name: string, v: string | undefined): number | null {
  if (v === undefined || v === "") return null;
  if (/^\d{1,15}$/.test(v)) {
    const ms = Number(v);
    if (ms > MAX_TIMESTAMP_MS) throw invalid(`${name} is past the year 9999.`);
    return ms;
  }
  const t = parseRfc3339(v);
  if (!t) throw invalid(`${name} must be an RFC 3339 time (a real date, for example 2026-11-24T10:00:00Z) or Unix milliseconds.`);
  return t.ms;
}

function parseBool(name: string, v: string | undefined): boolean | null {
  if (v === undefined || v === "") return null;
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  throw invalid(`${name} must be true or false.`);
}

/** A comma-separated list (empty = all); every item must be in `allowed`. */
function parseList<T extends string>(name: string, v: string | undefined, allowed: readonly T[]): T[] | null {
  if (v === undefined || v.trim() === "") return null;
  const items = [...new Set(v.split(",").map((s) => s.trim()))];
  const bad = items.filter((s) => !(allowed as readonly string[]).includes(s));
  if (bad.length) throw invalid(`${name}: unknown value ${JSON.stringify(bad[0].slice(0, 40))} (one of ${allowed.join(", ")}).`);
  return items as T[];
}

function parseInt(name: string, v: string | undefined, min: number, max: number, fallback: number): number {
  if (v === undefined || v === "") return fallback;
  if (!/^\d{1,12}$/.test(v) || Number(v) < min || Number(v) > max) throw invalid(`${name} must be an integer from ${min} to ${max}.`);
  return Number(v);
}

function text(name: string, v: string | undefined): string | null {
  if (v === undefined || v === "") return null;
  if (v.length > MAX_TEXT) throw invalid(`${name} is longer than ${MAX_TEXT} characters.`);
  return v;
}

/** The event list and the stats (folder scope applies: a scoped caller sees the events of nodes beneath its folders). */
@Injectable()
export class EventQueryService {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  @Inject(EventRepository)
  private repo: EventRepository;

  @Inject(TrapNameService)
  private trapNames: TrapNameService;

  /** Checks the common conditions (400 validation_failed / invalid_regex naming the parameter); `defaultRange` fills a missing start. */
  async filter(q: EventQuery, defaultRange: boolean, scope: Scope): Promise<EventFilter> {
    let end = parseBound("end", q.end);
    let start = parseBound("start", q.start);
    if (defaultRange) {
      end ??= Date.now();
      start ??= end - DEFAULT_RANGE_MS;
    }
    if (start !== null && end !== null && start > end) throw invalid("start is after end.");
    if (q.node_id !== undefined && q.node_id !== "" && !isUuid(q.node_id)) throw invalid("node_id must be a uuid.");
    const severities = parseList("severity", q.severity, ["0", "1", "2", "3", "4", "5", "6", "7"]);
    const qText = text("q", q.q);
    const msgText = text("msg", q.msg);
    const srcText = text("src", q.src);
    const f: EventFilter = {
      start: start === null ? null : new Date(start).toISOString(),
      end: end === null ? null : new Date(end).toISOString(),
      kinds: parseList("kind", q.kind, STAT_KINDS),
      nodeId: q.node_id ? q.node_id.toLowerCase() : null,
      matched: parseBool("matched", q.matched),
      actions: parseList("action", q.action, ACTIONS),
      severities: severities?.map(Number) ?? null,
      q: qText === null ? null : { text: qText, regex: parseBool("regex", q.regex) ?? false },
      msg: msgText === null ? null : { text: msgText, regex: parseBool("msg_regex", q.msg_regex) ?? false, not: parseBool("msg_not", q.msg_not) ?? false },
      src:
        srcText === null
          ? null
          : { text: parseCidr(srcText)?.text ?? srcText, cidr: parseCidr(srcText) !== null, not: parseBool("src_not", q.src_not) ?? false },
      scopeFolders: scopeFolders(scope),
    };
    if (f.q?.regex) await this.checkRegex("q", f.q.text);
    if (f.msg?.regex) await this.checkRegex("msg", f.msg.text);
    return f;
  }

  async list(q: EventQuery, scope: Scope, limit: number, cursor?: string): Promise<{ rows: EventView[]; next: string | null }> {
    const f = await this.filter(q, false, scope);
    const before = cursor ? (decodeCursor(cursor, 2, ([at, id]) => isRfc3339(at) && isUuid(id)) as [string, string]) : null;
    const [rows, nameOf] = await Promise.all([this.repo.page(f, before, limit), this.trapNames.resolver()]);
    for (const r of rows) r.trap_name = r.trap_oid === null ? null : nameOf(r.trap_oid);
    return page(rows, limit, (r) => [r.received_at, r.id]);
  }

  async stats(q: StatsQuery, scope: Scope): Promise<TimeBucket[] | CountBucket[]> {
    const groupBy = q.group_by === undefined || q.group_by === "" ? "kind" : q.group_by;
    if (!(GROUP_BY as readonly string[]).includes(groupBy)) throw invalid(`group_by must be one of ${GROUP_BY.join(", ")}.`);
    if (q.split !== undefined && q.split !== "" && q.split !== "kind") throw invalid("split must be kind (or absent).");
    const f = await this.filter(q, true, scope);
    if (groupBy === "time") {
      const rangeSecs = Math.max(1, Math.ceil((Date.parse(f.end!) - Date.parse(f.start!)) / 1000));
      const fallback = Math.min(DAY_SECS * 30, Math.max(60, Math.ceil(rangeSecs / 200 / 60) * 60));
      const bucket = parseInt("bucket_secs", q.bucket_secs, 1, DAY_SECS * 30, fallback);
      if (rangeSecs / bucket > MAX_BUCKETS) throw invalid(`bucket_secs too small: the range would need more than ${MAX_BUCKETS} buckets.`);
      const split = q.split === "kind";
      const [events, flows] = await Promise.all([this.repo.timeBuckets(f, bucket, split), this.countsFlows(f) ? this.repo.flowTimeBuckets(f, bucket) : []]);
      return mergeTimeBuckets(events, flows, split);
    }
    const limit = parseInt("limit", q.limit, 1, 1000, 10);
    if (groupBy !== "kind" || !this.countsFlows(f)) return this.repo.countBuckets(f, groupBy as "kind" | "action" | "trap" | "source", limit);
    const [events, flows] = await Promise.all([this.repo.countBuckets(f, "kind", limit), this.repo.flowCount(f)]);
    const all = flows > 0 ? [...events, { key: "flow", node_id: null, count: flows }] : events;
    return all.sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1)).slice(0, limit);
  }

  /**
   * Whether flow records count in these stats: when `kind` names flow (or no kind), and no condition only events have
   * (matched, action, severity, q, msg) narrows them out. Grouped by kind and by time only: flows have no rule
   * outcome, trap OID or syslog source to group by.
   */
  private countsFlows(f: EventFilter): boolean {
    if (f.kinds !== null && !f.kinds.includes("flow")) return false;
    return f.matched === null && f.actions === null && f.severities === null && f.q === null && f.msg === null;
  }

  /** A regex the store cannot compile is the caller's mistake: 400 invalid_regex. */
  private async checkRegex(name: string, pattern: string): Promise<void> {
    try {
      await this.ctx.store.query("SELECT '' ~* $1", [pattern]);
    } catch (err) {
      if (isPgError(err, PG_ERROR.invalidRegularExpression)) throw badRequest("invalid_regex", `${name} is not a regular expression that compiles.`);
      throw err;
    }
  }
}

/** The events' time buckets with the flow records' added (by_kind.flow when split). */
function mergeTimeBuckets(events: TimeBucket[], flows: { ts_unix_ms: number; count: number }[], split: boolean): TimeBucket[] {
  if (!flows.length) return events;
  const byTs = new Map(events.map((b) => [b.ts_unix_ms, b]));
  for (const fb of flows) {
    let b = byTs.get(fb.ts_unix_ms);
    if (!b) byTs.set(fb.ts_unix_ms, (b = { ts_unix_ms: fb.ts_unix_ms, count: 0, by_kind: split ? {} : null }));
    b.count += fb.count;
    if (b.by_kind) b.by_kind.flow = fb.count;
  }
  return [...byTs.values()].sort((a, b) => a.ts_unix_ms - b.ts_unix_ms);
}
