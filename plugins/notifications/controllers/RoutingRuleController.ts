import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, Permission, ReturnsPage, ScopeUnsupported, sendPage, PageQuery, Query } from "../../../core/index.js";
import { RoutingRuleBody, RoutingRuleView } from "../models/RoutingRuleModels.js";
import { RoutingRuleService } from "../services/RoutingRuleService.js";

/** Routing rules: an alert goes to the channels of every enabled rule whose severity matches (null = any), each channel once. */
@Controller("/routing-rules")
export class RoutingRuleController {
  @Inject(RoutingRuleService)
  private rules: RoutingRuleService;

  @Post("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Create a routing rule")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (empty name, severity outside critical/warning/info/null), unknown_reference (a channel id)"))
  async create(@Body() body: RoutingRuleBody): Promise<CreatedId> {
    const id = await this.rules.create(body);
    return { id };
  }

  @Get("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Routing rules, oldest first (keyset pagination)")
  @ReturnsPage(RoutingRuleView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<RoutingRuleView[]> {
    return sendPage(ctx, await this.rules.list(page.limit, page.cursor));
  }

  @Get("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("One routing rule")
  @Returns(200, RoutingRuleView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<RoutingRuleView> {
    return this.rules.get(id);
  }

  @Put("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Replace a routing rule (the create body)")
  @Returns(200, RoutingRuleView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference"))
  @Returns(404, ErrorEnvelope)
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: RoutingRuleBody): Promise<RoutingRuleView> {
    return this.rules.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Delete a routing rule")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.rules.remove(id);
    ctx.response.status(204);
  }
}
