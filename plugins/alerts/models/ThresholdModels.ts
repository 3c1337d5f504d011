import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  Maximum,
  MaxLength,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Required,
  Schema,
  array,
  string,
} from "@tsed/schema";
import { PageQuery } from "../../../core/index.js";
import { SCOPE_LEVELS, type ScopeLevel } from "../lib/rules.js";

export const METRIC_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const DIRECTIONS = ["above", "below"] as const;
export const MAX_SCOPE_IDS = 32;
export const DWELL_DEFAULT = 1;

/** The query of GET /thresholds: a page, optionally of one metric's rules. */
export class ThresholdListQuery extends PageQuery {
  @MaxLength(128) @Pattern(METRIC_PATTERN) @Description("Only rules of this metric") metric?: string;
}

/** Create and full replacement (PUT) of a threshold rule: the spec's Threshold rule body. */
@AdditionalProperties(false)
@Description("Body of POST /thresholds and of the full-document PUT /thresholds/{id}: the spec's threshold rule.")
export class ThresholdBody {
  @Required()
  @MinLength(1)
  @MaxLength(128)
  @Pattern(METRIC_PATTERN)
  @Description(
    "Metric the rule watches: an identifier (letters, digits, _; not starting with a digit); raw monotonic counters are refused by their metric or IF-MIB names in any case (if_hc_in_octets, ifHCInOctets)",
  )
  metric: string;

  @Required()
  @Enum(...SCOPE_LEVELS)
  @Description(
    "global (every node), profile (nodes of the profiles named), folder (nodes filed in the folders named, at any depth), node (the nodes named), interface (one port `<node uuid>:<ifindex>`)",
  )
  scope_level: ScopeLevel;

  @Optional()
  @Enum(...DIRECTIONS)
  @Description(
    "Side `warning` and `critical` are read on; kept for older clients (the four bounds win when any is sent). Needed only with warning and critical: a body of the four bounds may leave it out (it is then above when an above bound is set, else below)",
  )
  direction?: "above" | "below";

  @Optional()
  @Nullable(Number)
  @Description("Warning bound on the side `direction` names; ignored when any of the four bounds is sent")
  warning?: number | null;

  @Optional()
  @Nullable(Number)
  @Description("Critical bound on the side `direction` names; ignored when any of the four bounds is sent")
  critical?: number | null;

  @Optional()
  @Nullable(Number)
  @Description("Warning at or above this value")
  warning_above?: number | null;

  @Optional()
  @Nullable(Number)
  @Description("Critical at or above this value")
  critical_above?: number | null;

  @Optional()
  @Nullable(Number)
  @Description("Warning at or below this value")
  warning_below?: number | null;

  @Optional()
  @Nullable(Number)
  @Description("Critical at or below this value; send below and above bounds to alert outside a band")
  critical_below?: number | null;

  @Optional()
  @Nullable(Number)
  @Integer()
  @Minimum(1)
  @Maximum(1000)
  @Description("Consecutive samples needed before a change of severity (fire, escalation, de-escalation, clear) is committed; default 1")
  dwell_samples?: number | null;

  @Optional()
  // @Nullable(Array) would make a broken schema (and map the array to a string): the nullable array is spelt out.
  @Schema(array().items(string().maxLength(80)).nullable().maxItems(MAX_SCOPE_IDS).uniqueItems(true))
  @Description(
    "Targets of the scope level: profile, folder or node uuids, or for an interface rule exactly one port `<node uuid>:<ifindex>`; at most 32, no repeats; wins over scope_id; ignored (not stored) on a global rule",
  )
  scope_ids?: string[] | null;

  @Optional()
  @Nullable(String)
  @MaxLength(80)
  @Description("Single target, kept for older clients; scope_ids wins when both are sent")
  scope_id?: string | null;

  @Optional()
  @Nullable(String)
  @MaxLength(200)
  @Description(
    "Only rows of a table metric whose name matches: case-insensitive, `*` matches any run of characters; omitted = every row; not allowed on an interface rule",
  )
  row_match?: string | null;
}

/** A stored rule, normalised: the four bounds resolved, targets in scope_ids (scope_id = the first). */
@Description("A stored threshold rule, normalised (GET /thresholds, GET /thresholds/{id}).")
export class ThresholdView {
  @Required() @Format("uuid") id: string;
  @Description("Metric the rule watches") @Required() metric: string;
  @Description("global (every node), profile, folder (at any depth), node, or interface (one port)") @Required() @Enum(...SCOPE_LEVELS) scope_level: ScopeLevel;
  @Description("Side warning and critical are read on; kept for older clients") @Required() @Enum(...DIRECTIONS) direction: "above" | "below";
  @Required() @Nullable(Number) @Description("Primary-side warning bound (the side `direction` names)") warning: number | null;
  @Required() @Nullable(Number) @Description("Primary-side critical bound (the side `direction` names)") critical: number | null;
  @Description("Warning at or above this value; null = no such bound") @Required() @Nullable(Number) warning_above: number | null;
  @Description("Critical at or above this value; null = no such bound") @Required() @Nullable(Number) critical_above: number | null;
  @Description("Warning at or below this value; null = no such bound") @Required() @Nullable(Number) warning_below: number | null;
  @Description("Critical at or below this value; null = no such bound") @Required() @Nullable(Number) critical_below: number | null;
  @Description("Consecutive samples needed before a change of severity is committed") @Required() @Integer() dwell_samples: number;
  @Required() @CollectionOf(String) @Description("All targets; empty for a global rule") scope_ids: string[];
  @Required() @Nullable(String) @Description("First target (for older readers); null for a global rule") scope_id: string | null;
  @Description("Only rows of a table metric whose name matches (case-insensitive, * any run); null = every row") @Required() @Nullable(String) row_match:
    string | null;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}
