import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Put, Returns, Summary } from "@tsed/schema";
import { Body, CallerScope, ErrorEnvelope, Permission, Query, requireCaller, ReturnsPage, sendPage, type Scope } from "../../../core/index.js";
import { TopologyNeighborView, TopologyPageQuery, TopologyParentBody, TopologyUpstreamView } from "../models/TopologyModels.js";
import { TopologyService } from "../services/TopologyService.js";
import { UpstreamService } from "../services/UpstreamService.js";

/** A node's neighbours, its upstream path and its pinned parent. */
@Controller("/nodes")
export class NodeTopologyController {
  @Inject(TopologyService)
  private topology: TopologyService;

  @Inject(UpstreamService)
  private upstream: UpstreamService;

  @Get("/:id/neighbors")
  @Permission("read")
  @Summary("A node's links seen from its side, oldest first (keyset pagination); neighbours outside your scope are left out")
  @ReturnsPage(TopologyNeighborView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  @(Returns(404, ErrorEnvelope).Description("not_found: no such node, or outside your scope"))
  async neighbors(
    @Context() ctx: PlatformContext,
    @PathParams("id") @Format("uuid") id: string,
    @CallerScope() scope: Scope,
    @Query() q: TopologyPageQuery,
  ): Promise<TopologyNeighborView[]> {
    return sendPage(ctx, await this.topology.neighbors(id, scope, q.state, q.limit, q.cursor));
  }

  @Get("/:id/upstream")
  @Permission("read")
  @Summary("The node's parent (pinned, else inferred from the links from its pool's seed) and its path up to the seed")
  @Returns(200, TopologyUpstreamView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found: no such node, or outside your scope"))
  upstreamOf(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<TopologyUpstreamView> {
    return this.upstream.view(id, scope);
  }

  @Put("/:id/parent")
  @Permission("ManageConfig")
  @Summary("Pin the node's parent: it wins over the parent inferred from the links")
  @Returns(200, TopologyUpstreamView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference (no such parent in your scope), parent_loop"))
  @(Returns(404, ErrorEnvelope).Description("not_found: no such node, or outside your scope"))
  pin(@PathParams("id") @Format("uuid") id: string, @Body() body: TopologyParentBody, @CallerScope() scope: Scope): Promise<TopologyUpstreamView> {
    return this.upstream.pin(id, body.parent_id, scope, requireCaller().username);
  }

  @Delete("/:id/parent")
  @Permission("ManageConfig")
  @Summary("Remove the node's pinned parent (the inferred one applies again); idempotent")
  @Returns(200, TopologyUpstreamView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found: no such node, or outside your scope"))
  unpin(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<TopologyUpstreamView> {
    return this.upstream.unpin(id, scope);
  }
}
