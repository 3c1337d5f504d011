import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Delete, Description, Format, Get, Post, Put, Returns, Status, Summary } from "@tsed/schema";
import { Body, CreatedId, ErrorEnvelope, Permission, ScopeUnsupported } from "../../../core/index.js";
import { TrapNameBody, TrapNameView } from "../models/TrapNameModels.js";
import { TrapNameService } from "../services/TrapNameService.js";

/** Names of trap and varbind OIDs: a built-in table of common MIB notifications (read-only) and the users' own. */
@Controller("/events/trap-names")
export class TrapNameController {
  @Inject(TrapNameService)
  private names: TrapNameService;

  @Get("/")
  @Permission("read")
  @Summary("Trap and varbind OID names: the built-in table (id null, builtin true) then the users' rows")
  @Description(
    "The event list's trap_name comes from these: a trap's OID matches a row exactly; a varbind's OID matches an object row exactly or " +
      "lies under it (shown as name.instance). A user row with a built-in OID takes precedence over the built-in name.",
  )
  @(Returns(200, Array).Of(TrapNameView))
  list(): Promise<TrapNameView[]> {
    return this.names.list();
  }

  @Post("/")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Name an OID")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed: oid not a dotted OID, name empty or too long, kind unknown"))
  @(Returns(409, ErrorEnvelope).Description("duplicate_oid: a user row names that OID already"))
  async create(@Body() body: TrapNameBody): Promise<CreatedId> {
    return { id: await this.names.create(body) };
  }

  @Put("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Replace a user's OID name (built-in rows are read-only)")
  @Returns(200, TrapNameView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @Returns(404, ErrorEnvelope)
  @(Returns(409, ErrorEnvelope).Description("duplicate_oid: another row names that OID"))
  replace(@PathParams("id") @Format("uuid") id: string, @Body() body: TrapNameBody): Promise<TrapNameView> {
    return this.names.replace(id, body);
  }

  @Delete("/:id")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Delete a user's OID name")
  @Returns(204)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  async remove(@PathParams("id") @Format("uuid") id: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.names.remove(id);
    ctx.response.status(204);
  }
}
