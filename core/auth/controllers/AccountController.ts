import { Controller, Inject } from "@tsed/di";
import { Context, PathParams } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, Query } from "../../http/params.js";
import { CreatedId, ErrorEnvelope } from "../../http/models.js";
import { AuthService } from "../AuthService.js";
import { Permission, ScopeUnsupported } from "../decorators.js";
import { AccountCreate, AccountUpdate, AccountView, AccountListQuery } from "../models/AuthModels.js";

@Controller("/accounts")
export class AccountController {
  @Inject(AuthService)
  private auth: AuthService;

  @Get("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("List accounts, ordered by username (keyset: pass the last username as `after`)")
  @(Returns(200, Array).Of(AccountView))
  @Returns(400, ErrorEnvelope)
  list(@Query() query: AccountListQuery): Promise<AccountView[]> {
    return this.auth.listAccounts(query.limit, query.after);
  }

  @Post("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Create an account")
  @Status(201, CreatedId)
  @Returns(400, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("username_taken"))
  async create(@Body() body: AccountCreate): Promise<CreatedId> {
    const id = await this.auth.createAccount({ username: body.username, password: body.password, role: body.role, scope: body.scope ?? "All" });
    return { id };
  }

  @Get("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("One account")
  @Returns(200, AccountView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<AccountView> {
    return this.auth.getAccount(id);
  }

  @Put("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Replace an account's role and scope, optionally its password")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("last_admin"))
  async update(@PathParams("id") @Format("uuid") id: string, @Body() body: AccountUpdate, @Context() ctx: PlatformContext): Promise<void> {
    await this.auth.updateAccount(id, body);
    ctx.response.status(204);
  }

  @Delete("/:id")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Delete an account and end its sessions")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("last_admin"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.auth.deleteAccount(id);
    ctx.response.status(204);
  }
}
