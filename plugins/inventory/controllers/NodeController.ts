import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, FastJson, sendPage, Permission, ReturnsPage, CallerScope, Query, type Scope } from "../../../core/index.js";
import { NodeListQuery, NodeView, NodeWrite } from "../models/NodeModels.js";
import { NodeService } from "../services/NodeService.js";

@Controller("/nodes")
export class NodeController {
  @Inject(NodeService)
  private nodes: NodeService;

  @Get("/")
  @Permission("read")
  @Summary("Nodes the caller can see, by (lower(name), id); the next page via ?cursor= from the X-Next-Cursor header")
  @ReturnsPage(NodeView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  @FastJson()
  async list(@CallerScope() scope: Scope, @Context() ctx: PlatformContext, @Query() query: NodeListQuery): Promise<NodeView[]> {
    return sendPage(ctx, await this.nodes.list(query, scope));
  }

  @Post("/")
  @Permission("ManageConfig")
  @Summary("Create a node (group_id absent or null = tree root)")
  @Status(201, CreatedId)
  @Returns(400, ErrorEnvelope)
  async create(@Body() body: NodeWrite, @CallerScope() scope: Scope): Promise<CreatedId> {
    const id = await this.nodes.create(body, scope);
    return { id };
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One node with its effective pool and tags")
  @Returns(200, NodeView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<NodeView> {
    return this.nodes.get(id, scope);
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @Summary("Replace a node (full document: absent optional fields take their defaults)")
  @Returns(200, NodeView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async update(@PathParams("id") @Format("uuid") id: string, @Body() body: NodeWrite, @CallerScope() scope: Scope): Promise<NodeView> {
    await this.nodes.update(id, body, scope);
    return this.nodes.get(id, scope);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @Summary("Delete a node (its URL and DNS checks go with it; child nodes lose their parent)")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    await this.nodes.remove(id, scope);
    ctx.response.status(204);
  }
}
