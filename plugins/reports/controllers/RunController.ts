import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Enum, Format, Get, Returns, Summary } from "@tsed/schema";
import { ErrorEnvelope, Permission, ReturnsPage, SkeletonRead, sendPage, CallerScope, type Scope, Query } from "../../../core/index.js";
import { RunDetailView, RunView, RunListQuery } from "../models/ReportModels.js";
import { FORMATS, RunService, type Format as OutputFormat } from "../services/RunService.js";

/** Report runs. A folder-scoped caller sees only the runs made for folders within its own. */
@Controller("/reports/runs")
export class RunController {
  @Inject(RunService)
  private runs: RunService;

  @Get("/")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Report runs, newest first (keyset pagination); optional definition_id filter")
  @ReturnsPage(RunView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@CallerScope() scope: Scope, @Context() ctx: PlatformContext, @Query() query: RunListQuery): Promise<RunView[]> {
    return sendPage(ctx, await this.runs.list(query.limit, query.cursor, query.definition_id, scope));
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One run: status, range, scope, outputs, deliveries and the rendered sections")
  @Returns(200, RunDetailView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  get(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<RunDetailView> {
    return this.runs.get(id, scope);
  }

  @Get("/:id/:format")
  @Permission("read")
  @Summary("Download a run's HTML (text/html), CSV (text/csv) or PDF (application/pdf)")
  @(Returns(200, String).ContentType("application/pdf"))
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found, run_not_ready"))
  async download(
    @CallerScope() scope: Scope,
    @PathParams("id") @Format("uuid") id: string,
    @PathParams("format") @Enum("html", "csv", "pdf") format: OutputFormat,
    @Context() ctx: PlatformContext,
  ): Promise<Buffer> {
    const content = await this.runs.output(id, format, scope);
    ctx.response.setHeader("Content-Type", FORMATS[format]);
    ctx.response.setHeader("Content-Disposition", `attachment; filename="report-${id}.${format}"`);
    ctx.response.setHeader("X-Content-Type-Options", "nosniff");
    return content;
  }
}
