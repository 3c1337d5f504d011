/**
 * `pager`: an Events-API-v2-style paging service (the shape of PagerDuty's Events API v2, `POST /v2/enqueue`).
 *
 * - fire → `event_action: "trigger"`, resolve → `"resolve"`, both on `dedup_key` = the alert's incident key, so the
 *   receiver opens one incident per alert incident and closes that same one.
 * - suppress → nothing is sent (a muted or in-maintenance alert must not page anyone): `send` answers
 *   `{ status: null }` at once.
 * - `payload`: `summary` (the rendered subject, at most 1024 characters), `source` (`config.source`, else the node id,
 *   else "nms-core"), `severity` (critical | warning | info), `timestamp` (the transition's `recorded_at`) and
 *   `custom_details` (the whole alert, plus `test: true` on a test send).
 * - `Idempotency-Key` is the delivery id (a repeat after a lost answer carries the same one); the dedup key already
 *   makes a repeated trigger or resolve harmless on the far side.
 * - 200/202 delivered; 408, 429 and 5xx retryable (with `Retry-After`); other statuses (400 bad event or routing key,
 *   401, 403, 404) end the delivery. Errors never name the URL or the routing key.
 */
import { request } from "undici";
import type { ChannelKind, OutboundNotification } from "../contract.js";
import { idJsonTemplates } from "../lib/builtinTemplates.js";
import { checkHttpUrl, headerValue, httpFailure, networkFailure, sendSignal } from "./http.js";

/** PagerDuty's limit on `payload.summary`. */
export const PAGER_SUMMARY_MAX = 1024;

const SEVERITY: Record<string, "critical" | "warning" | "info"> = { critical: "critical", warning: "warning", info: "info" };

/** The event a notification sends, or null for a suppress (nothing is paged). */
export function pagerEvent(n: OutboundNotification, config: Record<string, unknown>): Record<string, unknown> | null {
  if (n.event === "suppress") return null;
  const summary = n.subject.length > PAGER_SUMMARY_MAX ? `${n.subject.slice(0, PAGER_SUMMARY_MAX - 1)}…` : n.subject;
  const source = typeof config.source === "string" && config.source !== "" ? config.source : (n.alert.node ?? "nms-core");
  return {
    routing_key: config.routing_key,
    event_action: n.event === "fire" ? "trigger" : "resolve",
    dedup_key: n.dedupKey,
    payload: {
      summary: summary === "" ? "(no subject)" : summary,
      source,
      severity: SEVERITY[n.alert.severity] ?? "warning",
      timestamp: n.alert.recorded_at,
      custom_details: { ...n.alert, ...(n.test ? { test: true } : {}) },
    },
  };
}

export const pagerKind: ChannelKind = {
  kind: "pager",
  description: "Page through an Events-API-v2-style service (PagerDuty Events API v2): trigger on fire, resolve on resolve, by dedup key",
  configSchema: {
    type: "object",
    additionalProperties: false,
    required: ["url", "routing_key"],
    properties: {
      url: { type: "string", pattern: "^https?://[^\\s]+$", maxLength: 2048, description: "The events endpoint, e.g. https://events.pagerduty.com/v2/enqueue" },
      routing_key: { type: "string", minLength: 1, maxLength: 256, pattern: "^\\S+$", description: "The integration's routing key (secret)" },
      source: { type: ["string", "null"], minLength: 1, maxLength: 255, default: null, description: "payload.source; null uses the node id" },
      timeout_ms: { type: "integer", minimum: 1000, maximum: 60000, default: 10000 },
    },
  },
  secretFields: ["routing_key"],
  validate(config) {
    checkHttpUrl(config.url);
  },
  opensIncidents: true,
  builtinTemplates: idJsonTemplates(),
  async send(n, channel, signal) {
    const event = pagerEvent(n, channel.config);
    if (!event) return { status: null };
    const body = JSON.stringify(event);
    const deadline = sendSignal(signal, typeof channel.config.timeout_ms === "number" ? channel.config.timeout_ms : 10000);
    let res;
    try {
      res = await request(String(channel.config.url), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", "idempotency-key": n.idempotencyKey },
        body,
        signal: deadline.signal,
      });
    } catch (err) {
      throw networkFailure(err, deadline.timedOut());
    }
    // The answer's status is what counts; its body (a short JSON status) is read and dropped.
    await res.body.dump().catch(() => undefined);
    if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode };
    throw httpFailure(res.statusCode, headerValue(res.headers, "retry-after"));
  },
};
