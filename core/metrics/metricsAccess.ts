import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { KernelConfig } from "../config/Config.js";

/** The least length of `metrics.token` (a guessable token would open the endpoint to anyone who tries). */
export const METRICS_TOKEN_MIN_LENGTH = 16;

export type MetricsDecision = { allow: true } | { allow: false; status: 401 | 403 | 404; code: string; message: string; headers?: Record<string, string> };

/** Throws (a sentence naming the key) when the metrics settings cannot work; called at boot. */
export function checkMetricsConfig(metrics: KernelConfig["metrics"]): void {
  if (metrics.access !== "token") return;
  if (typeof metrics.token !== "string" || metrics.token.length < METRICS_TOKEN_MIN_LENGTH) {
    throw new Error(
      `metrics.access is "token" but metrics.token (NMS_METRICS_TOKEN) is ${metrics.token ? `shorter than ${METRICS_TOKEN_MIN_LENGTH} characters` : "not set"}`,
    );
  }
}

/** Whether an address is the caller's own machine: 127.0.0.0/8, ::1, or 127.x in IPv4-mapped form. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase().replace(/^::ffff:/, "");
  if (isIP(a) === 4) return a.startsWith("127.");
  return a === "::1" || a === "0:0:0:0:0:0:0:1";
}

/** Compares in time independent of where the two differ (both hashed first, so their lengths leak nothing either). */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Who may read GET /metrics (config `metrics.access`): loopback callers only (the socket's address; forwarding
 * headers are not trusted), `Authorization: Bearer <metrics.token>`, anyone, or nobody (404, as for an unknown route).
 */
export function metricsAccess(metrics: KernelConfig["metrics"], remoteAddress: string | undefined, authorization: string | undefined): MetricsDecision {
  switch (metrics.access) {
    case "open":
      return { allow: true };
    case "off":
      return { allow: false, status: 404, code: "route_not_found", message: "No such route." };
    case "loopback":
      return isLoopback(remoteAddress)
        ? { allow: true }
        : { allow: false, status: 403, code: "metrics_loopback_only", message: "Metrics are served to callers on this machine only (metrics.access)." };
    case "token": {
      const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
      if (match && metrics.token && sameSecret(match[1]!, metrics.token)) return { allow: true };
      return {
        allow: false,
        status: 401,
        code: "unauthorized",
        message: "A valid metrics bearer token is required.",
        headers: { "WWW-Authenticate": 'Bearer realm="metrics"' },
      };
    }
    default:
      return { allow: false, status: 404, code: "route_not_found", message: "No such route." };
  }
}
