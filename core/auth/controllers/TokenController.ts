import { Controller, Inject } from "@tsed/di";
import { Context, PathParams } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Delete, Format, Get, Post, Returns, Summary, Status } from "@tsed/schema";
import { badRequest } from "../../errors.js";
import { Body, Query } from "../../http/params.js";
import { ErrorEnvelope } from "../../http/models.js";
import { AuthService } from "../AuthService.js";
import { Permission, ScopeUnsupported } from "../decorators.js";
import { TokenCreate, TokenCreated, TokenView, TokenListQuery } from "../models/AuthModels.js";

@Controller("/tokens")
export class TokenController {
  @Inject(AuthService)
  private auth: AuthService;

  @Get("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("List API tokens, newest first (keyset: `before` = last row's created_at, `before_id` = its id); never the token values")
  @(Returns(200, Array).Of(TokenView))
  @Returns(400, ErrorEnvelope)
  list(@Query() query: TokenListQuery): Promise<TokenView[]> {
    if (query.before_id && !query.before) throw badRequest("validation_failed", "before_id needs before.");
    return this.auth.listTokens(query.limit, query.before ? { at: query.before, id: query.before_id ?? null } : undefined);
  }

  @Post("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Create an API token (shown once, stored hashed)")
  @Status(201, TokenCreated)
  @Returns(400, ErrorEnvelope)
  async create(@Body() body: TokenCreate): Promise<TokenCreated> {
    const created = await this.auth.createToken({ name: body.name, role: body.role, scope: body.scope ?? "All", expires_at: body.expires_at });
    return created;
  }

  @Delete("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Revoke an API token")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.auth.deleteToken(id);
    ctx.response.status(204);
  }
}
