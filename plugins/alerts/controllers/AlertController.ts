import { Controller, Inject } from "@tsed/di";
import { Get, Post, Returns, Summary, Description } from "@tsed/schema";
import { FastJson, Body, ErrorEnvelope, Permission, CallerScope, type Scope, Query } from "../../../core/index.js";
import { AckRequest, AckResult, ActiveAlertView, AlertListQuery, BulkAckRequest, BulkAckResult } from "../models/AlertModels.js";
import { AckService } from "../services/AckService.js";
import { ActiveAlertService } from "../services/ActiveAlertService.js";

@Controller("/alerts")
export class AlertController {
  @Inject(ActiveAlertService)
  private active: ActiveAlertService;

  @Inject(AckService)
  private acks: AckService;

  @Get("/")
  @Permission("read")
  @Summary("Active alerts (open incidents) the caller can see, each with its ack state; worst severity first, then newest")
  @Description(
    "Node incidents are listed when the node is filed beneath one of the caller's folders; incidents of pools and netcloud organizations (no folder) only for scope All. With folder_id, only the incidents of nodes filed in that folder or beneath it (404 when the folder is unknown or outside the caller's scope).",
  )
  @(Returns(200, Array).Of(ActiveAlertView))
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  @FastJson()
  list(@CallerScope() scope: Scope, @Query() query: AlertListQuery): Promise<ActiveAlertView[]> {
    return this.active.list(scope, query.folder_id);
  }

  @Post("/ack")
  @Permission("AckAlerts")
  @Summary("Acknowledge the open incidents of a subject, or clear their acknowledgement (clear: true); the change is broadcast")
  @Description(
    [
      'Name the subject with `node` (uuid) or a readable `subject`: "pool:<pool name>", "netcloud_org:<organization name>" or "node:<uuid>". Neither (or both) answers 400.',
      "Without check, metric, ifindex or row every open incident of the subject is addressed; each given field narrows the selection (check: the rule or liveness check id; metric: exact name; ifindex: one port; row: one table row).",
      "`clear` false or absent records the ack on each selected incident at its current severity (by the caller, now, with `note`), replacing an earlier ack; `clear: true` removes it instead. An incident's ack applies to every transition of that incident at that severity (history rows show it in `acked`).",
      "404 when the node does not exist or lies outside the caller's folder scope, and for pool or organization subjects unless the caller has scope All and the subject is known.",
      'The change is broadcast on the Socket.IO channel `alerts.acks` as event `alerts.ack` (the answer plus `action` "recorded"/"cleared", `subject_kind`, `node`, `subject_name`, `by`, `at`), to sockets whose scope covers the node\'s folder.',
    ].join("\n\n"),
  )
  @Returns(200, AckResult)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  ack(@Body() body: AckRequest, @CallerScope() scope: Scope): Promise<AckResult> {
    return this.acks.ack(body, scope);
  }

  @Post("/ack/bulk")
  @Permission("AckAlerts")
  @Summary("Acknowledge (or clear) several active alerts by id with one note; one answer per id")
  @Description(
    [
      "ids are the ids of GET /alerts (1 to 1000). Each id the caller can see (as GET /alerts shows it) has its ack recorded at its current severity (by the caller, now, with note), replacing an earlier ack, or cleared with `clear: true`; ids that are closed since, unknown or outside the caller's scope answer `not_found` in their item (never a 404 for the whole request).",
      "One transaction. The change is broadcast like POST /alerts/ack: one event `alerts.ack` on `alerts.acks` per subject (node, pool or organization), with the incidents of that subject that changed.",
    ].join("\n\n"),
  )
  @Returns(200, BulkAckResult)
  @Returns(400, ErrorEnvelope)
  bulk(@Body() body: BulkAckRequest, @CallerScope() scope: Scope): Promise<BulkAckResult> {
    return this.acks.bulk(body, scope);
  }
}
