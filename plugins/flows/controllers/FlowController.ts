import type { IncomingMessage } from "node:http";
import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, QueryParams } from "@tsed/platform-params";
import { Consumes, Description, Enum, Get, In, Post, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, QueryDoc, ScopeUnsupported, CallerScope, type QueryParameterDoc, type Scope } from "../../../core/index.js";
import {
  AsnImport,
  AsnImportResult,
  AsnMmdbImportResult,
  FlowConversation,
  FlowExporter,
  ForwardedDatagrams,
  FlowForwardedResult,
  TopAs,
} from "../models/FlowModels.js";
import { readBinaryBody } from "../lib/upload.js";
import { FlowCollector } from "../services/FlowCollector.js";
import { FlowQueryService } from "../services/FlowQueryService.js";

const QUERY_DOC =
  "Query (all optional): from, to (Unix seconds; to defaults to now, from to one hour before to), limit (clamped to 1-1000, default 100), proto (IP protocol numbers), port (destination ports), peer (addresses, source or destination), asn (AS numbers, source or destination; 0 = unknown), exporter (exporter addresses: only the flows they sent), each comma-separated with at most 8 values; dir (src or dst, default dst). A value that does not parse is refused.";

const list = (what: string) => `${what}, comma-separated, at most 8 values`;
/** The query parameters of conversations and top AS (FlowQueryService parses and checks them). */
const FLOW_QUERY: QueryParameterDoc[] = [
  { name: "from", description: "Start, Unix seconds (default: one hour before to)", schema: { type: "integer", minimum: 0 } },
  { name: "to", description: "End, Unix seconds (default: now)", schema: { type: "integer", minimum: 0 } },
  { name: "limit", description: "Rows, clamped to 1-1000 (default 100)", schema: { type: "integer" } },
  { name: "proto", description: list("IP protocol numbers") },
  { name: "port", description: list("Destination ports") },
  { name: "peer", description: list("Addresses, source or destination") },
  { name: "asn", description: list("AS numbers, source or destination; 0 = unknown") },
  { name: "exporter", description: list("Exporter addresses (GET /flow/exporters): only the flows they sent") },
  { name: "dir", description: "Side ranked: src or dst (default dst)", schema: { type: "string", enum: ["src", "dst"] } },
];

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
  @QueryDoc(...FLOW_QUERY)
  @(Returns(200, Array).Of(FlowConversation))
  @(Returns(400, ErrorEnvelope).Description("validation_failed: a value that does not parse, more than 8 values in a filter, from after to"))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled: flow monitoring is not enabled (no flow store)"))
  conversations(@QueryParams() q: Record<string, string>, @CallerScope() scope: Scope): Promise<FlowConversation[]> {
    return this.flows.conversations(firstValues(q), scope);
  }

  @Get("/top-as")
  @Permission("read")
  @Summary("Autonomous systems ranked by traffic, on the side dir names (dst by default)")
  @Description(QUERY_DOC)
  @QueryDoc(...FLOW_QUERY)
  @(Returns(200, Array).Of(TopAs))
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled"))
  topAs(@QueryParams() q: Record<string, string>, @CallerScope() scope: Scope): Promise<TopAs[]> {
    return this.flows.topAs(firstValues(q), scope);
  }

  @Get("/exporters")
  @Permission("read")
  @Summary("Exporters seen: node, version, counters, records per second, sampling and templates")
  @(Returns(200, Array).Of(FlowExporter))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled"))
  exporters(@CallerScope() scope: Scope): Promise<FlowExporter[]> {
    return this.flows.exporters(scope);
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

  @Post("/asn/mmdb")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Load the address-to-AS table from an MMDB file (GeoLite2-ASN, ipinfo, iptoasn-derived) sent as the body; replaces it unless replace=false")
  @Description(
    "The body is the .mmdb file itself (Content-Type: application/octet-stream, uncompressed, at most pluginConfig.flows.asnUploadMaxMiB, 128 MiB by default). " +
      "Every network whose record has an AS number (autonomous_system_number, asn or as_number; 'AS13335' or 13335) becomes a prefix, named by " +
      "autonomous_system_organization, as_name, name, as_description, organization (or the domain). IPv4 networks of an IPv6 tree are stored as IPv4 prefixes; " +
      "the aliases of the IPv4 space (::ffff:0:0/96, 2002::/16) are not loaded twice. The file is read and written in one transaction: a fault leaves the table as it was.",
  )
  @Consumes("application/octet-stream")
  @(In("body").Required(true).Schema({ type: "string", format: "binary" }).Description("the .mmdb file"))
  @Returns(200, AsnMmdbImportResult)
  @(Returns(400, ErrorEnvelope).Description(
    "invalid_asn_table: not an MMDB file, a truncated or damaged one, records that are no maps, an AS number that is none, no AS number in any record, an empty body; validation_failed: replace is not true or false",
  ))
  @(Returns(413, ErrorEnvelope).Description("payload_too_large: the file is larger than pluginConfig.flows.asnUploadMaxMiB"))
  @(Returns(415, ErrorEnvelope).Description("unsupported_media_type: the body is not application/octet-stream; unsupported_encoding: a Content-Encoding"))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled"))
  async importAsnMmdb(
    @Context() ctx: PlatformContext,
    @QueryParams("replace") @Enum("true", "false") @Description("true (default): the table is replaced; false: networks are added or updated") replace?: string,
  ): Promise<AsnMmdbImportResult> {
    this.flows.ensureEnabled();
    const file = await readBinaryBody(ctx.request.raw as IncomingMessage, this.flows.asnUploadMaxBytes);
    return this.flows.importAsnMmdb(file, replace !== "false");
  }

  @Post("/forwarded")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Export datagrams a remote poller's flow listener received (the poller's token); fire-and-forget, never buffered")
  @Returns(202, FlowForwardedResult)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(503, ErrorEnvelope).Description("flows_disabled"))
  forwarded(@Body() body: ForwardedDatagrams, @Context() ctx: PlatformContext): FlowForwardedResult {
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
