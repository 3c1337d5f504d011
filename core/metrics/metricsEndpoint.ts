import type { IncomingMessage, ServerResponse } from "node:http";
import type { KernelConfig } from "../config/Config.js";
import type { Logger } from "../logging/Logger.js";
import { METRICS_CONTENT_TYPE, type KernelMetrics } from "./KernelMetrics.js";
import { metricsAccess } from "./metricsAccess.js";

export const METRICS_PATH = "/metrics";

function envelope(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * GET /metrics, outside /api/v1: the Prometheus text exposition of the kernel's, the plugins' and the process's
 * metrics, for the callers `metrics.access` lets in. Answers only this path; `next` gets everything else.
 */
export function metricsEndpoint(metrics: KernelMetrics, config: KernelConfig["metrics"], log: Logger) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const path = (req.url ?? "").split("?")[0]!.replace(/(.)\/+$/, "$1");
    if (path !== METRICS_PATH) return next();
    const decision = metricsAccess(config, req.socket.remoteAddress, req.headers.authorization);
    if (!decision.allow) return envelope(res, decision.status, decision.code, decision.message, decision.headers);
    if (req.method !== "GET" && req.method !== "HEAD") {
      return envelope(res, 405, "method_not_allowed", `${req.method} is not allowed here; use GET.`, { Allow: "GET, HEAD" });
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { "Content-Type": METRICS_CONTENT_TYPE, "Content-Length": Buffer.byteLength(text), "Cache-Control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        log.error("metrics scrape failed", { error: err });
        envelope(res, 500, "internal_error", "The metrics could not be collected.");
      },
    );
  };
}
