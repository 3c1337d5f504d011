import { Controller, Inject } from "@tsed/di";
import { Context, PathParams } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, sendPage, Permission, ScopeUnsupported, ReturnsPage, Query } from "../../../core/index.js";
import { CredentialBody, CredentialListQuery, CredentialView } from "../models/CredentialModels.js";
import { CredentialService } from "../services/CredentialService.js";

/**
 * Credentials are sensitive: every route, reads included, needs ManageConfig and an
 * unrestricted account. Secret values are write-only.
 */
@Controller("/credentials")
export class CredentialController {
  @Inject(CredentialService)
  private credentials: CredentialService;

  @Get("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("List credentials by name (keyset pagination); secrets are never answered")
  @ReturnsPage(CredentialView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit, kind), invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() query: CredentialListQuery): Promise<CredentialView[]> {
    return sendPage(ctx, await this.credentials.list(query.limit, query.cursor, query.kind));
  }

  @Get("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("One credential; secrets are never answered")
  @Returns(200, CredentialView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<CredentialView> {
    return this.credentials.get(id);
  }

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Create a credential: name, kind and the fields of that kind")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed: a field outside its kind, a missing field of the kind, a key shorter than 8"))
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  async create(@Body() body: CredentialBody): Promise<CreatedId> {
    const id = await this.credentials.create(body);
    return { id };
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace a credential (full document); an omitted secret keeps the stored one unless the kind changes")
  @Returns(200, CredentialView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, including a kind change without the new kind's secrets"))
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("name_taken"))
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: CredentialBody): Promise<CredentialView> {
    return this.credentials.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete a credential no node or URL check uses")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("credential_in_use"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.credentials.remove(id);
    ctx.response.status(204);
  }
}
