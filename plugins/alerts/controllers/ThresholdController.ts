import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Description, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { FastJson, Body, CreatedId, ErrorEnvelope, sendPage, Permission, ReturnsPage, ScopeUnsupported, Query } from "../../../core/index.js";
import { ThresholdBody, ThresholdListQuery, ThresholdView } from "../models/ThresholdModels.js";
import { ThresholdService } from "../services/ThresholdService.js";

const VALIDATION =
  "validation_failed: metric not an identifier or a raw monotonic counter (if_in_octets or ifInOctets, any case), scope_level or direction outside its vocabulary, " +
  "a target that is not a uuid (or for an interface rule not exactly one `<node uuid>:<ifindex>`), more than 32 or repeated scope_ids, " +
  "row_match on an interface rule, no bound, critical less severe than warning, below bounds not under above bounds, dwell_samples outside 1 to 1000";

/**
 * Threshold rules (configuration). Rules are global configuration, not filed in
 * folders: any reader may list them; folder-restricted accounts cannot change them
 * (403 scope_unsupported), since a rule reaches nodes outside their folders.
 */
@Controller("/thresholds")
export class ThresholdController {
  @Inject(ThresholdService)
  private thresholds: ThresholdService;

  @Get("/")
  @Permission("read")
  @Summary("List threshold rules, oldest first (keyset pagination)")
  @ReturnsPage(ThresholdView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit, metric), invalid_cursor"))
  @FastJson()
  async list(@Context() ctx: PlatformContext, @Query() query: ThresholdListQuery): Promise<ThresholdView[]> {
    return sendPage(ctx, await this.thresholds.list(query.limit, query.cursor, query.metric));
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One threshold rule, normalised (the four bounds resolved, every target in scope_ids)")
  @Returns(200, ThresholdView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<ThresholdView> {
    return this.thresholds.get(id);
  }

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Create a threshold rule")
  @Description(
    "The four bounds win over direction/warning/critical when any of them carries a value; scope_ids wins over scope_id; a global rule " +
      "ignores (does not store) targets; a profile, folder or node rule without targets is a global rule. The rule is stored normalised.",
  )
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(VALIDATION))
  async create(@Body() body: ThresholdBody): Promise<CreatedId> {
    const id = await this.thresholds.create(body);
    return { id };
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace a threshold rule (full document, the rules of create)")
  @Returns(200, ThresholdView)
  @(Returns(400, ErrorEnvelope).Description(VALIDATION))
  @Returns(404, ErrorEnvelope)
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: ThresholdBody): Promise<ThresholdView> {
    return this.thresholds.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete a threshold rule; its open incidents are cleared")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.thresholds.remove(id);
    ctx.response.status(204);
  }
}
