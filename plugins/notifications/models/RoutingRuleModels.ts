import { AdditionalProperties, CollectionOf, Description, Enum, Format, MaxItems, MaxLength, Nullable, Optional, Required, UniqueItems } from "@tsed/schema";

export const SEVERITIES = ["critical", "warning", "info"] as const;

@AdditionalProperties(false)
export class RoutingRuleBody {
  @Required() @MaxLength(200) @Description("not empty") name: string;
  @Required() @Nullable(String) @Enum(...SEVERITIES, null) @Description("critical, warning, info, or null = any severity") severity: string | null;
  @Required()
  @CollectionOf(String)
  @Format("uuid")
  @MaxItems(100)
  @UniqueItems()
  @Description("channels an alert matching this rule goes to")
  channel_ids: string[];
  @Optional() @Description("default true") enabled?: boolean;
}

export class RoutingRuleView {
  @Required() id: string;
  @Required() name: string;
  @Required() @Nullable(String) severity: string | null;
  @Required() @CollectionOf(String) channel_ids: string[];
  @Required() enabled: boolean;
  @Required() created_at: string;
  @Required() updated_at: string;
}
