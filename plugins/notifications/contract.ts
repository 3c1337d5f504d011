/**
 * The notifications plugin's contract: the channel-kind extension point (`notifications.kinds`) other plugins
 * contribute to, and what a kind receives and answers. Built-in kinds: webhook, email, pager, servicedesk. Also the
 * ReportDelivery token its manifest exports. Imports nothing of the plugin: its internals import from here.
 */
import type { ConfigSchema } from "../../core/index.js";
import type { AlertTransition } from "../alerts/contract.js";

/** The extension point a plugin contributes kinds to: `contributes: { [CHANNEL_KINDS_POINT]: [myKind] }` (and dependsOn notifications). */
export const CHANNEL_KINDS_POINT = "notifications.kinds";

/** The spec's notification lifecycle points. */
export const LIFECYCLE_POINTS = ["fire", "resolve", "suppress"] as const;
export type LifecyclePoint = (typeof LIFECYCLE_POINTS)[number];

/** A subject and body template (liquid); a null body means "the whole alert as JSON" (webhook, pager). */
export interface TemplateItem {
  subject: string;
  body: string | null;
}

/** One notification as a kind sends it: rendered text, the whole alert, and the keys a receiver dedups on. */
export interface OutboundNotification {
  event: LifecyclePoint;
  /** The whole alert (the alerts plugin's transition), as the webhook and pager bodies carry it. */
  alert: AlertTransition;
  subject: string;
  /** The rendered body, or null when the kind's body is the alert as JSON. */
  body: string | null;
  /** One per incident (the alert's incident key): pager dedup keys, servicedesk correlation. */
  dedupKey: string;
  /** One per delivery: sends are at least once, so receivers can drop a repeat. */
  idempotencyKey: string;
  /** A test send (`POST /notification-channels/{id}/test`). */
  test: boolean;
  /** What an earlier delivery of the same incident on this channel returned (a servicedesk record id), or null. */
  incidentRef: string | null;
}

/** A channel as a kind sees it: its config with the secrets unsealed (never logged, never put in an error). */
export interface ChannelForSend {
  id: string;
  name: string;
  config: Record<string, unknown>;
}

export interface SendOutcome {
  /** The receiver's HTTP status, or null (SMTP). */
  status: number | null;
  /** What later deliveries of this incident need (a servicedesk record id); undefined keeps what was there. */
  incidentRef?: string | null;
}

/**
 * A failed send. `message` is shown in the delivery log and in a test result: it must never contain the channel URL
 * or a secret (say "HTTP 503", "connection refused", "timeout"). `retryable` false ends the delivery at once.
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly errorClass: string,
    readonly options: { retryable: boolean; status?: number | null; retryAfterMs?: number | null } = { retryable: true },
  ) {
    super(message);
    this.name = "DeliveryError";
  }
}

/** A channel kind, contributed to `notifications.kinds`. */
export interface ChannelKind {
  /** `webhook`, `email`, … (lower-case identifier, unique). */
  kind: string;
  description: string;
  /** JSON schema of the channel's config (secret fields included); checked on create and update (400 invalid_channel_config). */
  configSchema: ConfigSchema;
  /** Config fields that are secrets: sealed at rest, never answered (the view says `has_<field>`), kept when omitted on update. */
  secretFields: readonly string[];
  /** Checks a schema cannot say; throws an Error whose message (a sentence, no secret) becomes the 400's message. */
  validate?(config: Record<string, unknown>): void;
  /** True when a send opens an incident on the far side (pager, servicedesk): a test send closes it again. */
  opensIncidents: boolean;
  /** The built-in templates of each lifecycle point. */
  builtinTemplates: Record<LifecyclePoint, TemplateItem>;
  /** Sends one notification; throws DeliveryError on failure. `signal` aborts it (timeout, shutdown). */
  send(n: OutboundNotification, channel: ChannelForSend, signal: AbortSignal): Promise<SendOutcome>;
}

/** A report as delivered through a channel. */
export interface ReportMessage {
  subject: string;
  text: string;
  attachments: { filename: string; contentType: string; content: Buffer }[];
}

/** A report through an email channel (the reports plugin's delivery); the token the manifest exports. */
export abstract class ReportDelivery {
  /**
   * Sends `message` through channel `channelId` (default timeout 60 s); throws DeliveryError (no channel, disabled,
   * a kind without attachments, SMTP failure).
   */
  abstract send(channelId: string, message: ReportMessage, signal?: AbortSignal): Promise<void>;
}
