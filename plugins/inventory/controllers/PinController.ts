import { Controller, Inject } from "@tsed/di";
import { Context, PathParams } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Delete, Format, Get, Put, Returns, Summary } from "@tsed/schema";
import { Authenticated, ErrorEnvelope, MutationOk, PersonOnly, CallerScope, type Scope } from "../../../core/index.js";
import { PinnedFolder } from "../models/PinModels.js";
import { PinService } from "../services/PinService.js";

// Pins belong to a person: API tokens name none and get 403 person_required.
@Controller("/pins")
export class PinController {
  @Inject(PinService)
  private pins: PinService;

  @Get("/")
  @Authenticated()
  @PersonOnly()
  @Summary("The caller's pinned folders that it may still see")
  @(Returns(200, Array).Of(PinnedFolder))
  list(@CallerScope() scope: Scope): Promise<PinnedFolder[]> {
    return this.pins.list(scope);
  }

  @Put("/groups/:group_id")
  @Authenticated()
  @PersonOnly()
  @Summary("Pin a folder (repeating is not an error)")
  @Returns(200, MutationOk)
  @Returns(400, ErrorEnvelope)
  @(Returns(404, ErrorEnvelope).Description("No such folder, not visible to the caller, or the session's account is gone"))
  @(Returns(409, ErrorEnvelope).Description("pin_limit: the account already holds the maximum number of pins (pluginConfig.inventory.pinLimit)"))
  async pin(@PathParams("group_id") @Format("uuid") groupId: string, @CallerScope() scope: Scope): Promise<MutationOk> {
    await this.pins.pin(groupId, scope);
    return { ok: true };
  }

  @Delete("/groups/:group_id")
  @Authenticated()
  @PersonOnly()
  @Summary("Unpin a folder (one not pinned is not an error)")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @(Returns(404, ErrorEnvelope).Description("No such folder, or not visible to the caller (and not pinned)"))
  async unpin(@PathParams("group_id") @Format("uuid") groupId: string, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    await this.pins.unpin(groupId, scope);
    ctx.response.status(204);
  }
}
