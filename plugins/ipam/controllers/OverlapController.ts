import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context } from "@tsed/platform-params";
import { Get, Put, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, ReturnsPage, ScopeUnsupported, sendPage, SkeletonRead, PageQuery, Query } from "../../../core/index.js";
import { OverlapAckBody, OverlapView } from "../models/IpamModels.js";
import { OverlapService } from "../services/OverlapService.js";

/** Subnet overlaps between sites (IPAM sites and folders with their own ip_ranges), and their acks. */
@Controller("/subnet-overlaps")
export class OverlapController {
  @Inject(OverlapService)
  private overlaps: OverlapService;

  @Get("/")
  @Permission("read")
  @ScopeUnsupported()
  @SkeletonRead([])
  @Summary("Each current overlap between prefixes of different sites, by key (keyset pagination), with its ack state")
  @ReturnsPage(OverlapView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<OverlapView[]> {
    return sendPage(ctx, await this.overlaps.list(page.limit, page.cursor));
  }

  @Put("/acks")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Mark a current overlap deliberate for the sites it spans now (a site joining it later reopens it)")
  @Returns(200, OverlapView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, text_too_long"))
  @(Returns(404, ErrorEnvelope).Description("overlap_not_found"))
  ack(@Body() body: OverlapAckBody): Promise<OverlapView> {
    return this.overlaps.ack(body);
  }
}
