import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Format, Get, Returns, Summary } from "@tsed/schema";
import { ErrorEnvelope, Permission, Query, ReturnsPage, ScopeUnsupported, sendPage } from "../../../core/index.js";
import { DeliveryDetail, DeliveryListQuery, DeliveryView } from "../models/DeliveryModels.js";
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
  async list(@Context() ctx: PlatformContext, @Query() query: DeliveryListQuery): Promise<DeliveryView[]> {
    return sendPage(ctx, await this.log.list(query));
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
