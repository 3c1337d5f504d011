import { AdditionalProperties, CollectionOf, Description, Enum, Integer, Nullable, Property, Required } from "@tsed/schema";

export class BundleNoteModel {
  @Required() table: string;
  @Required()
  @Enum(
    "skipped_builtin",
    "skipped_missing_reference",
    "reference_dropped",
    "secret_dropped_imported_disabled",
    "webhook_token_reset",
    "schedule_next_run_recomputed",
    "skipped_invalid_value",
  )
  code: string;
  @Required() @Integer() count: number;
  @Required() @Nullable(String) field: string | null;
}

/** One bundle record: the fields the spec lists for its array (docs/bundle.md). */
@AdditionalProperties(true)
export class BundleRecord {}

/** The spec's configuration bundle. */
export class BundleDocument {
  @Required() @Enum("service.config-bundle") format: string;
  @Required() @Integer() @Description("bundle version this deployment writes (2); it reads 1 and 2") version: number;
  @Required() service_version: string;
  @Required() @Description("date-time") exported_at: string;
  @Required() @Enum("references") secrets: string;
  @Required() @CollectionOf(BundleNoteModel) notes: BundleNoteModel[];
  @Required() @Nullable(Object) @Description("null: this deployment's settings live in its configuration, not its store") app_settings: object | null;
  @Required() @CollectionOf(BundleRecord) analysis_schedules: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) classification_rules: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) collection_template_items: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) collection_templates: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) dns_checks: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) event_rules: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) event_sources: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) forward_destinations: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) node_groups: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) nodes: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) profile_collection_templates: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) profiles: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) report_definitions: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) report_schedules: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) thresholds: BundleRecord[];
  @Required() @CollectionOf(BundleRecord) url_checks: BundleRecord[];
}

export class BundleTableResult {
  @Required() @Integer() created: number;
  @Required() @Integer() updated: number;
  @Required() @Integer() @Description("rows of the bundle not imported (each counted in a note)") skipped: number;
  @Required() @Integer() @Description("rows of this deployment removed (replace mode)") deleted: number;
}

export class BundleImportOutcome {
  @Required() ok: boolean;
  @Required() dry_run: boolean;
  @Required() @Enum("merge", "replace") mode: string;
  @Required() format: string;
  @Required() @Integer() version: number;
  @Required() @Property(Object) @Description("per bundle array: created, updated, skipped, deleted") tables: Record<string, BundleTableResult>;
  @Required() @CollectionOf(BundleNoteModel) notes: BundleNoteModel[];
}
