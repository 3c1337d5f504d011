/**
 * A channel kind this plugin adds to the notifications plugin (its extension point `notifications.kinds`): `chat`
 * posts `{"text": <subject>}` to a chat's incoming webhook. The URL of such a webhook is a secret, so it is a secret
 * field: sealed at rest, never answered, kept when omitted on update.
 */
import { DeliveryError, type ChannelKind } from "nms-core/contracts/notifications";

const SUBJECT = "{{ alert.title }}{% if node %} ({{ node.name }}){% endif %}";

export const chatKind: ChannelKind = {
  kind: "chat",
  description: "post the alert's subject as {\"text\"} to a chat's incoming webhook (Slack or Mattermost style)",
  configSchema: {
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: { url: { type: "string", pattern: "^https?://", maxLength: 2048 } },
  },
  secretFields: ["url"],
  opensIncidents: false,
  builtinTemplates: {
    fire: { subject: `[{{ alert.severity | upcase }}] ${SUBJECT}`, body: null },
    resolve: { subject: `[RESOLVED] ${SUBJECT}`, body: null },
    suppress: { subject: `[SUPPRESSED] ${SUBJECT}`, body: null },
  },
  async send(n, channel, signal) {
    let res: Response;
    try {
      res = await fetch(String(channel.config.url), {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": n.idempotencyKey },
        body: JSON.stringify({ text: n.subject }),
        signal,
        redirect: "error",
      });
    } catch (err) {
      // The error's message may carry the URL: keep its class only.
      const timedOut = (err as Error).name === "TimeoutError" || (err as Error).name === "AbortError";
      throw new DeliveryError(timedOut ? "timeout" : "connection failed", timedOut ? "timeout" : "connect", { retryable: true });
    }
    await res.body?.cancel();
    if (res.ok) return { status: res.status };
    const retryable = res.status === 429 || res.status >= 500;
    const seconds = Number(res.headers.get("retry-after"));
    throw new DeliveryError(`HTTP ${res.status}`, "http", {
      retryable,
      status: res.status,
      retryAfterMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null,
    });
  },
};
