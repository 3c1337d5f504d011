import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Format, Get, MaxLength, Post, Put, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, MutationOk, Permission, ReturnsPage, ScopeUnsupported, sendPage, PageQuery, Query } from "../../../core/index.js";
import { DiscoveredOrg, DiscoverBody, ImportSettingsBody, NetworkView, NetworkWatchBody, OrgAddBody, OrgAdded, OrgView } from "../models/OrgModels.js";
import { OrgService } from "../services/OrgService.js";

const KEY_CODES =
  "validation_failed, invalid_api_key (no key named), invalid_request (api_key and credential_id both sent), invalid_credential, invalid_base_url";
const UPSTREAM = "upstream_key_refused, upstream_failed (detail logged, never answered)";

/**
 * Netcloud organizations. Every route needs ManageConfig and an unrestricted account: organizations, their keys and
 * their networks belong to no folder (scope_unsupported).
 */
@Controller("/netcloud/orgs")
export class OrgController {
  @Inject(OrgService)
  private orgs: OrgService;

  @Post("/discover")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("The organizations a key reaches, each with already_added; read-only upstream, persists nothing")
  @(Returns(200, Array).Of(DiscoveredOrg))
  @(Returns(400, ErrorEnvelope).Description(KEY_CODES))
  @(Returns(502, ErrorEnvelope).Description(UPSTREAM))
  @(Returns(504, ErrorEnvelope).Description("upstream_timeout"))
  discover(@Body() body: DiscoverBody): Promise<DiscoveredOrg[]> {
    return this.orgs.discover(body);
  }

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Monitor an organization the key reaches; a second add of the same organization is skipped (200, skipped: true)")
  @(Returns(201, OrgAdded).Description("added; its first sync is queued"))
  @(Returns(200, OrgAdded).Description("skipped: the organization is monitored here already (under any key); nothing changed"))
  @(Returns(400, ErrorEnvelope).Description(`${KEY_CODES}, unknown_organization, too_many_organizations`))
  @(Returns(502, ErrorEnvelope).Description(UPSTREAM))
  @(Returns(504, ErrorEnvelope).Description("upstream_timeout"))
  async add(@Body() body: OrgAddBody, @Context() ctx: PlatformContext): Promise<OrgAdded> {
    const added = await this.orgs.add(body);
    ctx.response.status(added.skipped ? 200 : 201);
    return added;
  }

  @Get("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Organizations by name (keyset pagination); keys are never answered")
  @ReturnsPage(OrgView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<OrgView[]> {
    return sendPage(ctx, await this.orgs.list(page.limit, page.cursor));
  }

  @Get("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("One organization, with its import settings and last sync; the key is never answered")
  @Returns(200, OrgView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  get(@PathParams("id") @Format("uuid") id: string): Promise<OrgView> {
    return this.orgs.get(id);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Stop monitoring an organization (its key and device memory go; the nodes it imported stay)")
  @Returns(204)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.orgs.remove(id);
    ctx.response.status(204);
  }

  @Put("/:id/import-settings")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Import settings; they take effect at the next sync")
  @Returns(200, OrgView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_max_devices (outside 1 to 50000)"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  importSettings(@PathParams("id") @Format("uuid") id: string, @Body() body: ImportSettingsBody): Promise<OrgView> {
    return this.orgs.importSettings(id, body);
  }

  @Post("/:id/sync")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Queue a sync of the organization now (GET it for last_sync_at and last_sync_status)")
  @Returns(202, MutationOk)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async syncNow(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<MutationOk> {
    await this.orgs.syncNow(id);
    ctx.response.status(202);
    return { ok: true };
  }

  @Get("/:id/networks")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("The organization's networks with their watched flag, by name (keyset pagination)")
  @ReturnsPage(NetworkView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async networks(@Context() ctx: PlatformContext, @PathParams("id") @Format("uuid") id: string, @Query() page: PageQuery): Promise<NetworkView[]> {
    return sendPage(ctx, await this.orgs.networks(id, page.limit, page.cursor));
  }

  @Put("/:id/networks/:network_id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Watch a network (its devices are imported) or stop watching it; the flag survives syncs")
  @Returns(200, NetworkView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  setWatched(
    @PathParams("id") @Format("uuid") id: string,
    @PathParams("network_id") @MaxLength(255) networkId: string,
    @Body() body: NetworkWatchBody,
  ): Promise<NetworkView> {
    return this.orgs.setWatched(id, networkId, body.watched);
  }
}
