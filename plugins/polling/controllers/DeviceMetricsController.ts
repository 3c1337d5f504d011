import { Controller, Inject } from "@tsed/di";
import { Context } from "@tsed/platform-params";
import type { PlatformContext } from "@tsed/platform-http";
import { Description, Get, Returns, Summary } from "@tsed/schema";
import { CallerScope, Permission, type Scope } from "../../../core/index.js";
import { DeviceMetricsService, EXPOSITION_CONTENT_TYPE } from "../services/DeviceMetricsService.js";

@Controller("/")
export class DeviceMetricsController {
  @Inject(DeviceMetricsService)
  private devices: DeviceMetricsService;

  @Get("/metrics/devices")
  @Permission("read")
  @Summary("What the pollers measured, in the Prometheus exposition format, for Prometheus and Grafana")
  @Description(
    "The latest value of every series of the nodes the caller may see (folder scope applies), as gauges: interface traffic, utilisation, " +
      "errors, discards and status; CPU and storage; uptime, reachability and round-trip time; other polled metrics by name. Labels: node, " +
      "node_id, folder (names from the root, joined with /), and interface and ifindex, or row and row_name. At most " +
      "pluginConfig.polling.deviceMetricsMaxSeries series (nms_device_series_truncated says when some were left out). Scrape it with an API " +
      "token (a viewer token scoped to folders limits what Prometheus stores). docs/metrics.md#device-metrics lists the families.",
  )
  @(Returns(200, String).ContentType(EXPOSITION_CONTENT_TYPE))
  async exposition(@Context() ctx: PlatformContext, @CallerScope() scope: Scope): Promise<void> {
    // Streamed as it is read (a large fleet answers tens of MB), and sent here: Ts.ED's content negotiation would
    // answer plain text/plain, without the format's version. The headers go with the first chunk, so a failure before
    // it still answers with the error envelope.
    const res = ctx.response.raw;
    await this.devices.exposition(scope, async (chunk) => {
      if (!res.headersSent) {
        res.statusCode = 200;
        res.setHeader("Content-Type", EXPOSITION_CONTENT_TYPE);
      }
      // A scraper that went away: the rest is read and dropped (the cursor's transaction ends normally).
      if (res.destroyed) return;
      if (!res.write(chunk))
        await new Promise<void>((resolve) => {
          res.once("drain", () => resolve());
          res.once("close", () => resolve());
        });
    });
    res.end();
  }
}
