import { CollectionOf, Description, Enum, Format, Integer, Maximum, MaxLength, Minimum, Nullable, Required } from "@tsed/schema";

export const DELIVERY_STATUSES = ["queued", "sending", "delivered", "failed", "expired"] as const;

@Description("One attempt of a notification delivery.")
export class DeliveryAttemptView {
  @Description("Attempt number, from 1") @Required() attempt: number;
  @Description("When the attempt was made") @Required() at: string;
  @Description("Whether the attempt delivered") @Required() ok: boolean;
  @Description("The receiver's HTTP status, or null (no answer, or SMTP)") @Required() @Nullable(Number) status: number | null;
  @Description("Short failure class, for example timeout or connection_refused; null on success") @Required() @Nullable(String) error_class: string | null;
  @Required() @Nullable(String) @Description("as the channel reported it; never its URL or a secret") error: string | null;
  @Description("Duration of the attempt, milliseconds") @Required() ms: number;
}

/** The query of GET /notification-deliveries: the keyset cursor and the filters. */
export class DeliveryListQuery {
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
  @MaxLength(2048) cursor?: string;
  @Format("uuid") channel_id?: string;
  @Enum(...DELIVERY_STATUSES) status?: string;
  @MaxLength(512) @Description("an alert's incident key") alert?: string;
  @Format("date-time") @Description("RFC 3339, inclusive") since?: string;
  @Format("date-time") @Description("RFC 3339, exclusive") until?: string;
}

@Description("A notification delivery and its latest attempt (GET /notification-deliveries).")
export class DeliveryView {
  @Required() id: string;
  @Required() created_at: string;
  @Description("The alert transition that caused the delivery") @Required() transition_id: string;
  @Description("The channel; null once the channel was deleted") @Required() @Nullable(String) channel_id: string | null;
  @Description("The channel's name when the delivery was queued") @Required() channel_name: string;
  @Description("Lifecycle point: fire, resolve or suppress") @Required() event: string;
  @Description("Identity of the alert incident") @Required() incident_key: string;
  @Description("Severity of the alert") @Required() severity: string;
  @Description("True for a test send") @Required() test: boolean;
  @Required() @Description("queued, sending, delivered, failed or expired") status: string;
  @Required() @Nullable(String) @Description("the replica that last took it (host:pid)") sent_by: string | null;
  @Description("Attempts made so far") @Required() attempts: number;
  @Description("When the next attempt is due; null when none is") @Required() @Nullable(String) next_attempt_at: string | null;
  @Description("The receiver's HTTP status at the last attempt, or null") @Required() @Nullable(Number) last_status: number | null;
  @Description("Last failure as the channel reported it; never its URL or a secret") @Required() @Nullable(String) last_error: string | null;
  @Description("Short class of the last failure, for example timeout") @Required() @Nullable(String) last_error_class: string | null;
  @Description("When it was delivered, failed or expired; null while pending") @Required() @Nullable(String) finished_at: string | null;
}

@Description("A notification delivery with the log of its attempts (GET /notification-deliveries/{id}).")
export class DeliveryDetail extends DeliveryView {
  @Description("Every attempt, in order") @Required() @CollectionOf(DeliveryAttemptView) attempt_log: DeliveryAttemptView[];
}
