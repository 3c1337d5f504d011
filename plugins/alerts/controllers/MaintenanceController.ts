import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Description, Format, Get, Post, Put, Returns, Summary, Status } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, sendPage, Permission, ReturnsPage, CallerScope, type Scope, Query } from "../../../core/index.js";
import {
  ActiveMaintenanceWindow,
  MaintenanceListQuery,
  MaintenanceWindowCreate,
  MaintenanceWindowView,
  ActiveWindowsQuery,
} from "../models/MaintenanceModels.js";
import { MaintenanceService } from "../services/MaintenanceService.js";

@Controller("/maintenance-windows")
export class MaintenanceController {
  @Inject(MaintenanceService)
  private windows: MaintenanceService;

  @Post("/")
  @Permission("ManageMaintenance")
  @Summary("Create a maintenance window: one-off (starts_at, ends_at) or recurring (recurrence), for nodes or folders")
  @Description(
    [
      'Exactly one form: starts_at + ends_at (RFC 3339; ends_at after starts_at and in the future; [starts_at, ends_at)), or recurrence {kind daily|weekly, weekdays (weekly only, 0 = Sunday … 6 = Saturday), start "HH:MM", duration_mins, time_zone (IANA)}.',
      "A recurring occurrence starts at `start` wall-clock time in time_zone on each day (or listed local weekday) and lasts duration_mins of elapsed time, across daylight-saving changes: a start in the spring-forward gap begins that far past the gap, one in the repeated autumn hour at its first occurrence.",
      "target_ids: nodes or folders (a folder covers everything beneath it) the caller can see, else 400 unknown_reference. A folder is known through the nodes filed beneath it.",
    ].join("\n\n"),
  )
  @Status(201, CreatedId)
  @Returns(400, ErrorEnvelope)
  async create(@Body() body: MaintenanceWindowCreate, @CallerScope() scope: Scope): Promise<CreatedId> {
    const id = await this.windows.create(body, scope);
    return { id };
  }

  @Get("/")
  @Permission("read")
  @Summary("Maintenance windows the caller can see (every target visible), newest first; the next page via ?cursor= from the X-Next-Cursor header")
  @ReturnsPage(MaintenanceWindowView)
  @Returns(400, ErrorEnvelope)
  async list(@CallerScope() scope: Scope, @Context() ctx: PlatformContext, @Query() query: MaintenanceListQuery): Promise<MaintenanceWindowView[]> {
    return sendPage(ctx, await this.windows.list(query, scope));
  }

  @Get("/active")
  @Permission("read")
  @Summary("The visible windows active at an instant, each with the occurrence that covers it")
  @(Returns(200, Array).Of(ActiveMaintenanceWindow))
  @Returns(400, ErrorEnvelope)
  active(@CallerScope() scope: Scope, @Query() query: ActiveWindowsQuery): Promise<ActiveMaintenanceWindow[]> {
    return this.windows.activeAt(query.at, scope);
  }

  @Get("/:id")
  @Permission("read")
  @Summary("One maintenance window")
  @Returns(200, MaintenanceWindowView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  get(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<MaintenanceWindowView> {
    return this.windows.get(id, scope);
  }

  @Put("/:id")
  @Permission("ManageMaintenance")
  @Summary("Replace a maintenance window (full document, the rules of create); its author and creation time stay")
  @Description(
    "404 when the window does not exist or the caller cannot see every one of its current targets; the new targets must be visible too (else 400 unknown_reference). The engine applies the change within its maintenance refresh.",
  )
  @Returns(200, MaintenanceWindowView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: MaintenanceWindowCreate, @CallerScope() scope: Scope): Promise<MaintenanceWindowView> {
    return this.windows.replace(id.toLowerCase(), body, scope);
  }

  @Delete("/:id")
  @Permission("ManageMaintenance")
  @Summary("Delete a maintenance window")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    await this.windows.remove(id, scope);
    ctx.response.status(204);
  }
}
