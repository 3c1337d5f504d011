import { Controller, Inject } from "@tsed/di";
import { PathParams, QueryParams } from "@tsed/platform-params";
import { Description, Enum, Format, Get, Integer, Maximum, MaxLength, Minimum, Required, Returns, Summary } from "@tsed/schema";
import { DashboardRead, ErrorEnvelope, Permission, SkeletonRead, CallerScope, type Scope } from "../../../core/index.js";
import {
  HISTORY_DESCRIPTION,
  INTERFACE_TOP_AGG_NAMES,
  INTERFACE_TOP_DESCRIPTION,
  INTERFACE_TOP_METRIC_NAMES,
  InterfaceTopResult,
  type InterfaceTopAgg,
  type InterfaceTopMetric,
  MetricHistory,
  NodeInterfaceView,
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
  interfaceTop(
    @CallerScope() scope: Scope,
    // Declared `string` (a union alias would emit Object as the parameter's type metadata and change how it is read).
    @QueryParams("metric") @Required() @Enum(...INTERFACE_TOP_METRIC_NAMES) metric: string,
    @QueryParams("agg") @Enum(...INTERFACE_TOP_AGG_NAMES) @Description("Default latest") agg?: string,
    @QueryParams("limit") @Integer() @Description("Clamped to 1..100; default 10") limit?: number,
  ): Promise<InterfaceTopResult> {
    // The enums are the only check of metric and agg (the spec names no code for them): a value outside is 400 validation_failed.
    return this.metrics.interfaceTop(metric as InterfaceTopMetric, agg as InterfaceTopAgg | undefined, limit, scope);
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
    @QueryParams("from") @MaxLength(64) @Description("RFC 3339 or Unix seconds; default one hour before to") from?: string,
    @QueryParams("to") @MaxLength(64) @Description("RFC 3339 or Unix seconds; default now") to?: string,
    @QueryParams("ifindex") @Integer() @Minimum(0) @Maximum(2147483647) ifindex?: number,
    @QueryParams("row") @Integer() @Minimum(0) @Maximum(2147483647) row?: number,
    @QueryParams("step") @Integer() @Minimum(1) @Maximum(86400) @Description("Bucket width in seconds; absent = raw samples") step?: number,
  ): Promise<MetricHistory> {
    return this.metrics.history(id, metric, { from, to, ifindex, row, step }, scope);
  }
}
