import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Patch, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import {
  Body,
  CreatedId,
  ErrorEnvelope,
  MutationOk,
  Permission,
  ReturnsPage,
  ScopeUnsupported,
  sendPage,
  WithoutStore,
  PageQuery,
  Query,
} from "../../../core/index.js";
import { LIFECYCLE_POINTS } from "../contract.js";
import {
  BuiltinTemplateItem,
  ChannelCreate,
  ChannelEnabledBody,
  ChannelKindView,
  ChannelPatch,
  ChannelTestResult,
  ChannelView,
  BuiltinTemplateQuery,
} from "../models/ChannelModels.js";
import { ChannelService } from "../services/ChannelService.js";
import { DeliveryWorker } from "../services/DeliveryWorker.js";
import { KindRegistry } from "../services/KindRegistry.js";

/** Notification channels. Every route needs ManageSystem and an unrestricted account (channels are global). */
@Controller("/notification-channels")
export class ChannelController {
  @Inject(ChannelService)
  private channels: ChannelService;

  @Inject(KindRegistry)
  private kinds: KindRegistry;

  @Inject(DeliveryWorker)
  private worker: DeliveryWorker;

  @Get("/builtin-template")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @WithoutStore()
  @Summary("The built-in template items of a channel kind, for fire, resolve and suppress")
  @(Returns(200, Array).Of(BuiltinTemplateItem))
  @(Returns(400, ErrorEnvelope).Description("unknown_channel_kind"))
  builtinTemplate(@Query() query: BuiltinTemplateQuery): BuiltinTemplateItem[] {
    const k = this.kinds.get(query.kind);
    return LIFECYCLE_POINTS.map((event) => ({ event, subject: k.builtinTemplates[event].subject, body: k.builtinTemplates[event].body }));
  }

  @Get("/kinds")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @WithoutStore()
  @Summary("The channel kinds this service can send through, with their config schemas")
  @(Returns(200, Array).Of(ChannelKindView))
  listKinds(): ChannelKindView[] {
    return this.kinds.list().map((k) => ({
      kind: k.kind,
      description: k.description,
      config_schema: k.configSchema,
      secret_fields: [...k.secretFields],
      opens_incidents: k.opensIncidents,
    }));
  }

  @Get("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Channels by name (keyset pagination); secrets are never answered")
  @ReturnsPage(ChannelView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<ChannelView[]> {
    return sendPage(ctx, await this.channels.list(page.limit, page.cursor));
  }

  @Post("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Create a channel: name, kind, the kind's config, optional templates")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_channel_kind, invalid_channel_config, invalid_template"))
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  async create(@Body() body: ChannelCreate): Promise<CreatedId> {
    const id = await this.channels.create(body);
    return { id };
  }

  @Get("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("One channel; secrets are never answered")
  @Returns(200, ChannelView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<ChannelView> {
    return this.channels.get(id);
  }

  @Patch("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Change a channel's name, config or templates; an omitted secret keeps the stored one")
  @Returns(200, ChannelView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_channel_config, invalid_template"))
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  patch(@PathParams("id") @Format("uuid") id: string, @Body() body: ChannelPatch): Promise<ChannelView> {
    return this.channels.patch(id, body);
  }

  @Put("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Enable or disable a channel")
  @Returns(200, MutationOk)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async setEnabled(@PathParams("id") @Format("uuid") id: string, @Body() body: ChannelEnabledBody): Promise<MutationOk> {
    await this.channels.setEnabled(id, body.enabled);
    return { ok: true };
  }

  @Delete("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Delete a channel (its deliveries stay in the log, by name)")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.channels.remove(id);
    ctx.response.status(204);
  }

  @Post("/:id/test")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Send one test notification (the sample alert, subject [TEST] …), once, without retry; works on a disabled channel")
  @Returns(200, ChannelTestResult)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  test(@PathParams("id") @Format("uuid") id: string): Promise<ChannelTestResult> {
    return this.worker.test(id);
  }
}
