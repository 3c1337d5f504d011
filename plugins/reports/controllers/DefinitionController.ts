import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { BodyParams, Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import {
  Body,
  CreatedId,
  ErrorEnvelope,
  MutationOk,
  Permission,
  ReturnsPage,
  SkeletonRead,
  sendPage,
  CallerScope,
  type Scope,
  PageQuery,
  Query,
} from "../../../core/index.js";
import { DefinitionBody, DefinitionView, RunAccepted, RunRequest, SectionKindView } from "../models/ReportModels.js";
import { DefinitionService } from "../services/DefinitionService.js";
import { RunService } from "../services/RunService.js";
import { SectionRegistry } from "../services/SectionRegistry.js";

const BODY_CODES = "validation_failed (also a blank name), invalid_spec, too_many_sections, unknown_section_kind, invalid_section_params";

/** Report definitions (global configuration: no folder data of their own; what a run shows follows the caller's scope). */
@Controller("/reports")
export class DefinitionController {
  @Inject(DefinitionService)
  private definitions: DefinitionService;

  @Inject(RunService)
  private runs: RunService;

  @Inject(SectionRegistry)
  private registry: SectionRegistry;

  @Get("/section-kinds")
  @Permission("read")
  @SkeletonRead([])
  @Summary("The section kinds this build can render, with the JSON schema of their params")
  @(Returns(200, Array).Of(SectionKindView))
  kinds(): SectionKindView[] {
    return this.registry
      .list()
      .map((k) => ({ kind: k.kind, title: k.title, description: k.description ?? null, params_schema: k.paramsSchema as Record<string, unknown> }));
  }

  @Post("/definitions")
  @Permission("ManageConfig")
  @Summary("Create a report definition")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(BODY_CODES))
  @(Returns(413, ErrorEnvelope).Description("document_too_large: the spec is above limits.jsonDocumentMaxBytes"))
  async create(@Body() body: DefinitionBody): Promise<CreatedId> {
    const id = await this.definitions.create(body);
    return { id };
  }

  @Get("/definitions")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Report definitions, oldest first (keyset pagination)")
  @ReturnsPage(DefinitionView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<DefinitionView[]> {
    return sendPage(ctx, await this.definitions.list(page.limit, page.cursor));
  }

  @Get("/definitions/:id")
  @Permission("read")
  @Summary("One report definition")
  @Returns(200, DefinitionView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  get(@PathParams("id") @Format("uuid") id: string): Promise<DefinitionView> {
    return this.definitions.get(id);
  }

  @Put("/definitions/:id")
  @Permission("ManageConfig")
  @Summary("Replace a report definition (name, description, spec)")
  @Returns(200, MutationOk)
  @(Returns(400, ErrorEnvelope).Description(BODY_CODES))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  @(Returns(413, ErrorEnvelope).Description("document_too_large: the spec is above limits.jsonDocumentMaxBytes"))
  async replace(@PathParams("id") @Format("uuid") id: string, @Body() body: DefinitionBody): Promise<MutationOk> {
    await this.definitions.replace(id, body);
    return { ok: true };
  }

  @Delete("/definitions/:id")
  @Permission("ManageConfig")
  @Summary("Delete a report definition and its schedules (its runs stay, without the link)")
  @Returns(204)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.definitions.remove(id);
    ctx.response.status(204);
  }

  @Post("/definitions/:id/run")
  @Permission("ManageConfig")
  @Summary("Render the definition now, for the caller's folder scope: 202 with the run id; progress on the reports.runs channel")
  @Returns(202, RunAccepted)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async run(
    @PathParams("id") @Format("uuid") id: string,
    @BodyParams() body: RunRequest,
    @Context() ctx: PlatformContext,
    @CallerScope() scope: Scope,
  ): Promise<RunAccepted> {
    const runId = await this.runs.request(id, body && Object.keys(body).length ? body : undefined, scope);
    ctx.response.status(202);
    return { id: runId };
  }
}
