import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Format,
  Integer,
  MaxLength,
  MinLength,
  Nullable,
  Pattern,
  Optional,
  Required,
  Minimum,
  Maximum,
} from "@tsed/schema";

export const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The query of GET /mutes: the node and metric filters, and the keyset cursor. */
export class MuteListQuery {
  @Format("uuid") @Description("One node's mutes") node_id?: string;
  @MaxLength(200) @Description("One metric's mutes (exact name)") metric_name?: string;
  @MaxLength(2048) cursor?: string;
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
}

/** The spec's Bulk mute request. */
@AdditionalProperties(false)
@Description("Body of POST /mutes/bulk: one metric muted on many nodes until a time.")
export class BulkMuteRequest {
  @Required()
  @CollectionOf(String)
  @Format("uuid")
  @Description(
    "Nodes to mute; repeats are counted once. More distinct-or-not ids than pluginConfig.alerts.bulkMuteMax (default 1000) answer 400. Missing nodes and nodes outside the caller's scope are skipped (created is lower)",
  )
  node_ids: string[];

  @Required()
  @MaxLength(200)
  @Pattern(METRIC_NAME)
  @Description("Metric to mute: an identifier (letters, digits, _; not starting with a digit), else 400")
  metric_name: string;

  @Required() @MinLength(1) @MaxLength(1000) @Description("Why (shown with the mute)") reason: string;

  @Required() @MaxLength(64) @Description("RFC 3339 timestamp in the future: the mute ends then (unparseable or past: 400)") until: string;
}

/** The spec's Bulk mute result. */
@Description("Answer of POST /mutes/bulk: mutes created and distinct nodes asked.")
export class BulkMuteResult {
  @Required() @Integer() @Description("Mutes written: one per distinct node that exists and lies in the caller's scope") created: number;
  @Required() @Integer() @Description("Distinct ids after de-duplication") requested: number;
}

/** One active mute. While it lasts the metric's transitions still reach history, but their notifications are suppressed. */
@Description("An active mute: the metric's notifications on a node are suppressed until it ends (GET /mutes).")
export class MuteView {
  @Required() @Format("uuid") id: string;
  @Required() @Format("uuid") node_id: string;
  @Required() @Nullable(String) @Description("The node's current name; null if it was deleted since") node_name: string | null;
  @Description("The muted metric") @Required() metric_name: string;
  @Description("Why, as given with the mute") @Required() reason: string;
  @Description("When the mute ends") @Required() @Format("date-time") until: string;
  @Required() @Description("Username or token name of the caller who muted") created_by: string;
  @Required() @Format("date-time") created_at: string;
}

/** Body of PATCH /mutes/{id}: a new end or reason (at least one). */
@AdditionalProperties(false)
@Description("Body of PATCH /mutes/{id}: move a mute's end or change its reason; at least one field.")
export class MuteUpdate {
  @Optional() @MaxLength(64) @Description("RFC 3339 timestamp in the future: the mute's new end (unparseable or past: 400)") until?: string;
  @Optional() @MinLength(1) @MaxLength(1000) @Description("New reason (shown with the mute)") reason?: string;
}
