import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, MutationOk, sendPage, Permission, ReturnsPage, ScopeUnsupported, PageQuery, Query } from "../../../core/index.js";
import {
  CollectionTemplateBody,
  CollectionTemplateItemBody,
  CollectionTemplateItemView,
  CollectionTemplateView,
  TemplateItemListQuery,
} from "../models/CollectionTemplateModels.js";
import { CollectionTemplateService } from "../services/CollectionTemplateService.js";

/**
 * Collection templates: OIDs a user adds without code, grouped in templates that device profiles
 * use. Global like profiles: any reader may list them; folder-scoped accounts cannot change them.
 */
@Controller("/")
export class CollectionTemplateController {
  @Inject(CollectionTemplateService)
  private templates: CollectionTemplateService;

  @Get("/collection-templates")
  @Permission("read")
  @Summary("List collection templates by name (keyset pagination)")
  @ReturnsPage(CollectionTemplateView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit), invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<CollectionTemplateView[]> {
    return sendPage(ctx, await this.templates.list(page.limit, page.cursor));
  }

  @Get("/collection-templates/:id")
  @Permission("read")
  @Summary("One collection template")
  @Returns(200, CollectionTemplateView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<CollectionTemplateView> {
    return this.templates.get(id);
  }

  @Post("/collection-templates")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Create a collection template")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  async create(@Body() body: CollectionTemplateBody): Promise<CreatedId> {
    const id = await this.templates.create(body);
    return { id };
  }

  @Put("/collection-templates/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace a collection template's name and description (full document)")
  @Returns(200, CollectionTemplateView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: CollectionTemplateBody): Promise<CollectionTemplateView> {
    return this.templates.replace(id, body);
  }

  @Delete("/collection-templates/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete a collection template and its items; no profile may use it")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("template_in_use"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.templates.remove(id);
    ctx.response.status(204);
  }

  // ---- items ----

  @Get("/collection-templates/:id/items")
  @Permission("read")
  @Summary("Items of a collection template by metric name (keyset pagination, default page 1000)")
  @ReturnsPage(CollectionTemplateItemView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit), invalid_cursor"))
  @Returns(404, ErrorEnvelope)
  async listItems(
    @Context() ctx: PlatformContext,
    @PathParams("id") @Format("uuid") id: string,
    @Query() query: TemplateItemListQuery,
  ): Promise<CollectionTemplateItemView[]> {
    return sendPage(ctx, await this.templates.listItems(id, query.limit, query.cursor));
  }

  @Get("/collection-templates/:id/items/:item_id")
  @Permission("read")
  @Summary("One item of a collection template")
  @Returns(200, CollectionTemplateItemView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  getItem(@PathParams("id") @Format("uuid") id: string, @PathParams("item_id") @Format("uuid") itemId: string): Promise<CollectionTemplateItemView> {
    return this.templates.getItem(id, itemId);
  }

  @Post("/collection-templates/:id/items")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Add an item (an OID to read) to a collection template")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, reserved_metric_name"))
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("metric_name_taken"))
  async createItem(@PathParams("id") @Format("uuid") id: string, @Body() body: CollectionTemplateItemBody): Promise<CreatedId> {
    const itemId = await this.templates.createItem(id, body);
    return { id: itemId };
  }

  @Put("/collection-templates/:id/items/:item_id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace an item of a collection template (full document; omitted optional fields take their defaults)")
  @Returns(200, CollectionTemplateItemView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, reserved_metric_name"))
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("metric_name_taken"))
  replaceItem(
    @PathParams("id") @Format("uuid") id: string,
    @PathParams("item_id") @Format("uuid") itemId: string,
    @Body() body: CollectionTemplateItemBody,
  ): Promise<CollectionTemplateItemView> {
    return this.templates.replaceItem(id, itemId, body);
  }

  @Delete("/collection-templates/:id/items/:item_id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete an item of a collection template")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async removeItem(
    @PathParams("id") @Format("uuid") id: string,
    @PathParams("item_id") @Format("uuid") itemId: string,
    @Context() ctx: PlatformContext,
  ): Promise<void> {
    await this.templates.removeItem(id, itemId);
    ctx.response.status(204);
  }

  // ---- profiles ----

  @Get("/profiles/:profile_id/collection-templates")
  @Permission("read")
  @Summary("Collection templates a device profile uses, by name")
  @(Returns(200, Array).Of(CollectionTemplateView))
  @Returns(400, ErrorEnvelope)
  templatesOfProfile(@PathParams("profile_id") @Format("uuid") profileId: string): Promise<CollectionTemplateView[]> {
    return this.templates.templatesOfProfile(profileId);
  }

  @Put("/profiles/:profile_id/collection-templates/:template_id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("A device profile uses a collection template (repeating it is not an error)")
  @Returns(200, MutationOk)
  @Returns(400, ErrorEnvelope)
  @(Returns(404, ErrorEnvelope).Description("no such collection template"))
  async attach(
    @PathParams("profile_id") @Format("uuid") profileId: string,
    @PathParams("template_id") @Format("uuid") templateId: string,
  ): Promise<MutationOk> {
    await this.templates.attach(profileId, templateId);
    return { ok: true };
  }

  @Delete("/profiles/:profile_id/collection-templates/:template_id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("A device profile stops using a collection template (detaching one it does not use is not an error)")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @(Returns(404, ErrorEnvelope).Description("no such collection template"))
  async detach(
    @PathParams("profile_id") @Format("uuid") profileId: string,
    @PathParams("template_id") @Format("uuid") templateId: string,
    @Context() ctx: PlatformContext,
  ): Promise<void> {
    await this.templates.detach(profileId, templateId);
    ctx.response.status(204);
  }
}
