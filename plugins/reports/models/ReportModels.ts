import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Example,
  Format,
  Integer,
  Maximum,
  MaxItems,
  MaxLength,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Required,
  Schema,
  UniqueItems,
} from "@tsed/schema";

const SPEC_DESCRIPTION =
  "A JSON object: `sections` (array of `{kind, title?, ...params}`; kinds: GET /reports/section-kinds) and optional `range_days` (1 to 366). " +
  "Unknown kind → 400 unknown_section_kind; bad params → 400 invalid_section_params; above limits.jsonDocumentMaxBytes → 413 document_too_large.";

/** The query of GET /reports/runs: a page, optionally of one definition's runs. */
export class RunListQuery {
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 50;
  @MaxLength(2048) cursor?: string;
  @Format("uuid") definition_id?: string;
}

/** The spec's report definition body (create and update). */
@AdditionalProperties(false)
export class DefinitionBody {
  @Required() @MinLength(1) @MaxLength(200) @Description("not blank") name: string;
  @Optional() @Nullable(String) @MaxLength(2000) description?: string | null;
  @Required()
  @Schema({ type: "object" })
  @Description(SPEC_DESCRIPTION)
  @Example({ sections: [{ kind: "availability", group_by: "node" }, { kind: "alert_summary" }], range_days: 7 })
  spec: Record<string, unknown>;
}

export class DefinitionView {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
  @Required() @Nullable(String) description: string | null;
  @Required() @Schema({ type: "object" }) spec: Record<string, unknown>;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class SectionKindView {
  @Required() kind: string;
  @Required() title: string;
  @Required() @Nullable(String) description: string | null;
  @Required() @Schema({ type: "object" }) @Description("JSON schema of the section's params") params_schema: Record<string, unknown>;
}

export const FREQUENCIES = ["daily", "weekly", "monthly"] as const;

@AdditionalProperties(false)
export class ReportScheduleBody {
  @Required() @Format("uuid") definition_id: string;
  @Required() @Enum(...FREQUENCIES) frequency: "daily" | "weekly" | "monthly";
  @Required() @Integer() @Minimum(0) @Maximum(23) at_hour: number;
  @Required() @Integer() @Minimum(0) @Maximum(59) at_minute: number;
  @Optional() @Nullable(Number) @Integer() @Minimum(0) @Maximum(6) @Description("0 = Sunday … 6 = Saturday, local; required when weekly") day_of_week?:
    number | null;
  @Optional()
  @Nullable(Number)
  @Integer()
  @Minimum(1)
  @Maximum(31)
  @Description("required when monthly; a month without that day runs on its last day")
  day_of_month?: number | null;
  @Optional() @Description("default true") enabled?: boolean;
  @Optional()
  @MinLength(1)
  @MaxLength(64)
  @Example("Europe/Berlin")
  @Description("IANA zone of at_hour/at_minute (default UTC); unknown → 400 invalid_timezone")
  timezone?: string;
  @Optional()
  @CollectionOf(String)
  @MaxItems(16)
  @UniqueItems()
  @Description("notification channels (email) each run is delivered to, PDF attached")
  channel_ids?: string[];
}

export class ReportScheduleView {
  @Required() @Format("uuid") id: string;
  @Required() @Format("uuid") definition_id: string;
  @Required() @Enum(...FREQUENCIES) frequency: string;
  @Required() @Integer() at_hour: number;
  @Required() @Integer() at_minute: number;
  @Required() @Nullable(Number) @Integer() day_of_week: number | null;
  @Required() @Nullable(Number) @Integer() day_of_month: number | null;
  @Required() enabled: boolean;
  @Required() timezone: string;
  @Required() @CollectionOf(String) channel_ids: string[];
  @Required() @Nullable(String) @Format("date-time") next_run_at: string | null;
  @Required() @Nullable(String) @Format("date-time") last_run_at: string | null;
  @Required() @Format("date-time") created_at: string;
}

@AdditionalProperties(false)
export class RunRequest {
  @Optional() @Integer() @Minimum(1) @Maximum(366) @Description("overrides the spec's range_days") range_days?: number;
  @Optional() @CollectionOf(String) @MaxItems(16) @UniqueItems() @Description("email channels to deliver the run to (PDF attached)") channel_ids?: string[];
}

export class RunAccepted {
  @Required() @Format("uuid") id: string;
}

export class RunOutputView {
  @Required() @Enum("html", "csv", "pdf") format: string;
  @Required() @Integer() bytes: number;
}

export class RunDeliveryView {
  @Required() @Format("uuid") channel_id: string;
  @Required() delivered: boolean;
  @Required() @Nullable(String) error: string | null;
}

export class RunView {
  @Required() @Format("uuid") id: string;
  @Required() @Nullable(String) @Format("uuid") definition_id: string | null;
  @Required() definition_name: string;
  @Required() @Nullable(String) @Format("uuid") schedule_id: string | null;
  @Required() @Enum("queued", "running", "succeeded", "failed") status: string;
  @Required() requested_by: string;
  @Required() @Description("`All`, or the folders the run covers") @Schema({ oneOf: [{ type: "string", enum: ["All"] }, { type: "object" }] }) scope: unknown;
  @Required() @Format("date-time") range_from: string;
  @Required() @Format("date-time") range_to: string;
  @Required() @Format("date-time") created_at: string;
  @Required() @Nullable(String) @Format("date-time") started_at: string | null;
  @Required() @Nullable(String) @Format("date-time") finished_at: string | null;
  @Required() @Nullable(String) error: string | null;
  @Required() @CollectionOf(RunOutputView) outputs: RunOutputView[];
  @Required() @CollectionOf(RunDeliveryView) deliveries: RunDeliveryView[];
}

/** A run with what it rendered (per section: kind, title, ms, and its tables and charts, or its error). */
export class RunDetailView extends RunView {
  @Optional() @Nullable(Array) @Description("per section: {kind, title, ms, data: {tables, charts, notes} | error}") sections: unknown[] | null;
}
