import { Controller, Inject } from "@tsed/di";
import { Context, PathParams } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Delete, Description, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, sendPage, Permission, ScopeUnsupported, ReturnsPage, Query } from "../../../core/index.js";
import { ClassificationRuleBody, ClassificationRuleView, ClassificationRuleListQuery } from "../models/ClassificationRuleModels.js";
import { ClassificationRuleService } from "../services/ClassificationRuleService.js";

/** Classification rules: which profile a device gets from its sysObjectID and sysDescr. */
@Controller("/classification-rules")
export class ClassificationRuleController {
  @Inject(ClassificationRuleService)
  private rules: ClassificationRuleService;

  @Get("/")
  @Permission("ManageConfig")
  // The spec answers "an array of classification rules in evaluation order" and takes no parameters, and nothing caps
  // the number of rules: without `limit` the answer is every rule. `limit` and `cursor` page it only when asked.
  @Summary("Every classification rule in evaluation order: priority ascending, then id")
  @Description(
    "Without `limit`, the whole list (no X-Next-Cursor). Optional keyset paging: `limit` (1 to 1000) answers one page and X-Next-Cursor when more may follow.",
  )
  @ReturnsPage(ClassificationRuleView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit), invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() query: ClassificationRuleListQuery): Promise<ClassificationRuleView[]> {
    return sendPage(ctx, await this.rules.list(query.limit, query.cursor));
  }

  @Get("/:id")
  @Permission("ManageConfig")
  @Summary("One classification rule")
  @Returns(200, ClassificationRuleView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<ClassificationRuleView> {
    return this.rules.get(id);
  }

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Create a classification rule")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(
    "validation_failed (neither sysobjectid_prefix nor sysdescr_regex, not a dotted OID, …), invalid_regex, unknown_reference",
  ))
  async create(@Body() body: ClassificationRuleBody): Promise<CreatedId> {
    const id = await this.rules.create(body);
    return { id };
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace a classification rule (full document; omitted optional fields take their defaults)")
  @Returns(200, ClassificationRuleView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_regex, unknown_reference"))
  @Returns(404, ErrorEnvelope)
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: ClassificationRuleBody): Promise<ClassificationRuleView> {
    return this.rules.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete a classification rule")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.rules.remove(id);
    ctx.response.status(204);
  }
}
