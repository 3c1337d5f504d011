import { Controller, Inject } from "@tsed/di";
import { PathParams } from "@tsed/platform-params";
import { Delete, Description, Get, MaxLength, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, MutationOk, Permission, SkeletonRead, CallerScope, type Scope } from "../../../core/index.js";
import { AnalysisScheduleBody, AnalysisScheduleView } from "../models/AnalysisModels.js";
import { ScheduleService } from "../services/ScheduleService.js";

const BODY_400 = "validation_failed, unknown_tool, invalid_params, invalid_schedule, invalid_timezone, too_many_schedules (create)";

/** Schedules of analysis runs (the bundle's analysis_schedule record plus timezone). */
@Controller("/analysis/schedules")
export class ScheduleController {
  @Inject(ScheduleService)
  private schedules: ScheduleService;

  @Get("/")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Analysis schedules the caller may see, oldest first, with their next run")
  @(Returns(200, Array).Of(AnalysisScheduleView))
  list(@CallerScope() scope: Scope): Promise<AnalysisScheduleView[]> {
    return this.schedules.list(scope);
  }

  @Post("/")
  @Permission("ManageConfig")
  @Summary("Create a schedule: a tool run daily, weekly or monthly at at_hour:at_minute in its timezone")
  @Description(
    "weekly needs day_of_week (0 = Sunday), monthly day_of_month (a shorter month runs on its last day); another frequency ignores them (400 invalid_schedule when missing).",
  )
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description(BODY_400))
  @(Returns(404, ErrorEnvelope).Description("not_found: scope_id names no folder or node the caller may see"))
  @(Returns(413, ErrorEnvelope).Description("document_too_large"))
  async create(@Body() body: AnalysisScheduleBody, @CallerScope() scope: Scope): Promise<CreatedId> {
    const id = await this.schedules.create(body, scope);
    return { id };
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One schedule")
  @Returns(200, AnalysisScheduleView)
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  get(@PathParams("id") @MaxLength(64) id: string, @CallerScope() scope: Scope): Promise<AnalysisScheduleView> {
    return this.schedules.get(id, scope);
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @Summary("Replace a schedule (whole body); its next run is recomputed")
  @Returns(200, MutationOk)
  @(Returns(400, ErrorEnvelope).Description(BODY_400))
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  @(Returns(413, ErrorEnvelope).Description("document_too_large"))
  async update(@PathParams("id") @MaxLength(64) id: string, @Body() body: AnalysisScheduleBody, @CallerScope() scope: Scope): Promise<MutationOk> {
    await this.schedules.update(id, body, scope);
    return { ok: true };
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @Summary("Delete a schedule (its past runs and findings stay)")
  @Returns(200, MutationOk)
  @(Returns(404, ErrorEnvelope).Description("not_found"))
  async remove(@PathParams("id") @MaxLength(64) id: string, @CallerScope() scope: Scope): Promise<MutationOk> {
    await this.schedules.remove(id, scope);
    return { ok: true };
  }
}
