import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, QueryParams } from "@tsed/platform-params";
import { Description, Get, Integer, Maximum, MaxLength, Minimum, Post, Returns, Summary } from "@tsed/schema";
import {
  FastJson,
  Body,
  ErrorEnvelope,
  Permission,
  ProtocolInput,
  Public,
  ReturnsPage,
  ScopeUnsupported,
  sendPage,
  CallerScope,
  QueryDoc,
  type QueryParameterDoc,
  type Scope,
} from "../../../core/index.js";
import { CountBucket, EventView, ForwardedBody, EventForwardedResult, IngestBody, IngestResult, StatsBucket, TimeBucket } from "../models/EventModels.js";
import { EventQueryService, MAX_BUCKETS, type EventQuery } from "../services/EventQueryService.js";
import { IngestService } from "../services/IngestService.js";

const FILTER_DOC =
  "Filters (all optional): start, end (RFC 3339 or Unix ms; stats default to the last 24 h), kind (comma-separated: syslog, trap, flow; flow records are counted by the stats only, from the flows plugin's minute rollups, and the list holds none), node_id, matched (a rule matched), action (comma-separated: unmatched, counted, fired, cleared, suppressed), severity (comma-separated syslog severities 0-7), q + regex (anywhere in message, host, app, msgid, trap OID, raw), msg + msg_regex + msg_not (the message only), src + src_not (sender address or CIDR, or attributed node name).";

const csv = (what: string) => `${what}, comma-separated`;
/** The filters of the list and the stats (EventQueryService parses and checks them). */
const FILTERS: QueryParameterDoc[] = [
  { name: "start", description: "From, RFC 3339 or Unix ms (stats: default 24 h before end)" },
  { name: "end", description: "Until, RFC 3339 or Unix ms (default now)" },
  { name: "kind", description: csv("syslog, trap, flow (flow: stats only, from the flows plugin's minute rollups)") },
  { name: "node_id", description: "Events attributed to this node", schema: { type: "string", format: "uuid" } },
  { name: "matched", description: "Only events a rule matched (true) or none did (false)", schema: { type: "string", enum: ["true", "false", "1", "0"] } },
  { name: "action", description: csv("unmatched, counted, fired, cleared, suppressed") },
  { name: "severity", description: csv("Syslog severities 0-7") },
  { name: "q", description: "Text anywhere in message, host, app, msgid, trap OID, raw" },
  { name: "regex", description: "true: q is a regular expression", schema: { type: "string", enum: ["true", "false", "1", "0"] } },
  { name: "msg", description: "Text in the message only" },
  { name: "msg_regex", description: "true: msg is a regular expression", schema: { type: "string", enum: ["true", "false", "1", "0"] } },
  { name: "msg_not", description: "true: events whose message does not match msg", schema: { type: "string", enum: ["true", "false", "1", "0"] } },
  { name: "src", description: "Sender address or CIDR, or attributed node name" },
  { name: "src_not", description: "true: events whose sender does not match src", schema: { type: "string", enum: ["true", "false", "1", "0"] } },
];
const STATS: QueryParameterDoc[] = [
  {
    name: "group_by",
    description: "kind (default), action, trap, source, time",
    schema: { type: "string", enum: ["kind", "action", "trap", "source", "time"] },
  },
  { name: "limit", description: "Categorical buckets, 1-1000 (default 10)", schema: { type: "integer", minimum: 1, maximum: 1000 } },
  { name: "bucket_secs", description: "Time bucket width (default: the range in about 200 buckets, at least 60 s)", schema: { type: "integer", minimum: 1 } },
  { name: "split", description: "kind: time buckets carry by_kind", schema: { type: "string", enum: ["kind"] } },
];

/** The event list, the spec's event stats, and the HTTP ingest of event sources. */
@Controller("/events")
export class EventController {
  @Inject(EventQueryService)
  private query: EventQueryService;

  @Inject(IngestService)
  private ingest: IngestService;

  @Get("/")
  @Permission("read")
  @Summary("Events, newest first (keyset pagination); folder-scoped callers see the events of their nodes")
  @Description(FILTER_DOC)
  @QueryDoc(...FILTERS)
  @ReturnsPage(EventView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (a malformed bound, an unknown kind or action, a bad severity), invalid_regex, invalid_cursor"))
  @(Returns(503, ErrorEnvelope).Description("query_timeout: narrow the range"))
  @FastJson()
  async list(
    @CallerScope() scope: Scope,
    @Context() ctx: PlatformContext,
    @QueryParams() q: EventQuery,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(1000) limit: number = 100,
    @QueryParams("cursor") @MaxLength(2048) cursor?: string,
  ): Promise<EventView[]> {
    return sendPage(ctx, await this.query.list(strings(q), scope, limit, cursor));
  }

  @Get("/stats")
  @Permission("read")
  @Summary(
    "Event counts: group_by=time gives buckets {ts_unix_ms, count, by_kind}; kind, action, trap or source give count-ordered buckets {key, node_id, count}",
  )
  @Description(
    `${FILTER_DOC} group_by: kind (default), action, trap, source, time. limit: categorical buckets, 1-1000, default 10. bucket_secs: time bucket width (default: the range in about 200 buckets, at least 60 s; at most ${MAX_BUCKETS} buckets). split: kind (time buckets carry by_kind).`,
  )
  @QueryDoc(...FILTERS, ...STATS)
  @(Returns(200, Array).Of(StatsBucket))
  @(Returns(400, ErrorEnvelope).Description(
    "validation_failed: malformed range bound, unknown kind, group_by outside kind/action/trap/source/time, bad limit, bucket_secs or split; invalid_regex",
  ))
  @(Returns(503, ErrorEnvelope).Description("query_timeout: narrow the range; store_unavailable: no node-name resolution (skeleton mode)"))
  @FastJson()
  stats(
    @QueryParams() q: EventQuery & { group_by?: string; limit?: string; bucket_secs?: string; split?: string },
    @CallerScope() scope: Scope,
  ): Promise<TimeBucket[] | CountBucket[]> {
    return this.query.stats(strings(q), scope);
  }

  @Post("/forwarded")
  @Permission("ManageSystem")
  @ProtocolInput()
  @ScopeUnsupported()
  @Summary("Records a remote poller's syslog and trap receivers forwarded (the poller's token); fire-and-forget, never buffered")
  @Returns(202, EventForwardedResult)
  @(Returns(400, ErrorEnvelope).Description("validation_failed: not a forwarded batch"))
  forwarded(@Body() body: ForwardedBody, @Context() ctx: PlatformContext): EventForwardedResult {
    const result = this.ingest.forwarded(body);
    ctx.response.status(202);
    return result;
  }

  @Post("/ingest")
  @Public()
  @Summary("Post events to an http event source, authenticated with that source's ingest token (Authorization: Bearer)")
  @Returns(202, IngestResult)
  @(Returns(400, ErrorEnvelope).Description(
    "validation_failed: the body, or more events than ingestMaxEvents; invalid_characters: text holding NUL or a lone surrogate",
  ))
  @(Returns(401, ErrorEnvelope).Description("no ingest token, or not one of an enabled http source"))
  async post(@Body() body: IngestBody, @Context() ctx: PlatformContext): Promise<IngestResult> {
    const result = await this.ingest.post(ctx.request.get("authorization"), body, remoteAddress(ctx));
    ctx.response.status(202);
    return result;
  }
}

/** Query values as strings: a repeated parameter (an array) keeps its first value. */
function strings<T extends object>(q: T): T {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) {
    if (typeof v === "string") out[k] = v;
    else if (Array.isArray(v) && typeof v[0] === "string") out[k] = v[0];
  }
  return out as T;
}

function remoteAddress(ctx: PlatformContext): string {
  return ctx.request.raw.socket?.remoteAddress ?? "";
}
