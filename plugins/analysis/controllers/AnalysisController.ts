import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Description, Get, MaxLength, Post, Returns, Summary } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, Permission, SkeletonRead, WithoutStore, CallerScope, Query, type Scope } from "../../../core/index.js";
import { FindingQuery, FindingView, JobCreate, JobFindingQuery, JobView, ToolView } from "../models/AnalysisModels.js";
import { AnalysisService } from "../services/AnalysisService.js";
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
  jobFindings(@CallerScope() scope: Scope, @PathParams("id") @MaxLength(64) id: string, @Query() query: JobFindingQuery): Promise<FindingView[]> {
    return this.analysis.jobFindings(id, query, scope);
  }

  @Get("/findings")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Saved findings across all runs, newest first; [] in skeleton mode")
  @Description(KEYSET)
  @(Returns(200, Array).Of(FindingView))
  @(Returns(400, ErrorEnvelope).Description(FINDING_400))
  @(Returns(404, ErrorEnvelope).Description("not_found: node_id or group_id outside the caller's scope"))
  findings(@CallerScope() scope: Scope, @Query() query: FindingQuery): Promise<FindingView[]> {
    return this.analysis.findings(query, scope);
  }
}
