import {
  AdditionalProperties,
  CollectionOf,
  Default,
  Description,
  Enum,
  Format,
  Integer,
  MaxLength,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Required,
  Minimum,
  Maximum,
} from "@tsed/schema";

export const TEMPLATE_COLLECTIONS = ["scalar", "table"] as const;
export const TEMPLATE_METRIC_KINDS = ["gauge", "counter"] as const;
/** A metric name: lower-case identifier, at most 63 characters. */
export const METRIC_NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
/** A dotted OID (a leading dot is accepted and dropped). */
export const ITEM_OID_PATTERN = /^\.?[0-9]+(\.[0-9]+)+$/;

/** The query of GET /collection-templates/{id}/items: a page (every item, up to 1000, by default). */
export class TemplateItemListQuery {
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 1000;
  @MaxLength(2048) cursor?: string;
}

/** Create and full replacement (PUT) of a collection template. */
@AdditionalProperties(false)
@Description("Body of POST /collection-templates and of the full-document PUT /collection-templates/{id}.")
export class CollectionTemplateBody {
  @Required()
  @MinLength(1)
  @MaxLength(200)
  @Pattern(/\S/)
  @Description("Unique, case-insensitively; at least one non-blank character")
  name: string;

  @Description("Free text; null = none")
  @Optional()
  @Nullable(String)
  @MaxLength(2000)
  description?: string | null;
}

@Description("A collection template: a named set of OIDs polled on the nodes of the profiles that use it (GET /collection-templates).")
export class CollectionTemplateView {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  name: string;

  @Description("Free text; null = none")
  @Required()
  @Nullable(String)
  description: string | null;

  @Required()
  @Integer()
  @Description("Items in the template (enabled or not)")
  item_count: number;

  @Required()
  @CollectionOf(String)
  @Description("Profiles that use the template")
  profile_ids: string[];
}

/** Create and full replacement (PUT) of a template item: one OID read on every poll of the nodes whose profile uses the template. */
@AdditionalProperties(false)
@Description("Body of POST /collection-templates/{id}/items and of the full-document PUT of an item.")
export class CollectionTemplateItemBody {
  @Required()
  @Enum(...TEMPLATE_COLLECTIONS)
  @Description("scalar: one GET of `oid` (an instance, e.g. ….0); table: a walk of the column `oid`, one value per row (row = last index component)")
  collection: "scalar" | "table";

  @Required()
  @Enum(...TEMPLATE_METRIC_KINDS)
  @Description("gauge: stored as read; counter: turned into a per-second rate (wrap and restart aware)")
  metric_kind: "gauge" | "counter";

  @Required()
  @Pattern(METRIC_NAME_PATTERN)
  @Description("Metric the values are stored under: lower-case identifier, not a built-in metric or raw counter name; unique within the template")
  metric_name: string;

  @Required()
  @MaxLength(400)
  @Pattern(ITEM_OID_PATTERN)
  @Description("Dotted numeric OID; a leading dot is dropped")
  oid: string;

  @Optional()
  @Default(true)
  @Description("Disabled items are not polled; default true")
  enabled?: boolean;
}

@Description("An item of a collection template: one OID read on every poll (GET /collection-templates/{id}/items).")
export class CollectionTemplateItemView {
  @Required()
  @Format("uuid")
  id: string;

  @Description("The template it belongs to")
  @Required()
  @Format("uuid")
  template_id: string;

  @Description("scalar: one GET of oid; table: a walk of the column oid, one value per row")
  @Required()
  @Enum(...TEMPLATE_COLLECTIONS)
  collection: "scalar" | "table";

  @Description("gauge: stored as read; counter: turned into a per-second rate")
  @Required()
  @Enum(...TEMPLATE_METRIC_KINDS)
  metric_kind: "gauge" | "counter";

  @Description("Metric the value is stored as")
  @Required()
  metric_name: string;

  @Description("Dotted OID read")
  @Required()
  oid: string;

  @Description("Disabled items are not polled")
  @Required()
  enabled: boolean;
}
