import { Readable } from "node:stream";
import { Controller, Inject } from "@tsed/di";
import { Context, QueryParams } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Description, Get, Post, Returns, Summary } from "@tsed/schema";
import { Permission, ScopeUnsupported } from "../auth/decorators.js";
import { badRequest } from "../errors.js";
import { ErrorEnvelope } from "../http/models.js";
import { BundleService } from "./BundleService.js";
import { BundleDocument, BundleImportOutcome } from "./models.js";

function flag(value: unknown, name: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === true || value === "true" || value === "1") return true;
  if (value === false || value === "false" || value === "0") return false;
  throw badRequest("validation_failed", `${name} must be true or false.`);
}

/** The configuration bundle: a streamed export and a one-transaction import (docs/bundle.md). */
@Controller("/config/bundle")
export class BundleController {
  @Inject(BundleService)
  private bundles: BundleService;

  @Get("/")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Export the configuration bundle (no secrets: credentials, channel configs and ingest tokens stay here); streamed")
  @Returns(200, BundleDocument)
  @(Returns(413, ErrorEnvelope).Description("bundle_too_large: a table holds more rows than bundle.maxRows"))
  async export(@Context() ctx: PlatformContext): Promise<Readable> {
    const pieces = await this.bundles.export();
    ctx.response.setHeader("Content-Type", "application/json; charset=utf-8");
    ctx.response.setHeader("Content-Disposition", 'attachment; filename="config-bundle.json"');
    return Readable.from(pieces, { objectMode: false });
  }

  @Post("/import")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Import a configuration bundle in one transaction: merge (upsert by id) or replace (also delete rows the bundle does not name)")
  @Description("Query or body fields dry_run (report what would happen, write nothing) and mode (merge, the default, or replace).")
  @Returns(200, BundleImportOutcome)
  @(Returns(400, ErrorEnvelope).Description(
    "bundle_invalid, bundle_format_unsupported, bundle_version_unsupported, bundle_row_rejected (nothing imported), validation_failed",
  ))
  @(Returns(413, ErrorEnvelope).Description("bundle_too_large: an array holds more rows than bundle.maxRows, or the body is above the import limit"))
  async import(
    @Context() ctx: PlatformContext,
    @QueryParams("dry_run") dryRunQuery?: string,
    @QueryParams("mode") modeQuery?: string,
  ): Promise<BundleImportOutcome> {
    const body: unknown = (ctx.request.raw as { body?: unknown }).body;
    const b = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const dryRun = flag(dryRunQuery, "dry_run") ?? flag(b.dry_run, "dry_run") ?? false;
    const mode = modeQuery ?? b.mode ?? "merge";
    if (mode !== "merge" && mode !== "replace") throw badRequest("validation_failed", "mode must be merge or replace.");
    return this.bundles.import(body, { mode, dryRun });
  }
}
