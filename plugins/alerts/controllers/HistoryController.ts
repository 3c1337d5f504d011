import { Controller, Inject } from "@tsed/di";

import { Description, Get, Returns, Summary } from "@tsed/schema";
import { ErrorEnvelope, FastJson, Permission, Query, SkeletonRead, CallerScope, type Scope } from "../../../core/index.js";
import {
  AlertHistoryRow,
  AlertTransitionView,
  CalendarBucket,
  HistoryQuery,
  TopAlertNodes,
  CalendarQuery,
  TopNodesQuery,
  TransitionsQuery,
} from "../models/HistoryModels.js";
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
  @FastJson()
  list(@CallerScope() scope: Scope, @Query() query: HistoryQuery): Promise<AlertHistoryRow[]> {
    return this.history.history(query, scope);
  }

  @Get("/calendar")
  @Permission("read")
  @SkeletonRead([])
  @Summary("Fires per weekday × hour (UTC) over the last `days` days; only non-empty cells; empty when no history")
  @(Returns(200, Array).Of(CalendarBucket))
  @Returns(400, ErrorEnvelope)
  calendar(@CallerScope() scope: Scope, @Query() query: CalendarQuery): Promise<CalendarBucket[]> {
    return this.history.calendar(query.days, scope);
  }

  @Get("/top-nodes")
  @Permission("read")
  @SkeletonRead({ entries: [], partial: false })
  @Summary("Nodes with the most fires within the window, highest first; partial for folder-scoped callers")
  @Returns(200, TopAlertNodes)
  @Returns(400, ErrorEnvelope)
  topNodes(@CallerScope() scope: Scope, @Query() query: TopNodesQuery): Promise<TopAlertNodes> {
    return this.history.topNodes(query.window, query.limit, scope);
  }

  @Get("/transitions")
  @Permission("read")
  @SkeletonRead([])
  @Summary("The latest fires and resolutions (history rows with node names), newest first; no cursor")
  @(Returns(200, Array).Of(AlertTransitionView))
  @Returns(400, ErrorEnvelope)
  @FastJson()
  transitions(@CallerScope() scope: Scope, @Query() query: TransitionsQuery): Promise<AlertTransitionView[]> {
    return this.history.transitions(query.limit, scope);
  }
}
