import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Description, Format, Get, Patch, Post, Returns, Summary } from "@tsed/schema";
import { FastJson, Body, ErrorEnvelope, sendPage, Permission, ReturnsPage, CallerScope, type Scope, Query } from "../../../core/index.js";
import { BulkMuteRequest, BulkMuteResult, MuteListQuery, MuteUpdate, MuteView } from "../models/MuteModels.js";
import { MuteService } from "../services/MuteService.js";

@Controller("/mutes")
export class MuteController {
  @Inject(MuteService)
  private mutes: MuteService;

  @Post("/bulk")
  @Permission("AckAlerts")
  @Summary("Mute one metric on many nodes until a time (AckAlerts, not the maintenance permission)")
  @Description(
    "Repeated ids count once (requested). Nodes that do not exist or lie outside the caller's folder scope are skipped without saying which (created is lower). 400: until unparseable or not in the future, metric_name not an identifier, more ids than pluginConfig.alerts.bulkMuteMax. A muted metric still records history; its notifications are suppressed.",
  )
  @Returns(200, BulkMuteResult)
  @Returns(400, ErrorEnvelope)
  bulk(@Body() body: BulkMuteRequest, @CallerScope() scope: Scope): Promise<BulkMuteResult> {
    return this.mutes.bulk(body, scope);
  }

  @Get("/")
  @Permission("read")
  @Summary("Active mutes (until in the future) the caller can see, newest first; the next page via ?cursor= from the X-Next-Cursor header")
  @ReturnsPage(MuteView)
  @Returns(400, ErrorEnvelope)
  @FastJson()
  async list(@CallerScope() scope: Scope, @Context() ctx: PlatformContext, @Query() query: MuteListQuery): Promise<MuteView[]> {
    return sendPage(ctx, await this.mutes.list(query, scope));
  }

  @Patch("/:id")
  @Permission("AckAlerts")
  @Summary("Change a mute's end (until, in the future) or reason")
  @Description(
    "At least one of until and reason. 400: neither, until unparseable or not in the future, blank reason. 404 when missing, or (folder-scoped caller) when its node is gone or outside the scope.",
  )
  @Returns(200, MuteView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  update(@PathParams("id") @Format("uuid") id: string, @Body() body: MuteUpdate, @CallerScope() scope: Scope): Promise<MuteView> {
    return this.mutes.update(id.toLowerCase(), body, scope);
  }

  @Delete("/:id")
  @Permission("AckAlerts")
  @Summary("End a mute now (delete it)")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    await this.mutes.remove(id, scope);
    ctx.response.status(204);
  }
}
