import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import {
  Body,
  CreatedId,
  ErrorEnvelope,
  MutationOk,
  Permission,
  ReturnsPage,
  ScopeUnsupported,
  sendPage,
  SkeletonRead,
  PageQuery,
  Query,
} from "../../../core/index.js";
import { IpamServerBody, IpamServerCreateBody, IpamServerView, IpamSiteView, SiteMappingsBody, SiteMappingView } from "../models/IpamModels.js";
import { ServerService } from "../services/ServerService.js";
import { SyncService } from "../services/SyncService.js";
import { IPAM_CONTEXT, type IpamContext } from "../context.js";

const BODY_CODES = "validation_failed, invalid_base_url, invalid_ca_cert";

/**
 * IPAM servers. Writes need ManageConfig, reads `read`; every route refuses folder-scoped callers (403
 * scope_unsupported): a server and the overlaps it feeds span the whole tree.
 */
@Controller("/ipam/servers")
export class ServerController {
  @Inject(ServerService)
  private servers: ServerService;

  @Inject(SyncService)
  private syncs: SyncService;

  @Inject(IPAM_CONTEXT)
  private ctx: IpamContext;

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Add an IPAM server (its token is sealed and never answered); its first sync starts within a minute")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(BODY_CODES))
  async create(@Body() body: IpamServerCreateBody): Promise<CreatedId> {
    const id = await this.servers.create(body);
    return { id };
  }

  @Get("/")
  @Permission("read")
  @ScopeUnsupported()
  @SkeletonRead([])
  @Summary("IPAM servers by name (keyset pagination); tokens are never answered")
  @ReturnsPage(IpamServerView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<IpamServerView[]> {
    return sendPage(ctx, await this.servers.list(page.limit, page.cursor));
  }

  @Get("/:id")
  @Permission("read")
  @ScopeUnsupported()
  @Summary("One IPAM server with its sync status")
  @Returns(200, IpamServerView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  get(@PathParams("id") @Format("uuid") id: string): Promise<IpamServerView> {
    return this.servers.get(id);
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace an IPAM server (full document): site_id_field omitted clears it; token omitted or null keeps it; ca_cert_pem absent keeps, null clears")
  @Returns(200, IpamServerView)
  @(Returns(400, ErrorEnvelope).Description(`${BODY_CODES}, token_required_for_new_address`))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: IpamServerBody): Promise<IpamServerView> {
    return this.servers.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete an IPAM server with its synced sites, prefixes and site mappings (folders keep the ranges they had)")
  @Returns(204)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.servers.remove(id);
    ctx.response.status(204);
  }

  @Post("/:id/sync")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Start a sync of this server now (an ipam.sync job); its outcome shows in the server's status")
  @Returns(202, MutationOk)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async syncNow(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<MutationOk> {
    await this.servers.row(id);
    await this.ctx.jobs.now("sync", { id });
    ctx.response.status(202);
    return { ok: true };
  }

  @Get("/:id/sites")
  @Permission("read")
  @ScopeUnsupported()
  @Summary("The sites of the server's last sync, by name (keyset pagination), with their prefix count and mapped folder")
  @ReturnsPage(IpamSiteView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async sites(@Context() ctx: PlatformContext, @PathParams("id") @Format("uuid") id: string, @Query() page: PageQuery): Promise<IpamSiteView[]> {
    return sendPage(ctx, await this.servers.sites(id, page.limit, page.cursor));
  }

  @Get("/:id/site-mappings")
  @Permission("read")
  @ScopeUnsupported()
  @Summary("Which folder follows which IPAM site of this server")
  @(Returns(200, Array).Of(SiteMappingView))
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  mappings(@PathParams("id") @Format("uuid") id: string): Promise<SiteMappingView[]> {
    return this.servers.mappings(id);
  }

  @Put("/:id/site-mappings")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace the server's site -> folder mapping; each mapped folder's ip_ranges are set to its site's prefixes now and after every sync")
  @(Returns(200, Array).Of(SiteMappingView))
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async setMappings(@PathParams("id") @Format("uuid") id: string, @Body() body: SiteMappingsBody): Promise<SiteMappingView[]> {
    const out = await this.servers.setMappings(id, body);
    await this.syncs.applyFolderRanges(id);
    return out;
  }
}
