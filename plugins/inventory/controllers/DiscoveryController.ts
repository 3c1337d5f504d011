import { Controller, Inject } from "@tsed/di";
import { Description, Post, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, CallerScope, type Scope } from "../../../core/index.js";
import { DiscoveryImportBody, DiscoveryImportResult } from "../models/DiscoveryModels.js";
import { DiscoveryService } from "../services/DiscoveryService.js";

@Controller("/discovery")
export class DiscoveryController {
  @Inject(DiscoveryService)
  private discovery: DiscoveryService;

  @Post("/import")
  @Permission("ManageConfig")
  @Summary("Import discovered devices as nodes, in one transaction")
  @Description(
    "Creates a node per row unless a device node already stands at its address (an earlier row of the same request counts): created + skipped_existing equals the rows. " +
      "With file_by_prefix, rows without their own group_id go into the visible folder whose ip_ranges hold the address (the longest prefix wins; the request's group_id when none or a tie). " +
      "400 more nodes than one sweep (too_many_nodes), a blank name, an address that is not an IP, a binding id that is not a UUID or names nothing, a group_id no folder has; " +
      "403 out_of_scope when a folder-scoped caller leaves a row bound for the tree root (nothing is written).",
  )
  @Returns(200, DiscoveryImportResult)
  @Returns(400, ErrorEnvelope)
  import(@Body() body: DiscoveryImportBody, @CallerScope() scope: Scope): Promise<DiscoveryImportResult> {
    return this.discovery.import(body, scope);
  }
}
