import {
  AdditionalProperties,
  CollectionOf,
  Integer,
  Description,
  Enum,
  Format,
  MaxItems,
  Nullable,
  Required,
  MaxLength,
  Minimum,
  Maximum,
} from "@tsed/schema";

/** The query of GET /reclassify/preview: the keyset cursor. */
export class ReclassifyPreviewQuery {
  @MaxLength(2048) cursor?: string;
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
}

/** One proposed change, as a reclassify screen showed it. */
@AdditionalProperties(false)
@Description("One proposed profile change of a reclassify request, as the preview showed it.")
export class ReclassifyItem {
  @Required() @Format("uuid") node_id: string;

  @Required()
  @Nullable(String)
  @Format("uuid")
  @Description("The profile the screen showed for the node (null = none); the change is skipped when the node's profile moved since")
  from_profile_id: string | null;

  @Required()
  @Format("uuid")
  @Description("The profile proposed; the change is skipped unless the rules still choose it")
  to_profile_id: string;
}

@AdditionalProperties(false)
@Description("Body of POST /reclassify/apply: the profile changes to apply.")
export class ReclassifyRequest {
  @Required()
  @CollectionOf(ReclassifyItem)
  @MaxItems(5000)
  @Description("At most 5000; a node named twice counts once and its last entry is used")
  items: ReclassifyItem[];
}

@Description("Counts of the changes a reclassify request applied and skipped (POST /reclassify/apply).")
export class ReclassifyResult {
  @Required() @Integer() @Description("Nodes whose profile was set to the proposed one") applied: number;
  @Required() @Integer() @Description("The node's profile is no longer from_profile_id, or the rules no longer choose to_profile_id") skipped_changed: number;
  @Required() @Integer() @Description("The node is gone or outside the caller's folder scope") skipped_hidden: number;
  @Required() @Integer() @Description("A person fixed the node's profile (profile_locked)") skipped_locked: number;
}

/** A node whose rules now choose another profile than it has. */
@Description("A node whose classification rules now choose another profile than it has (GET /reclassify/preview).")
export class ReclassifyPreviewRow {
  @Required() @Format("uuid") node_id: string;
  @Required() node_name: string;
  @Description("The node's profile now; null = none") @Required() @Nullable(String) @Format("uuid") from_profile_id: string | null;
  @Description("The profile the classification rules now choose") @Required() @Format("uuid") to_profile_id: string;
  @Required() @Format("uuid") @Description("The winning classification rule") rule_id: string;
  @Required() @Enum("sysobjectid", "sysdescr") @Description("sysobjectid: its prefix matched (authoritative); sysdescr: only its regex did") matched_by: string;
}
