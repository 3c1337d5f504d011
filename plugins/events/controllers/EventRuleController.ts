import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, Permission, ReturnsPage, ScopeUnsupported, sendPage, PageQuery, Query } from "../../../core/index.js";
import { EventRuleBody, EventRuleView } from "../models/RuleModels.js";
import { RuleService } from "../services/RuleService.js";

/** Event rules (spec: POST /event-rules), with list, get, replace and delete. */
@Controller("/event-rules")
export class EventRuleController {
  @Inject(RuleService)
  private rules: RuleService;

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Create an event rule")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(
    "validation_failed: a pattern does not compile for its match_kind (or could backtrack catastrophically), or a field is outside its range; unknown_reference: node_id or source_id",
  ))
  async create(@Body() body: EventRuleBody): Promise<CreatedId> {
    const id = await this.rules.create(body);
    return { id };
  }

  @Get("/")
  @Permission("read")
  @Summary("Event rules, oldest first (keyset pagination)")
  @ReturnsPage(EventRuleView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<EventRuleView[]> {
    return sendPage(ctx, await this.rules.list(page.limit, page.cursor));
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One event rule")
  @Returns(200, EventRuleView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<EventRuleView> {
    return this.rules.get(id);
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace an event rule (the create body); when its matching changes, its open alerts clear and counting starts over")
  @Returns(200, EventRuleView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference"))
  @Returns(404, ErrorEnvelope)
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: EventRuleBody): Promise<EventRuleView> {
    return this.rules.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete an event rule (its open alerts clear)")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.rules.remove(id);
    ctx.response.status(204);
  }
}
