// notes/controllers/NoteController.ts
import { Body, CreatedId, DashboardRead, ErrorEnvelope, Permission, SkeletonRead } from "nms-core";
import { Context, Controller, Get, Inject, Post, Returns, Summary, type PlatformContext } from "nms-core/tsed";
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
  list(): Promise<NoteView[]> {
    return this.notes.list();
  }

  @Post("/")
  @Permission("ManageConfig")
  @Summary("Add a note, optionally on a node")
  @Returns(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, unknown_reference"))
  async create(@Body() body: NoteCreate, @Context() ctx: PlatformContext): Promise<CreatedId> {
    const id = await this.notes.create(body);
    ctx.response.status(201);
    return { id };
  }
}
