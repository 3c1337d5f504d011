import { Controller, Inject } from "@tsed/di";
import { Context, PathParams } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, sendPage, Permission, ScopeUnsupported, ReturnsPage, PageQuery, Query } from "../../../core/index.js";
import { ProfileBody, ProfileView } from "../models/ProfileModels.js";
import { ProfileService } from "../services/ProfileService.js";

/** Device profiles. Global, not filed in folders: any reader may list them; folder-scoped accounts cannot change them. */
@Controller("/profiles")
export class ProfileController {
  @Inject(ProfileService)
  private profiles: ProfileService;

  @Get("/")
  @Permission("read")
  @Summary("List device profiles by name (keyset pagination)")
  @ReturnsPage(ProfileView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit), invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<ProfileView[]> {
    return sendPage(ctx, await this.profiles.list(page.limit, page.cursor));
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One device profile")
  @Returns(200, ProfileView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<ProfileView> {
    return this.profiles.get(id);
  }

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Create a device profile")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference (parent_id)"))
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  async create(@Body() body: ProfileBody): Promise<CreatedId> {
    const id = await this.profiles.create(body);
    return { id };
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace a device profile (full document; omitted optional fields take their defaults)")
  @Returns(200, ProfileView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference (parent_id), profile_cycle"))
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: ProfileBody): Promise<ProfileView> {
    return this.profiles.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete a device profile no node, classification rule or child profile uses")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("profile_in_use"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.profiles.remove(id);
    ctx.response.status(204);
  }
}
