import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, Permission, ReturnsPage, ScopeUnsupported, sendPage, PageQuery, Query } from "../../../core/index.js";
import { DestinationBody, DestinationStatusView, DestinationView } from "../models/DestinationModels.js";
import { DestinationService } from "../services/DestinationService.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { PoolStatus } from "../services/PoolStatus.js";

const BODY_CODES =
  "validation_failed, invalid_target, kind_mismatch, invalid_pool, invalid_rate_limit, invalid_filter, invalid_ca_cert, community_not_allowed, invalid_service_account";

/** Forwarding destinations. Every route needs ManageSystem and an unrestricted account (destinations are global). */
@Controller("/forwarding/destinations")
export class DestinationController {
  @Inject(DestinationService)
  private destinations: DestinationService;

  @Inject(ForwardingTee)
  private tee: ForwardingTee;

  @Inject(PoolStatus)
  private pool: PoolStatus;

  @Post("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Create a destination: where the tee sends a received stream (syslog, trap, flow), with its filter")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(`${BODY_CODES}, too_many_destinations`))
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  async create(@Body() body: DestinationBody): Promise<CreatedId> {
    const id = await this.destinations.create(body);
    return { id };
  }

  @Get("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Destinations by name (keyset pagination); secrets are never answered")
  @ReturnsPage(DestinationView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<DestinationView[]> {
    return sendPage(ctx, await this.destinations.list(page.limit, page.cursor));
  }

  @Get("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("One destination; secrets are never answered")
  @Returns(200, DestinationView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  get(@PathParams("id") @Format("uuid") id: string): Promise<DestinationView> {
    return this.destinations.get(id);
  }

  @Put("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Replace a destination with the whole body; an omitted secret keeps the stored one, null clears it")
  @Returns(200, DestinationView)
  @(Returns(400, ErrorEnvelope).Description(BODY_CODES))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: DestinationBody): Promise<DestinationView> {
    return this.destinations.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Delete a destination (the tee stops sending to it)")
  @Returns(204)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.destinations.remove(id);
    ctx.response.status(204);
  }

  @Get("/:id/status")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary(
    "This replica's counters for a destination since it started: forwarded, dropped (filter, rate limit, queue), send and connection errors, connection; plus the latest reports of the pollers that tee it, summed",
  )
  @Returns(200, DestinationStatusView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async status(@PathParams("id") @Format("uuid") id: string): Promise<DestinationStatusView> {
    const d = await this.destinations.get(id);
    // Teed here and by pollers (every pool's, or that pool's): this replica's counters and their latest reports, summed.
    const { counters, pollers } = this.pool.statusOf(id, this.tee.status(id));
    return { id: d.id, name: d.name, ...counters, pollers };
  }
}
