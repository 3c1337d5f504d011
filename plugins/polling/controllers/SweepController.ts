import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Description, Format, Get, Post, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, sendPage, Permission, ReturnsPage, ScopeUnsupported, Query } from "../../../core/index.js";
import { SweepCreate, SweepDetail, SweepView, SweepListQuery } from "../models/SweepModels.js";
import { SweepService } from "../services/SweepService.js";

/**
 * Discovery sweeps. They use credentials (whose routes need scope All), so folder-scoped
 * callers are refused with scope_unsupported.
 */
@Controller("/discovery/sweeps")
export class SweepController {
  @Inject(SweepService)
  private sweeps: SweepService;

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Start a discovery sweep of an address range (runs as a job)")
  @Description(
    "Probes every address of `cidr` by SNMP (sysObjectID, sysDescr, sysName) on `port` with each candidate credential at once per address; the first " +
      "credential in the list's order that answers is recorded with what the device said and the classifier's proposed profile. At most 64 addresses " +
      "are probed at once, each probe waits `timeout_ms` with no retry. Progress streams on the Socket.IO channel polling.sweeps; " +
      "GET /discovery/sweeps/{id} shows it and the results as a discovery import body.",
  )
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(
    "validation_failed, invalid_cidr, too_many_addresses (more than pluginConfig.inventory.sweepSize), invalid_pool, unknown_reference (no such credential), invalid_credential (not snmp_v2c or snmp_v3)",
  ))
  async create(@Body() body: SweepCreate): Promise<CreatedId> {
    const id = await this.sweeps.create(body);
    return { id };
  }

  @Get("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Sweeps, newest first (keyset pagination); without their results")
  @ReturnsPage(SweepView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit), invalid_cursor"))
  async list(@Context() ctx: PlatformContext, @Query() query: SweepListQuery): Promise<SweepView[]> {
    return sendPage(ctx, await this.sweeps.list(query.limit, query.cursor));
  }

  @Get("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("A sweep's progress and results, with the results as a POST /discovery/import body")
  @Returns(200, SweepDetail)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string): Promise<SweepDetail> {
    return this.sweeps.get(id);
  }
}
