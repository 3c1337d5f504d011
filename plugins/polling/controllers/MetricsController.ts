import { Controller, Inject } from "@tsed/di";
import { PathParams, QueryParams } from "@tsed/platform-params";
import { Description, Format, Get, MaxLength, Returns, Summary } from "@tsed/schema";
import { DashboardRead, ErrorEnvelope, FastJson, Permission, SkeletonRead, CallerScope, Query, type Scope } from "../../../core/index.js";
import {
  HISTORY_DESCRIPTION,
  INTERFACE_TOP_DESCRIPTION,
  InterfaceTopQuery,
  InterfaceTopResult,
  type InterfaceTopAgg,
  type InterfaceTopMetric,
  MetricHistory,
  MetricHistoryQuery,
  NodeInterfaceView,
  NODE_SERIES_DESCRIPTION,
  NodeSeriesView,
} from "../models/MetricsModels.js";
import { MetricsService } from "../services/MetricsService.js";

@Controller("/")
export class MetricsController {
  @Inject(MetricsService)
  private metrics: MetricsService;

  @Get("/metrics/interface-top")
  @Permission("read")
  @DashboardRead()
  @SkeletonRead({ entries: [], partial: false })
  @Summary("Fleet interface top-N by throughput, bits/s, errors or discards")
  @Description(INTERFACE_TOP_DESCRIPTION)
  @Returns(200, InterfaceTopResult)
  @(Returns(400, ErrorEnvelope).Description("validation_failed: metric missing or outside the list, agg unsupported, limit not an integer"))
  @FastJson()
  interfaceTop(@CallerScope() scope: Scope, @Query() query: InterfaceTopQuery): Promise<InterfaceTopResult> {
    // The enums are the only check of metric and agg (the spec names no code for them): a value outside is 400 validation_failed.
    return this.metrics.interfaceTop(query.metric as InterfaceTopMetric, query.agg as InterfaceTopAgg | undefined, query.limit, scope);
  }

  @Get("/nodes/:id/interfaces")
  @Permission("read")
  @Summary("A node's interfaces with name, alias, configured speed, oper status and latest rates")
  @Description("Ordered by ifindex; rates are null where none was measured. 404 for a node that is missing or outside the caller's scope.")
  @(Returns(200, Array).Of(NodeInterfaceView))
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  nodeInterfaces(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<NodeInterfaceView[]> {
    return this.metrics.nodeInterfaces(id, scope);
  }

  @Get("/nodes/:id/metrics")
  @Permission("read")
  @Summary("The series a node has values for (metric, interface or row, name, latest value)")
  @Description(NODE_SERIES_DESCRIPTION)
  @(Returns(200, Array).Of(NodeSeriesView))
  @(Returns(400, ErrorEnvelope).Description("invalid_metric, validation_failed"))
  @Returns(404, ErrorEnvelope)
  nodeSeries(
    @CallerScope() scope: Scope,
    @PathParams("id") @Format("uuid") id: string,
    @QueryParams("metric") @MaxLength(100) @Description("Keep only this metric") metric?: string,
  ): Promise<NodeSeriesView[]> {
    return this.metrics.nodeSeries(id, metric, scope);
  }

  @Get("/nodes/:id/metrics/:metric/history")
  @Permission("read")
  @Summary("A node's series of one metric over a time range (raw samples or buckets)")
  @Description(HISTORY_DESCRIPTION)
  @Returns(200, MetricHistory)
  @(Returns(400, ErrorEnvelope).Description("invalid_range, too_many_points, invalid_metric, validation_failed"))
  @Returns(404, ErrorEnvelope)
  history(
    @CallerScope() scope: Scope,
    @PathParams("id") @Format("uuid") id: string,
    @PathParams("metric") @MaxLength(100) metric: string,
    @Query() query: MetricHistoryQuery,
  ): Promise<MetricHistory> {
    return this.metrics.history(id, metric, query, scope);
  }
}
