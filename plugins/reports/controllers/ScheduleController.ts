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
  SkeletonRead,
  sendPage,
  CallerScope,
  type Scope,
  PageQuery,
  Query,
} from "../../../core/index.js";
import { ReportScheduleBody, ReportScheduleView } from "../models/ReportModels.js";
import { ScheduleService } from "../services/ScheduleService.js";

const BODY_CODES = "validation_failed, invalid_timezone, invalid_schedule, unknown_reference";

/** Report schedules. A schedule made by a folder-scoped account renders for that scope; such accounts see only theirs. */
@Controller("/reports/schedules")
export class ScheduleController {
  @Inject(ScheduleService)
  private schedules: ScheduleService;

  @Post("/")
  @Permission("ManageConfig")
  @Summary("Schedule a report definition: daily, weekly or monthly at a wall-clock time of an IANA zone")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(BODY_CODES))
  async create(@Body() body: ReportScheduleBody, @CallerScope() scope: Scope): Promise<CreatedId> {
    const id = await this.schedules.create(body, scope);
    return { id };
  }

  @Get("/")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Report schedules, oldest first (keyset pagination), with their next run")
  @ReturnsPage(ReportScheduleView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(@CallerScope() scope: Scope, @Context() ctx: PlatformContext, @Query() page: PageQuery): Promise<ReportScheduleView[]> {
    return sendPage(ctx, await this.schedules.list(page.limit, page.cursor, scope));
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One report schedule")
  @Returns(200, ReportScheduleView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  get(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<ReportScheduleView> {
    return this.schedules.get(id, scope);
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @Summary("Replace a report schedule (its next run is recomputed)")
  @Returns(200, MutationOk)
  @(Returns(400, ErrorEnvelope).Description(BODY_CODES))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async replace(@PathParams("id") @Format("uuid") id: string, @Body() body: ReportScheduleBody, @CallerScope() scope: Scope): Promise<MutationOk> {
    await this.schedules.replace(id, body, scope);
    return { ok: true };
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @Summary("Delete a report schedule")
  @Returns(204)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    await this.schedules.remove(id, scope);
    ctx.response.status(204);
  }
}
