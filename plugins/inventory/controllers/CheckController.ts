import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Description, Format, Get, Put, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, CallerScope, type Scope } from "../../../core/index.js";
import { DnsCheckBody, DnsCheckView, UrlCheckBody, UrlCheckView } from "../models/CheckModels.js";
import { CheckService } from "../services/CheckService.js";

/** Per-node URL and DNS checks (one of each per node). A node outside the caller's folder scope answers 404 like a missing one. */
@Controller("/nodes")
export class CheckController {
  @Inject(CheckService)
  private checks: CheckService;

  @Get("/:id/url-check")
  @Permission("read")
  @Summary("The node's URL check")
  @Returns(200, UrlCheckView)
  @(Returns(404, ErrorEnvelope).Description("No such node, not visible to the caller, or the node has no URL check"))
  getUrlCheck(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<UrlCheckView> {
    return this.checks.getUrlCheck(id, scope);
  }

  @Put("/:id/url-check")
  @Permission("ManageConfig")
  @Summary("Create or replace the node's URL check")
  @Description("Replaces the whole check: an omitted field takes its default. json_extract paths are stored and returned exactly as sent.")
  @Returns(200, UrlCheckView)
  @(Returns(400, ErrorEnvelope).Description(
    "validation_failed; invalid_regex (body_match regex); invalid_json_path (a json_extract path that is not dot-separated names and indexes); unknown_reference (credential_id not a credential of kind http)",
  ))
  @(Returns(404, ErrorEnvelope).Description("No such node, or not visible to the caller"))
  putUrlCheck(@PathParams("id") @Format("uuid") id: string, @Body() body: UrlCheckBody, @CallerScope() scope: Scope): Promise<UrlCheckView> {
    return this.checks.putUrlCheck(id, body, scope);
  }

  @Delete("/:id/url-check")
  @Permission("ManageConfig")
  @Summary("Remove the node's URL check")
  @Returns(204)
  @(Returns(404, ErrorEnvelope).Description("No such node, not visible to the caller, or the node has no URL check"))
  async deleteUrlCheck(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    await this.checks.deleteUrlCheck(id, scope);
    ctx.response.status(204);
  }

  @Get("/:id/dns-check")
  @Permission("read")
  @Summary("The node's DNS check")
  @Returns(200, DnsCheckView)
  @(Returns(404, ErrorEnvelope).Description("No such node, not visible to the caller, or the node has no DNS check"))
  getDnsCheck(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<DnsCheckView> {
    return this.checks.getDnsCheck(id, scope);
  }

  @Put("/:id/dns-check")
  @Permission("ManageConfig")
  @Summary("Create or replace the node's DNS check")
  @Description("Replaces the whole check: an omitted field takes its default.")
  @Returns(200, DnsCheckView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (name, record_type, resolver_ip, a number outside its range)"))
  @(Returns(404, ErrorEnvelope).Description("No such node, or not visible to the caller"))
  putDnsCheck(@PathParams("id") @Format("uuid") id: string, @Body() body: DnsCheckBody, @CallerScope() scope: Scope): Promise<DnsCheckView> {
    return this.checks.putDnsCheck(id, body, scope);
  }

  @Delete("/:id/dns-check")
  @Permission("ManageConfig")
  @Summary("Remove the node's DNS check")
  @Returns(204)
  @(Returns(404, ErrorEnvelope).Description("No such node, not visible to the caller, or the node has no DNS check"))
  async deleteDnsCheck(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    await this.checks.deleteDnsCheck(id, scope);
    ctx.response.status(204);
  }
}
