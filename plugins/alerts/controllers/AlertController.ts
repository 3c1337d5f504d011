import { Controller, Inject } from "@tsed/di";
import { Get, Post, Returns, Summary, Description } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, CallerScope, type Scope } from "../../../core/index.js";
import { AckRequest, AckResult, ActiveAlertView } from "../models/AlertModels.js";
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
    "Node incidents are listed when the node is filed beneath one of the caller's folders; incidents of pools and netcloud organizations (no folder) only for scope All.",
  )
  @(Returns(200, Array).Of(ActiveAlertView))
  list(@CallerScope() scope: Scope): Promise<ActiveAlertView[]> {
    return this.active.list(scope);
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
}
