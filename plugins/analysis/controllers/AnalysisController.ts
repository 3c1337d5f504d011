import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams, QueryParams } from "@tsed/platform-params";
import { Description, Format, Get, Integer, Maximum, MaxLength, Minimum, Post, Returns, Summary } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, Permission, SkeletonRead, WithoutStore, CallerScope, type Scope } from "../../../core/index.js";
import { FindingView, JobCreate, JobView, ToolView } from "../models/AnalysisModels.js";
import { AnalysisService, type FindingQuery } from "../services/AnalysisService.js";
import { ToolRegistry } from "../services/ToolRegistry.js";

const KEYSET =
  "Newest first by (at, id). Next page: before = the last row's at exactly as received (microseconds) and before_id = its id; before alone returns rows strictly before that instant. Folder-scoped callers see the findings filed beneath their folders.";
const FINDING_400 = "validation_failed: a bad cursor (before not RFC 3339, before_id not a uuid or without before), limit, tool or severity token";

/** Analysis tools, on-demand runs and their findings. Running needs ManageConfig (operators and admins); reading needs read. */
@Controller("/analysis")
export class AnalysisController {
  @Inject(AnalysisService)
  private analysis: AnalysisService;

  @Inject(ToolRegistry)
  private tools: ToolRegistry;

  @Get("/tools")
  @Permission("read")
  @WithoutStore()
  @Summary("The analysis tools, each with the JSON schema of its params (defaults included)")
  @(Returns(200, Array).Of(ToolView))
  listTools(): ToolView[] {
    return this.tools.list().map((t) => ({ name: t.name, title: t.title, description: t.description, params_schema: t.paramsSchema }));
  }

  @Post("/jobs")
  @Permission("ManageConfig")
  @Summary("Run a tool now over all, a folder (and beneath) or a node; answers 202 with the job id")
  @Description(
    "A folder-scoped caller runs only within its folders: scope all covers its folders, and a folder or node outside them is 404. params are checked against the tool's schema (GET /analysis/tools).",
  )
  @Returns(202, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_tool, invalid_params"))
  @(Returns(404, ErrorEnvelope).Description("not_found: scope_id names no folder or node the caller may see"))
  @(Returns(413, ErrorEnvelope).Description("document_too_large: params over limits.jsonDocumentMaxBytes"))
  async run(@Body() body: JobCreate, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<CreatedId> {
    const id = await this.analysis.submit(body, scope);
    ctx.response.status(202);
    return { id };
  }

  @Get("/jobs/:id")
  @Permission("read")
  @Summary("A run: status (queued, running, succeeded, failed), progress and finding counts")
  @Returns(200, JobView)
  @(Returns(404, ErrorEnvelope).Description("not_found (also outside the caller's scope)"))
  job(@PathParams("id") @MaxLength(64) id: string, @CallerScope() scope: Scope): Promise<JobView> {
    return this.analysis.job(id, scope);
  }

  @Get("/jobs/:id/findings")
  @Permission("read")
  @Summary("The findings of one run")
  @Description(KEYSET)
  @(Returns(200, Array).Of(FindingView))
  @(Returns(400, ErrorEnvelope).Description(FINDING_400))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  jobFindings(
    @CallerScope() scope: Scope,
    @PathParams("id") @MaxLength(64) id: string,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(1000) @Description("1 to 1000, default 100") limit: number = 100,
    @QueryParams("before") @MaxLength(64) @Description("keyset cursor: the last row's at (RFC 3339)") before?: string,
    @QueryParams("before_id") @Format("uuid") @Description("keyset cursor second half: the last row's id; send with before") beforeId?: string,
    @QueryParams("tool") @MaxLength(500) @Description("comma-separated tool names") tool?: string,
    @QueryParams("severity") @MaxLength(100) @Description("comma-separated info, warning, critical") severity?: string,
  ): Promise<FindingView[]> {
    return this.analysis.jobFindings(id, { limit, before, before_id: beforeId, tool, severity }, scope);
  }

  @Get("/findings")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Saved findings across all runs, newest first; [] in skeleton mode")
  @Description(KEYSET)
  @(Returns(200, Array).Of(FindingView))
  @(Returns(400, ErrorEnvelope).Description(FINDING_400))
  @(Returns(404, ErrorEnvelope).Description("not_found: node_id or group_id outside the caller's scope"))
  findings(
    @CallerScope() scope: Scope,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(1000) @Description("1 to 1000, default 100") limit: number = 100,
    @QueryParams("before") @MaxLength(64) @Description("keyset cursor: the last row's at (RFC 3339)") before?: string,
    @QueryParams("before_id")
    @Format("uuid")
    @Description("keyset cursor second half: the last row's id; send with before; omitted = strictly before that instant")
    beforeId?: string,
    @QueryParams("tool") @MaxLength(500) @Description("comma-separated tool names; an unknown one is 400") tool?: string,
    @QueryParams("severity") @MaxLength(100) @Description("comma-separated info, warning, critical; empty = all") severity?: string,
    @QueryParams("node_id") @Format("uuid") @Description("findings about that node (its interfaces included)") nodeId?: string,
    @QueryParams("group_id") @Format("uuid") @Description("findings filed in that folder or anywhere beneath it") groupId?: string,
  ): Promise<FindingView[]> {
    const query: FindingQuery = { limit, before, before_id: beforeId, tool, severity, node_id: nodeId, group_id: groupId };
    return this.analysis.findings(query, scope);
  }
}
