import { Controller, Inject } from "@tsed/di";
import { Context } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Delete, Get, Post, Returns, Summary, Status } from "@tsed/schema";
import { Body } from "../../http/params.js";
import { ErrorEnvelope } from "../../http/models.js";
import { AuthService } from "../AuthService.js";
import { Authenticated, PersonOnly, Public, WithoutStore } from "../decorators.js";
import { Identity, LoginRequest, SessionCreated } from "../models/AuthModels.js";
import { requireCaller } from "../scope.js";

@Controller("/auth")
export class SessionController {
  @Inject(AuthService)
  private auth: AuthService;

  @Post("/sessions")
  @Public()
  @Summary("Log in: open a session for a person")
  @Status(201, SessionCreated)
  @Returns(400, ErrorEnvelope)
  @(Returns(401, ErrorEnvelope).Description("Wrong username or password"))
  @(Returns(429, ErrorEnvelope).Description("Too many failed logins for this username or address"))
  async login(@Body() body: LoginRequest, @Context() ctx: PlatformContext): Promise<SessionCreated> {
    const address = (ctx.request.raw as { ip?: string }).ip ?? ctx.request.raw.socket?.remoteAddress ?? "unknown";
    return this.auth.login(body.username, body.password, address);
  }

  @Delete("/sessions/current")
  @Authenticated()
  @PersonOnly()
  @Summary("Log out: end the calling session")
  @Returns(204)
  async logout(@Context() ctx: PlatformContext): Promise<void> {
    await this.auth.logout(requireCaller());
    ctx.response.status(204);
  }

  @Get("/me")
  @Authenticated()
  @WithoutStore()
  @Summary("Who the bearer token belongs to")
  @Returns(200, Identity)
  me(): Identity {
    const c = requireCaller();
    return { kind: c.kind === "anonymous" ? null : c.kind, role: c.role, scope: c.scope, username: c.username };
  }
}
