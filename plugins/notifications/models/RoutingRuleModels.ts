import { AdditionalProperties, CollectionOf, Description, Enum, Format, MaxItems, MaxLength, Nullable, Optional, Required, UniqueItems } from "@tsed/schema";

export const SEVERITIES = ["critical", "warning", "info"] as const;
export const MAX_RULE_FOLDERS = 32;

@AdditionalProperties(false)
@Description("Body of POST /routing-rules and of the full-document PUT /routing-rules/{id}.")
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
  @Optional()
  @CollectionOf(String)
  @Format("uuid")
  @MaxItems(MAX_RULE_FOLDERS)
  @UniqueItems()
  @Description(
    "only alerts of nodes filed in these folders or beneath them; omitted or empty = every alert (alerts of a pool or an organization match only a rule without folders)",
  )
  folder_ids?: string[];
  @Optional()
  @Description(
    "default false. true: the rule sends only root causes: an alert that is a symptom of an upstream node's unreachable alert (its symptom_of) is skipped; an unreachable fire is held for rootCauseSettleMs before it is decided",
  )
  root_cause_only?: boolean;
}

@Description("A routing rule: alerts of a severity go to these channels (GET /routing-rules).")
export class RoutingRuleView {
  @Required() id: string;
  @Required() name: string;
  @Description("critical, warning, info, or null = any severity") @Required() @Nullable(String) severity: string | null;
  @Description("Channels an alert matching this rule goes to") @Required() @CollectionOf(String) channel_ids: string[];
  @Description("Disabled rules route nothing") @Required() enabled: boolean;
  @Description("Only alerts of nodes in these folders or beneath; empty = every alert") @Required() @CollectionOf(String) folder_ids: string[];
  @Description("true: the rule sends only root causes (symptoms of an upstream unreachable alert are skipped)") @Required() root_cause_only: boolean;
  @Required() created_at: string;
  @Required() updated_at: string;
}
