import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams, QueryParams } from "@tsed/platform-params";
import { Description, Enum, Format, Get, Integer, Maximum, MaxLength, Minimum, Returns, Summary } from "@tsed/schema";
import { ErrorEnvelope, Permission, ReturnsPage, ScopeUnsupported, sendPage } from "../../../core/index.js";
import { DELIVERY_STATUSES, DeliveryDetail, DeliveryView } from "../models/DeliveryModels.js";
import { DeliveryLogService } from "../services/DeliveryLogService.js";

/** The delivery log: every delivery with its state, and each attempt's time, status code and error class (never a secret). */
@Controller("/notification-deliveries")
export class DeliveryController {
  @Inject(DeliveryLogService)
  private log: DeliveryLogService;

  @Get("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Deliveries, newest first (keyset pagination), by channel, status, alert incident and time")
  @ReturnsPage(DeliveryView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(
    @Context() ctx: PlatformContext,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(1000) limit: number = 100,
    @QueryParams("cursor") @MaxLength(2048) cursor?: string,
    @QueryParams("channel_id") @Format("uuid") channelId?: string,
    @QueryParams("status") @Enum(...DELIVERY_STATUSES) status?: string,
    @QueryParams("alert") @MaxLength(512) @Description("an alert's incident key") alert?: string,
    @QueryParams("since") @Format("date-time") @Description("RFC 3339, inclusive") since?: string,
    @QueryParams("until") @Format("date-time") @Description("RFC 3339, exclusive") until?: string,
  ): Promise<DeliveryView[]> {
    return sendPage(ctx, await this.log.list({ channel_id: channelId, status, incident_key: alert, since, until }, limit, cursor));
  }

  @Get("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("One delivery with its attempts")
  @Returns(200, DeliveryDetail)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<DeliveryDetail> {
    return this.log.get(id);
  }
}
