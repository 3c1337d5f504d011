import { Controller, Inject } from "@tsed/di";
import { QueryParams } from "@tsed/platform-params";
import { Description, Enum, Format, Get, Integer, MaxLength, Maximum, Minimum, Returns, Summary } from "@tsed/schema";
import { ErrorEnvelope, Permission, SkeletonRead, CallerScope, type Scope } from "../../../core/index.js";
import { AlertHistoryRow, AlertTransitionView, CalendarBucket, TopAlertNodes } from "../models/HistoryModels.js";
import { HistoryService } from "../services/HistoryService.js";

@Controller("/alerts")
export class HistoryController {
  @Inject(HistoryService)
  private history: HistoryService;

  @Get("/history")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Alert history rows, newest first by (recorded_at, id); keyset paging with before (+ before_id)")
  @Description(
    [
      "Next page: before = the last row's recorded_at exactly as received (microseconds) and before_id = its id. before alone returns rows strictly before that instant.",
      "Folder-scoped callers see the rows of nodes filed beneath their folders; rows of pools and netcloud organizations only with scope All.",
      "400 validation_failed: a bad cursor (before not RFC 3339, before_id not a uuid or without before), bound (limit, since, until, since after until), severity or state token. 404: node_id or group_id outside the caller's scope.",
    ].join("\n\n"),
  )
  @(Returns(200, Array).Of(AlertHistoryRow))
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  list(
    @CallerScope() scope: Scope,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(1000) @Description("1 to 1000, default 100") limit: number = 100,
    @QueryParams("before") @MaxLength(64) @Description("Keyset cursor: the last row's recorded_at (RFC 3339)") before?: string,
    @QueryParams("before_id")
    @Format("uuid")
    @Description("Keyset cursor second half: the last row's id; send with before; omitted = strictly before that instant")
    beforeId?: string,
    @QueryParams("since") @MaxLength(64) @Description("recorded_at at or after (RFC 3339)") since?: string,
    @QueryParams("until") @MaxLength(64) @Description("recorded_at at or before (RFC 3339)") until?: string,
    @QueryParams("severity") @MaxLength(200) @Description("Comma-separated info, warning, critical; empty = all; an unknown token is 400") severity?: string,
    @QueryParams("state")
    @MaxLength(200)
    @Description("Comma-separated ok, warning, critical, unknown, unreachable, maintenance; empty = all; an unknown token is 400")
    state?: string,
    @QueryParams("resolved") @Enum("true", "false") @Description("Boolean: false = fires only; true = clears only") resolved?: string,
    @QueryParams("acked")
    @Enum("true", "false")
    @Description("Boolean: true = rows of acknowledged incidents (incident key + severity); false = of the others")
    acked?: string,
    @QueryParams("metric") @MaxLength(200) @Description("Case-insensitive substring of the metric name; liveness rows (no metric) never match") metric?: string,
    @QueryParams("node_id") @Format("uuid") @Description("One node's rows; rows of other subjects are excluded") nodeId?: string,
    @QueryParams("node_q") @MaxLength(255) @Description("Case-insensitive substring of the node's current name (inventory)") nodeQ?: string,
    @QueryParams("group_id") @Format("uuid") @Description("Rows of nodes filed in that folder or anywhere beneath it (current filing)") groupId?: string,
  ): Promise<AlertHistoryRow[]> {
    return this.history.history(
      {
        limit,
        before,
        before_id: beforeId,
        since,
        until,
        severity,
        state,
        resolved,
        acked,
        metric,
        node_id: nodeId,
        node_q: nodeQ,
        group_id: groupId,
      },
      scope,
    );
  }

  @Get("/calendar")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Fires per weekday × hour (UTC) over the last `days` days; only non-empty cells; empty when no history")
  @(Returns(200, Array).Of(CalendarBucket))
  @Returns(400, ErrorEnvelope)
  calendar(
    @CallerScope() scope: Scope,
    @QueryParams("days") @Integer() @Minimum(1) @Maximum(366) @Description("Days back from now, 1 to 366, default 28") days: number = 28,
  ): Promise<CalendarBucket[]> {
    return this.history.calendar(days, scope);
  }

  @Get("/top-nodes")
  @Permission("read")
  @SkeletonRead({ entries: [], partial: false })
  @Summary("Nodes with the most fires within the window, highest first; partial for folder-scoped callers")
  @Returns(200, TopAlertNodes)
  @Returns(400, ErrorEnvelope)
  topNodes(
    @CallerScope() scope: Scope,
    @QueryParams("window")
    @Integer()
    @Minimum(60)
    @Maximum(31622400)
    @Description("Seconds back from now, 60 to 31622400 (366 days), default 86400")
    window: number = 86400,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(100) @Description("1 to 100, default 10") limit: number = 10,
  ): Promise<TopAlertNodes> {
    return this.history.topNodes(window, limit, scope);
  }

  @Get("/transitions")
  @Permission("read")
  @SkeletonRead([])
  @Summary("The latest fires and resolutions (history rows with node names), newest first; no cursor")
  @(Returns(200, Array).Of(AlertTransitionView))
  @Returns(400, ErrorEnvelope)
  transitions(
    @CallerScope() scope: Scope,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(100) @Description("1 to 100, default 12") limit: number = 12,
  ): Promise<AlertTransitionView[]> {
    return this.history.transitions(limit, scope);
  }
}
