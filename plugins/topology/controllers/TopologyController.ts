import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Format, Get, Post, Returns, Summary } from "@tsed/schema";
import { Body, CallerScope, ErrorEnvelope, Permission, Query, ReturnsPage, sendPage, SkeletonRead, type Scope } from "../../../core/index.js";
import {
  TopologyDiscoverBody,
  TopologyDiscoverResult,
  TopologyImportedNeighbor,
  TopologyLinkView,
  TopologyNeighborImportBody,
  TopologyPageQuery,
  TopologyUnknownNeighborView,
} from "../models/TopologyModels.js";
import { DiscoveryService } from "../services/DiscoveryService.js";
import { TopologyService } from "../services/TopologyService.js";

/** Links between nodes, unknown neighbours and on-demand discovery. Folder scope: a link is listed when both its ends are in scope. */
@Controller("/topology")
export class TopologyController {
  @Inject(TopologyService)
  private topology: TopologyService;

  @Inject(DiscoveryService)
  private discovery: DiscoveryService;

  @Get("/links")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Links between nodes found by LLDP and CDP, oldest first (keyset pagination); both ends must be in your scope")
  @ReturnsPage(TopologyLinkView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async links(@Context() ctx: PlatformContext, @CallerScope() scope: Scope, @Query() q: TopologyPageQuery): Promise<TopologyLinkView[]> {
    return sendPage(ctx, await this.topology.links(scope, q.state, q.limit, q.cursor));
  }

  @Get("/neighbors/unknown")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Neighbours nodes report that resolve to no node here, oldest first (keyset pagination); the reporting node must be in your scope")
  @ReturnsPage(TopologyUnknownNeighborView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async unknown(@Context() ctx: PlatformContext, @CallerScope() scope: Scope, @Query() q: TopologyPageQuery): Promise<TopologyUnknownNeighborView[]> {
    return sendPage(ctx, await this.topology.unknown(scope, q.state, q.limit, q.cursor));
  }

  @Post("/neighbors/unknown/:id/import")
  @Permission("ManageConfig")
  @Summary("Import an unknown neighbour as a node (inventory's discovery import); neighbours that resolve to it become links")
  @Returns(200, TopologyImportedNeighbor)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, no_address, and the discovery import's codes (unknown_reference …)"))
  @(Returns(404, ErrorEnvelope).Description("not_found: no such unknown neighbour, or its reporting node is outside your scope"))
  importUnknown(
    @PathParams("id") @Format("uuid") id: string,
    @Body() body: TopologyNeighborImportBody,
    @CallerScope() scope: Scope,
  ): Promise<TopologyImportedNeighbor> {
    return this.topology.importUnknown(id, body, scope);
  }

  @Post("/discover")
  @Permission("ManageConfig")
  @Summary("Walk LLDP and CDP now: one node (answered when done) or every node in your scope (queued)")
  @(Returns(202, TopologyDiscoverResult).Description("a run over every node in your scope with a credential was queued"))
  @(Returns(200, TopologyDiscoverResult).Description("the node was walked"))
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found: no such node, or outside your scope"))
  async discover(@Body() body: TopologyDiscoverBody, @CallerScope() scope: Scope, @Context() ctx: PlatformContext): Promise<TopologyDiscoverResult> {
    if (body.node_id) return { queued: false, ...(await this.discovery.discover([body.node_id], scope)) };
    const nodes = await this.discovery.queueAll(scope);
    ctx.response.status(202);
    return { queued: true, nodes, walked: null, failed: null, links: null, unknown: null, up: null, gone: null };
  }
}
