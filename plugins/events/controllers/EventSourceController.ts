import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Patch, Post, Returns, Summary, Status } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, ReturnsPage, ScopeUnsupported, sendPage, PageQuery, Query } from "../../../core/index.js";
import { CreatedSource, EventSourceBody, EventSourceUpdate, EventSourceView, IngestToken } from "../models/SourceModels.js";
import { SourceService } from "../services/SourceService.js";

/** Event sources: the built-in listener catch-alls, per-node syslog/trap sources, and HTTP ingest sources with their own token. */
@Controller("/event-sources")
export class EventSourceController {
  @Inject(SourceService)
  private sources: SourceService;

  @Post("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Create an event source; an http source's ingest token is answered this once")
  @Status(201, CreatedSource)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (a syslog or trap source without node_id), unknown_reference (node_id)"))
  @(Returns(409, ErrorEnvelope).Description("name_taken, source_exists (the node already has a source of this kind)"))
  async create(@Body() body: EventSourceBody): Promise<CreatedSource> {
    const created = await this.sources.create(body);
    return created;
  }

  @Get("/")
  @Permission("ManageConfig")
  @Summary("Event sources, oldest first (the built-in ones first; keyset pagination); tokens are never answered")
  @ReturnsPage(EventSourceView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<EventSourceView[]> {
    return sendPage(ctx, await this.sources.list(page.limit, page.cursor));
  }

  @Get("/:id")
  @Permission("ManageConfig")
  @Summary("One event source")
  @Returns(200, EventSourceView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<EventSourceView> {
    return this.sources.get(id);
  }

  @Patch("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Rename, re-attribute, enable or disable an event source (kind cannot change)")
  @Returns(200, EventSourceView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference"))
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("name_taken, source_exists"))
  update(@PathParams("id") @Format("uuid") id: string, @Body() body: EventSourceUpdate): Promise<EventSourceView> {
    return this.sources.update(id, body);
  }

  @Post("/:id/token")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("A new ingest token for an http source (the old one stops working); answered this once")
  @Returns(200, IngestToken)
  @(Returns(400, ErrorEnvelope).Description("validation_failed: not an http source"))
  @Returns(404, ErrorEnvelope)
  async rotate(@PathParams("id") @Format("uuid") id: string): Promise<IngestToken> {
    return { token: await this.sources.rotate(id) };
  }

  @Delete("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Delete an event source (its events stay)")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("source_builtin (disable it instead), source_in_use (a rule names it)"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.sources.remove(id);
    ctx.response.status(204);
  }
}
