import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, QueryParams } from "@tsed/platform-params";
import { Description, Get, Post, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, ScopeUnsupported } from "../../../core/index.js";
import { AsnImport, AsnImportResult, FlowConversation, FlowExporter, ForwardedDatagrams, ForwardedResult, TopAs } from "../models/FlowModels.js";
import { FlowCollector } from "../services/FlowCollector.js";
import { FlowQueryService } from "../services/FlowQueryService.js";

const QUERY_DOC =
  "Query (all optional): from, to (Unix seconds; to defaults to now, from to one hour before to), limit (clamped to 1-1000, default 100), proto (IP protocol numbers), port (destination ports), peer (addresses, source or destination), asn (AS numbers, source or destination; 0 = unknown), each comma-separated with at most 8 values; dir (src or dst, default dst). A value that does not parse is refused.";

/** The spec's flow conversations, and the views beside them: top AS, exporters, the AS table import. */
@Controller("/flow")
export class FlowController {
  @Inject(FlowQueryService)
  private flows: FlowQueryService;

  @Inject(FlowCollector)
  private collector: FlowCollector;

  @Get("/conversations")
  @Permission("read")
  @Summary("Flow conversations (source, destination) ranked by traffic; folder-scoped callers see the flows their nodes exported")
  @Description(QUERY_DOC)
  @(Returns(200, Array).Of(FlowConversation))
  @(Returns(400, ErrorEnvelope).Description("validation_failed: a value that does not parse, more than 8 values in a filter, from after to"))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled: flow monitoring is not enabled (no flow store)"))
  conversations(@QueryParams() q: Record<string, string>): Promise<FlowConversation[]> {
    return this.flows.conversations(firstValues(q));
  }

  @Get("/top-as")
  @Permission("read")
  @Summary("Autonomous systems ranked by traffic, on the side dir names (dst by default)")
  @Description(QUERY_DOC)
  @(Returns(200, Array).Of(TopAs))
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled"))
  topAs(@QueryParams() q: Record<string, string>): Promise<TopAs[]> {
    return this.flows.topAs(firstValues(q));
  }

  @Get("/exporters")
  @Permission("read")
  @Summary("Exporters seen: node, version, counters, records per second, sampling and templates")
  @(Returns(200, Array).Of(FlowExporter))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled"))
  exporters(): Promise<FlowExporter[]> {
    return this.flows.exporters();
  }

  @Post("/asn")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Load the address-to-AS table (prefix, asn, name); replaces it unless replace is false")
  @Returns(200, AsnImportResult)
  @(Returns(400, ErrorEnvelope).Description("validation_failed: a prefix that does not parse, an AS number out of range"))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled"))
  importAsn(@Body() body: AsnImport): Promise<AsnImportResult> {
    return this.flows.importAsn(body);
  }

  @Post("/forwarded")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Export datagrams a remote poller's flow listener received (the poller's token); fire-and-forget, never buffered")
  @Returns(202, ForwardedResult)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled"))
  forwarded(@Body() body: ForwardedDatagrams, @Context() ctx: PlatformContext): ForwardedResult {
    const result = this.collector.forwarded(body);
    ctx.response.status(202);
    return result;
  }
}

/** Query values as strings: a repeated parameter keeps its first value. */
function firstValues(q: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) {
    if (typeof v === "string") out[k] = v;
    else if (Array.isArray(v) && typeof v[0] === "string") out[k] = v[0];
  }
  return out;
}
