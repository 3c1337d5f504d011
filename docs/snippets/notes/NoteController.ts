// notes/controllers/NoteController.ts
import { Body, CallerScope, CreatedId, DashboardRead, ErrorEnvelope, Permission, type Scope, SkeletonRead } from "nms-core";
import { Controller, Get, Inject, Post, Returns, Status, Summary } from "nms-core/tsed";
import { NoteCreate, NoteView } from "./NoteModels.js";
import { NoteService } from "./NoteService.js";

@Controller("/notes")
export class NoteController {
  @Inject(NoteService)
  private notes: NoteService;

  @Get("/")
  @Permission("read")
  @DashboardRead() // anonymous visitors may read it in public-dashboard mode
  @SkeletonRead([]) // skeleton mode answers [] instead of 503
  @Summary("Latest notes the caller may see")
  @(Returns(200, Array).Of(NoteView))
  list(@CallerScope() scope: Scope): Promise<NoteView[]> {
    return this.notes.list(scope);
  }

  @Post("/")
  @Permission("ManageConfig")
  @Summary("Add a note, optionally on a node")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference"))
  async create(@Body() body: NoteCreate, @CallerScope() scope: Scope): Promise<CreatedId> {
    return { id: await this.notes.create(body, scope) };
  }
}
