import { Controller, Inject } from "@tsed/di";
import { Context, PathParams } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import {
  FastJson,
  Body,
  CreatedId,
  ErrorEnvelope,
  MutationOk,
  sendPage,
  Permission,
  ReturnsPage,
  CallerScope,
  Query,
  type Scope,
} from "../../../core/index.js";
import { FolderListQuery, FolderPoolUpdate, FolderTreeNode, FolderView, FolderWrite } from "../models/FolderModels.js";
import { FolderService } from "../services/FolderService.js";

@Controller("/node-groups")
export class FolderController {
  @Inject(FolderService)
  private folders: FolderService;

  @Get("/")
  @Permission("read")
  @Summary("List folders the caller may see, by name (keyset: pass back X-Next-Cursor as ?cursor=)")
  @ReturnsPage(FolderView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed or invalid_cursor"))
  @(Returns(400, ErrorEnvelope).Description("unknown_reference: parent_id names no folder the caller may see"))
  @FastJson()
  async list(@CallerScope() scope: Scope, @Context() ctx: PlatformContext, @Query() query: FolderListQuery): Promise<FolderView[]> {
    return sendPage(ctx, await this.folders.list(query, scope));
  }

  // Declared before /:id, which would otherwise take "tree" for an id.
  @Get("/tree")
  @Permission("read")
  @Summary("The whole visible tree with node counts and the caller's pins (a folder-scoped caller's scope folders are the roots)")
  @(Returns(200, Array).Of(FolderTreeNode))
  tree(@CallerScope() scope: Scope): Promise<FolderTreeNode[]> {
    return this.folders.tree(scope);
  }

  @Post("/")
  @Permission("ManageConfig")
  @Summary("Create a folder")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (including an ip_ranges entry that is not a CIDR) or invalid_pool"))
  @(Returns(403, ErrorEnvelope).Description("out_of_scope: a folder-scoped caller cannot create at the tree root"))
  @(Returns(400, ErrorEnvelope).Description("unknown_reference: parent_id names no folder the caller may see"))
  async create(@Body() body: FolderWrite, @CallerScope() scope: Scope): Promise<CreatedId> {
    const id = await this.folders.create(body, scope);
    return { id };
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One folder")
  @Returns(200, FolderView)
  @Returns(400, ErrorEnvelope)
  @(Returns(404, ErrorEnvelope).Description("No such folder, or outside the caller's scope"))
  get(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<FolderView> {
    return this.folders.get(id, scope);
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @Summary("Replace a folder (full document: omitted fields take their defaults); may move it")
  @Returns(200, FolderView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_pool, or folder_cycle (moving it under itself or its own descendant)"))
  @(Returns(403, ErrorEnvelope).Description("out_of_scope: a folder-scoped caller cannot move a folder to the tree root"))
  @(Returns(404, ErrorEnvelope).Description("No such folder or parent, or outside the caller's scope"))
  update(@PathParams("id") @Format("uuid") id: string, @Body() body: FolderWrite, @CallerScope() scope: Scope): Promise<FolderView> {
    return this.folders.update(id, body, scope);
  }

  @Put("/:id/pool")
  @Permission("ManageConfig")
  @Summary("Set or clear (null, empty or omitted) the folder's pool; nodes beneath without a pool of their own follow on the next sweep")
  @Returns(200, MutationOk)
  @(Returns(400, ErrorEnvelope).Description("invalid_pool: longer than 63 or characters outside letters, digits, _ and -"))
  @(Returns(404, ErrorEnvelope).Description("No such group, or outside the caller's scope"))
  async setPool(@PathParams("id") @Format("uuid") id: string, @Body() body: FolderPoolUpdate, @CallerScope() scope: Scope): Promise<MutationOk> {
    await this.folders.setPool(id, body.pool, scope);
    return { ok: true };
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @Summary("Delete an empty folder (its pins go with it)")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @(Returns(404, ErrorEnvelope).Description("No such folder, or outside the caller's scope"))
  @(Returns(409, ErrorEnvelope).Description("folder_not_empty: it holds sub-folders or nodes"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    await this.folders.remove(id, scope);
    ctx.response.status(204);
  }
}
