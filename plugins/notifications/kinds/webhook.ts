/**
 * `webhook`: POSTs the whole alert as JSON (plus `event`, `subject`, and `test: true` on a test send) with undici.
 * Optional bearer token. With an HMAC key, each request carries `X-NMS-Timestamp` (Unix seconds) and
 * `X-NMS-Signature: sha256=<hex of HMAC-SHA256(key, timestamp + "." + body)>`; receivers verify as
 * docs/notifications.md shows. `Idempotency-Key` is the delivery id: a repeat after a lost answer carries the same one.
 */
import { createHmac } from "node:crypto";
import { request } from "undici";
import type { ChannelKind, OutboundNotification } from "../contract.js";
import { idJsonTemplates } from "../lib/builtinTemplates.js";
import { checkHttpUrl, httpFailure, networkFailure } from "./http.js";

/** The signature header a receiver checks: HMAC-SHA256 over `${timestamp}.${body}`, hex, prefixed `sha256=`. */
export function webhookSignature(key: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", key).update(`${timestamp}.${body}`).digest("hex")}`;
}

export function webhookBody(n: OutboundNotification): string {
  return JSON.stringify({ ...n.alert, event: n.event, subject: n.subject, ...(n.test ? { test: true } : {}) });
}

export const webhookKind: ChannelKind = {
  kind: "webhook",
  description: "POST the whole alert as JSON to a URL; optional bearer token and HMAC-SHA256 signature",
  configSchema: {
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: {
      url: { type: "string", pattern: "^https?://[^\\s]+$", maxLength: 2048 },
      bearer_token: { type: ["string", "null"], minLength: 1, maxLength: 4096 },
      hmac_key: { type: ["string", "null"], minLength: 16, maxLength: 4096 },
    },
  },
  secretFields: ["bearer_token", "hmac_key"],
  validate(config) {
    checkHttpUrl(config.url, " (use bearer_token or hmac_key)");
  },
  opensIncidents: false,
  builtinTemplates: idJsonTemplates(),
  async send(n, channel, signal) {
    const body = webhookBody(n);
    const headers: Record<string, string> = { "content-type": "application/json", "idempotency-key": n.idempotencyKey, "x-nms-dedup-key": n.dedupKey };
    if (typeof channel.config.bearer_token === "string") headers.authorization = `Bearer ${channel.config.bearer_token}`;
    if (typeof channel.config.hmac_key === "string") {
      const timestamp = String(Math.floor(Date.now() / 1000));
      headers["x-nms-timestamp"] = timestamp;
      headers["x-nms-signature"] = webhookSignature(channel.config.hmac_key, timestamp, body);
    }
    let res;
    try {
      res = await request(String(channel.config.url), { method: "POST", headers, body, signal, maxRedirections: 0 } as Parameters<typeof request>[1]);
    } catch (err) {
      throw networkFailure(err);
    }
    await res.body.dump().catch(() => undefined);
    if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode };
    throw httpFailure(res.statusCode, res.headers["retry-after"]);
  },
};
