import { AdditionalProperties, Description, Enum, MaxLength, Nullable, Optional, Property, Required } from "nms-core/tsed";

export const DELIVERY_KINDS = ["fired", "resolved", "test"] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

export class RelayDeliveryView {
  @Required() id: string;
  @Required() @Description("RFC 3339, microseconds") at: string;
  @Required() @Enum(...DELIVERY_KINDS) kind: DeliveryKind;
  @Required() @Nullable(String) incident_key: string | null;
  @Required() @Nullable(String) severity: string | null;
  @Required() ok: boolean;
  @Required() @Nullable(Number) http_status: number | null;
  @Required() @Nullable(String) @Description("What went wrong (an HTTP status or an error class), never the URL") error: string | null;
}

@AdditionalProperties(false)
export class TestMessageBody {
  @Optional() @MaxLength(500) @Description("Text of the test message (default: a fixed sentence)") text?: string;
}

export class TestResult {
  @Property() @Required() ok: boolean;
  @Required() @Nullable(Number) http_status: number | null;
  @Required() @Nullable(String) error: string | null;
}
