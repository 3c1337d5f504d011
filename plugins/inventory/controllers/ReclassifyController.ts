import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context } from "@tsed/platform-params";
import { Description, Get, Post, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, sendPage, Permission, ReturnsPage, CallerScope, type Scope, Query } from "../../../core/index.js";
import { ReclassifyPreviewQuery, ReclassifyPreviewRow, ReclassifyRequest, ReclassifyResult } from "../models/ReclassifyModels.js";
import { ReclassifyService } from "../services/ReclassifyService.js";

@Controller("/reclassify")
export class ReclassifyController {
  @Inject(ReclassifyService)
  private reclassify: ReclassifyService;

  @Post("/apply")
  @Permission("ManageConfig")
  @Summary("Apply confirmed profile changes, in one transaction")
  @Description(
    "A node named twice counts once and its last entry is used; applied + skipped_changed + skipped_hidden + skipped_locked equals the distinct nodes named. " +
      "skipped_hidden: the node is gone or outside the caller's folder scope; skipped_locked: profile_locked; skipped_changed: its profile is no longer from_profile_id, " +
      "or the rules no longer choose to_profile_id for its sysObjectID and sysDescr. 400 more than 5000 items.",
  )
  @Returns(200, ReclassifyResult)
  @Returns(400, ErrorEnvelope)
  apply(@Body() body: ReclassifyRequest, @CallerScope() scope: Scope): Promise<ReclassifyResult> {
    return this.reclassify.apply(body, scope);
  }

  @Get("/preview")
  @Permission("ManageConfig")
  @Summary("Nodes whose classification rules now choose another profile than they have (not profile_locked), by (lower(name), id)")
  @ReturnsPage(ReclassifyPreviewRow)
  @Returns(400, ErrorEnvelope)
  async preview(@CallerScope() scope: Scope, @Context() ctx: PlatformContext, @Query() query: ReclassifyPreviewQuery): Promise<ReclassifyPreviewRow[]> {
    return sendPage(ctx, await this.reclassify.preview(query, scope));
  }
}
