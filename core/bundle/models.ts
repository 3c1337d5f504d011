import { AdditionalProperties, CollectionOf, Description, Enum, Integer, Nullable, Property, Required } from "@tsed/schema";

@Description("A note of a bundle or of an import: a table's rows skipped or changed, and why.")
export class BundleNoteModel {
  @Description("The bundle array the note is about") @Required() table: string;
  @Description("What happened to the rows")
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
  @Description("Number of rows concerned") @Required() @Integer() count: number;
  @Description("The field concerned, or null when the note is about whole rows") @Required() @Nullable(String) field: string | null;
}

/** One bundle record: the fields the spec lists for its array (docs/bundle.md). */
@AdditionalProperties(true)
@Description("One row of a bundle array; its fields are those the spec lists for that array.")
export class BundleRecord {}

/** The spec's configuration bundle. */
@Description("The portable configuration bundle: configuration tables without secrets (GET /config/bundle).")
export class BundleDocument {
  @Description("Always service.config-bundle; an importer refuses any other format") @Required() @Enum("service.config-bundle") format: string;
  @Required() @Integer() @Description("bundle version this deployment writes (2); it reads 1 and 2") version: number;
  @Description("Version of the service that produced the bundle") @Required() service_version: string;
  @Required() @Description("date-time") exported_at: string;
  @Description("Always references: credentials, channel configs and ingest tokens stay in the deployment") @Required() @Enum("references") secrets: string;
  @Description("Informational notes of the export; ignored on import") @Required() @CollectionOf(BundleNoteModel) notes: BundleNoteModel[];
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

@Description("What a bundle import did, or would do on a dry run, per table (POST /config/bundle/import).")
export class BundleImportOutcome {
  @Description("Always true on success") @Required() ok: boolean;
  @Description("true: nothing was written, the counts say what an import would do") @Required() dry_run: boolean;
  @Description("merge (the default) keeps rows the bundle lacks; replace removes them") @Required() @Enum("merge", "replace") mode: string;
  @Description("Format of the imported bundle") @Required() format: string;
  @Description("Version of the imported bundle") @Required() @Integer() version: number;
  @Required() @Property(Object) @Description("per bundle array: created, updated, skipped, deleted") tables: Record<string, BundleTableResult>;
  @Description("Rows skipped or changed by the import, and why") @Required() @CollectionOf(BundleNoteModel) notes: BundleNoteModel[];
}
