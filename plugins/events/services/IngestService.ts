import { Inject, Injectable } from "@tsed/di";
import { badRequest, canonicalIp, isIpAddress, unauthorized } from "../../../core/index.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { Inbound } from "../lib/types.js";
import { forwardedInbound } from "../lib/forwarded.js";
import type { ForwardedBody, EventForwardedResult, IngestBody, IngestResult } from "../models/EventModels.js";
import { EventPipeline } from "./EventPipeline.js";
import { SourceService } from "./SourceService.js";

const MAX_DATA_BYTES = 16 * 1024;

/**
 * The HTTP ingest of an http event source: scripts post events as JSON with the source's own
 * token. Events go through the same pipeline as received syslog (kind `syslog`, transport `http`,
 * source kind `http`), attributed to the source's node, else to the `source_ip` they name.
 */
@Injectable()
export class IngestService {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  @Inject(SourceService)
  private sources: SourceService;

  @Inject(EventPipeline)
  private pipeline: EventPipeline;

  /** Records a remote poller's receivers forwarded: checked one by one (a bad one is dropped, the rest taken). */
  forwarded(body: ForwardedBody): EventForwardedResult {
    const now = Date.now();
    let accepted = 0;
    for (const x of body.events) {
      const m = forwardedInbound(x, body.poller_id, now, body.pool);
      try {
        if (m && this.pipeline.accept(m)) accepted++;
      } catch (err) {
        // A record the checks let through and the pipeline could not take is that record's loss, not the batch's.
        this.ctx.log.warn("events: a forwarded record was dropped", { poller_id: body.poller_id, error: (err as Error).message });
      }
    }
    this.pipeline.persist();
    return { accepted, dropped: body.events.length - accepted };
  }

  async post(authorization: string | undefined, body: IngestBody, peer: string): Promise<IngestResult> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    if (!m) throw unauthorized('An ingest token is required: "Authorization: Bearer <token>".');
    const source = await this.sources.byToken(m[1]);
    if (!source || !source.enabled) throw unauthorized("That is not the ingest token of an enabled http event source.");
    if (body.events.length > this.ctx.config.ingestMaxEvents) {
      throw badRequest("validation_failed", `At most ${this.ctx.config.ingestMaxEvents} events per request.`);
    }
    const now = Date.now();
    const inbound: Inbound[] = body.events.map((e, i) => {
      const data = e.data ? JSON.stringify(e.data) : null;
      if (data && Buffer.byteLength(data) > MAX_DATA_BYTES) throw badRequest("validation_failed", `events[${i}].data is larger than ${MAX_DATA_BYTES} bytes.`);
      if (e.source_ip != null && !isIpAddress(e.source_ip)) throw badRequest("validation_failed", `events[${i}].source_ip is not an IP address.`);
      return {
        kind: "syslog",
        transport: "http",
        listener: `http:${source.id}`,
        source_ip: canonicalIp(e.source_ip ?? peer),
        received_at_ms: now,
        syslog: {
          format: "raw",
          facility: null,
          severity: e.severity ?? null,
          timestamp: null,
          hostname: e.host ?? null,
          app_name: e.app ?? null,
          procid: null,
          msgid: e.msgid ?? null,
          structured_data: [],
          message: e.message,
          cisco: null,
        },
        trap: null,
        raw: null,
        malformed: false,
        extra: e.data ?? null,
      };
    });
    const entry = { id: source.id, kind: "http", node_id: source.node_id, enabled: true };
    let accepted = 0;
    for (const e of inbound) if (this.pipeline.accept(e, entry)) accepted++;
    // On disk before the answer says accepted.
    this.pipeline.persist();
    return { accepted, dropped: inbound.length - accepted };
  }
}
