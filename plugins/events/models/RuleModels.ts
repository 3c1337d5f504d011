import { AdditionalProperties, Description, Enum, Format, Integer, Maximum, MaxLength, MinLength, Minimum, Nullable, Optional, Required } from "@tsed/schema";
import { RULE_BOUNDS as BOUNDS, MATCH_KINDS, SEVERITIES, SOURCE_KINDS } from "../rules/vocab.js";

/** The spec's event rule body. Patterns are checked for their match kind by the service (400 validation_failed naming the field). */
@AdditionalProperties(false)
@Description("Body of POST /event-rules and of the full-document PUT /event-rules/{id}: the spec's event rule.")
export class EventRuleBody {
  @Description("Shown name of the rule") @Required() @MinLength(1) @MaxLength(120) name: string;
  @Required() @MinLength(1) @MaxLength(1024) @Description("text, regex, trap OID or varbind spec, as match_kind says") pattern: string;
  @Required()
  @Enum(...MATCH_KINDS)
  @Description(
    "substring (case-insensitive), exact (whole text), regex (JavaScript syntax, refused when it could backtrack catastrophically), trap_oid (dotted OID: the trap's OID or one under it), varbind (OID=value or OID~regex on a trap varbind)",
  )
  match_kind: string;
  @Required() @Enum(...SEVERITIES) @Description("severity of the alert the rule raises") severity: string;
  @Optional() @Nullable(String) @MaxLength(1024) @Description("same syntax as pattern: a matching event clears the rule's alert on that node") clear_pattern?:
    string | null;
  @Optional() @Description("default true") enabled?: boolean;
  @Optional()
  @Nullable(Number)
  @Integer()
  @Minimum(BOUNDS.min_count.min)
  @Maximum(BOUNDS.min_count.max)
  @Description("matches within window_secs that raise the alert; null = 1")
  min_count?: number | null;
  @Optional() @Nullable(Number) @Integer() @Minimum(BOUNDS.window_secs.min) @Maximum(BOUNDS.window_secs.max) @Description("null = 60") window_secs?:
    number | null;
  @Optional()
  @Nullable(Number)
  @Integer()
  @Minimum(BOUNDS.ttl_secs.min)
  @Maximum(BOUNDS.ttl_secs.max)
  @Description("the alert clears after this long without a match; null = only a clear_pattern (or a person) clears it")
  ttl_secs?: number | null;
  @Optional() @Nullable(String) @Format("uuid") @Description("only events attributed to this node") node_id?: string | null;
  @Optional() @Nullable(String) @Format("uuid") @Description("only events of this event source") source_id?: string | null;
  @Optional() @Nullable(String) @Enum(...SOURCE_KINDS, null) @Description("only events of this source kind: syslog, trap, http") source_kind?: string | null;
}

@Description("An event rule as stored (GET /event-rules, GET /event-rules/{id}).")
export class EventRuleView {
  @Required() id: string;
  @Required() name: string;
  @Description("Text, regex, trap OID or varbind spec, as match_kind says") @Required() pattern: string;
  @Description("substring, exact, regex, trap_oid or varbind") @Required() match_kind: string;
  @Description("Severity of the alert the rule raises") @Required() severity: string;
  @Description("A matching event clears the rule's alert on that node; null = none") @Required() @Nullable(String) clear_pattern: string | null;
  @Description("Disabled rules match nothing") @Required() enabled: boolean;
  @Description("Matches within window_secs that raise the alert") @Required() @Integer() min_count: number;
  @Description("Window over which min_count is counted, seconds") @Required() @Integer() window_secs: number;
  @Description("The alert clears after this long without a match; null = only a clear_pattern (or a person) clears it") @Required() @Nullable(Number) ttl_secs:
    number | null;
  @Description("Only events attributed to this node; null = any") @Required() @Nullable(String) node_id: string | null;
  @Description("Only events of this event source; null = any") @Required() @Nullable(String) source_id: string | null;
  @Description("Only events of this source kind (syslog, trap, http); null = any") @Required() @Nullable(String) source_kind: string | null;
  @Required() created_at: string;
  @Required() updated_at: string;
}
