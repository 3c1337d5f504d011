import { Body, conflict, ErrorEnvelope, sendPage, Permission, ReturnsPage, ScopeUnsupported } from "nms-core";
import {
  Context,
  Controller,
  Get,
  Inject,
  Integer,
  Maximum,
  MaxLength,
  Minimum,
  Post,
  QueryParams,
  Returns,
  Summary,
  type PlatformContext,
} from "nms-core/tsed";
import { RelayDeliveryView, TestMessageBody, TestResult } from "../models/DeliveryModels.js";
import { DeliveryRepository } from "../repositories/DeliveryRepository.js";
import { RelayService } from "../services/RelayService.js";

/** The delivery log and a test post. Deliveries name incidents of every folder, so folder-scoped callers get 403 scope_unsupported. */
@Controller("/alert-relay")
export class DeliveryController {
  @Inject(DeliveryRepository)
  private deliveries: DeliveryRepository;

  @Inject(RelayService)
  private relay: RelayService;

  @Get("/deliveries")
  @Permission("read")
  @ScopeUnsupported()
  @Summary("Posts to the webhook, newest first (keyset pagination)")
  @ReturnsPage(RelayDeliveryView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit), invalid_cursor"))
  async list(
    @Context() ctx: PlatformContext,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(1000) limit: number = 100,
    @QueryParams("cursor") @MaxLength(2048) cursor?: string,
  ): Promise<RelayDeliveryView[]> {
    return sendPage(ctx, await this.deliveries.list(limit, cursor));
  }

  @Post("/test")
  @Permission("ManageConfig")
  @Summary("Post a test message to the configured webhook and log it")
  @Returns(200, TestResult)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(409, ErrorEnvelope).Description("relay_not_configured: pluginConfig.alert-relay.webhookUrl is not set"))
  async test(@Body() body: TestMessageBody): Promise<TestResult> {
    const outcome = await this.relay.test(body.text);
    if (!outcome) throw conflict("relay_not_configured", "No webhook is configured (pluginConfig.alert-relay.webhookUrl).");
    return outcome;
  }
}
