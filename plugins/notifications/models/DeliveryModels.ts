import { CollectionOf, Description, Enum, Format, Integer, Maximum, MaxLength, Minimum, Nullable, Required } from "@tsed/schema";

export const DELIVERY_STATUSES = ["queued", "sending", "delivered", "failed", "expired"] as const;

export class DeliveryAttemptView {
  @Required() attempt: number;
  @Required() at: string;
  @Required() ok: boolean;
  @Required() @Nullable(Number) status: number | null;
  @Required() @Nullable(String) error_class: string | null;
  @Required() @Nullable(String) @Description("as the channel reported it; never its URL or a secret") error: string | null;
  @Required() ms: number;
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

export class DeliveryView {
  @Required() id: string;
  @Required() created_at: string;
  @Required() transition_id: string;
  @Required() @Nullable(String) channel_id: string | null;
  @Required() channel_name: string;
  @Required() event: string;
  @Required() incident_key: string;
  @Required() severity: string;
  @Required() test: boolean;
  @Required() @Description("queued, sending, delivered, failed or expired") status: string;
  @Required() @Nullable(String) @Description("the replica that last took it (host:pid)") sent_by: string | null;
  @Required() attempts: number;
  @Required() @Nullable(String) next_attempt_at: string | null;
  @Required() @Nullable(Number) last_status: number | null;
  @Required() @Nullable(String) last_error: string | null;
  @Required() @Nullable(String) last_error_class: string | null;
  @Required() @Nullable(String) finished_at: string | null;
}

export class DeliveryDetail extends DeliveryView {
  @Required() @CollectionOf(DeliveryAttemptView) attempt_log: DeliveryAttemptView[];
}
