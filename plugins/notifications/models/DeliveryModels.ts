import { CollectionOf, Description, Nullable, Required } from "@tsed/schema";

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
