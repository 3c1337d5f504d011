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
@Description("Body of POST /reports/definitions and of PUT /reports/definitions/{id}: the spec's report definition.")
export class DefinitionBody {
  @Required() @MinLength(1) @MaxLength(200) @Description("not blank") name: string;
  @Description("Free text; null = none") @Optional() @Nullable(String) @MaxLength(2000) description?: string | null;
  @Required()
  @Schema({ type: "object" })
  @Description(SPEC_DESCRIPTION)
  @Example({ sections: [{ kind: "availability", group_by: "node" }, { kind: "alert_summary" }], range_days: 7 })
  spec: Record<string, unknown>;
}

@Description("A report definition (GET /reports/definitions, GET /reports/definitions/{id}).")
export class DefinitionView {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
  @Description("Free text; null = none") @Required() @Nullable(String) description: string | null;
  @Description("sections (kind, title, params) and optional range_days") @Required() @Schema({ type: "object" }) spec: Record<string, unknown>;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

@Description("A report section kind this build can render (GET /reports/section-kinds).")
export class SectionKindView {
  @Description("Section kind, as a definition's spec names it") @Required() kind: string;
  @Description("Default title of the section") @Required() title: string;
  @Description("What the section shows; null = none") @Required() @Nullable(String) description: string | null;
  @Required() @Schema({ type: "object" }) @Description("JSON schema of the section's params") params_schema: Record<string, unknown>;
}

export const FREQUENCIES = ["daily", "weekly", "monthly"] as const;

@AdditionalProperties(false)
@Description("Body of POST /reports/schedules and of the full-document PUT /reports/schedules/{id}.")
export class ReportScheduleBody {
  @Description("The report definition to run") @Required() @Format("uuid") definition_id: string;
  @Description("daily, weekly or monthly") @Required() @Enum(...FREQUENCIES) frequency: "daily" | "weekly" | "monthly";
  @Description("Hour of the run in timezone, 0 to 23") @Required() @Integer() @Minimum(0) @Maximum(23) at_hour: number;
  @Description("Minute of the run, 0 to 59") @Required() @Integer() @Minimum(0) @Maximum(59) at_minute: number;
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

@Description("A schedule that runs a report definition periodically (GET /reports/schedules).")
export class ReportScheduleView {
  @Required() @Format("uuid") id: string;
  @Description("The report definition it runs") @Required() @Format("uuid") definition_id: string;
  @Description("daily, weekly or monthly") @Required() @Enum(...FREQUENCIES) frequency: string;
  @Description("Hour of the run in timezone, 0 to 23") @Required() @Integer() at_hour: number;
  @Description("Minute of the run, 0 to 59") @Required() @Integer() at_minute: number;
  @Description("weekly: 0 = Sunday … 6 = Saturday, local; null otherwise") @Required() @Nullable(Number) @Integer() day_of_week: number | null;
  @Description("monthly: the day (a month without it runs on its last day); null otherwise") @Required() @Nullable(Number) @Integer() day_of_month:
    number | null;
  @Description("Disabled schedules do not run") @Required() enabled: boolean;
  @Description("IANA zone of at_hour/at_minute") @Required() timezone: string;
  @Description("Notification channels (email) each run is delivered to, PDF attached") @Required() @CollectionOf(String) channel_ids: string[];
  @Description("When it runs next; null while disabled") @Required() @Nullable(String) @Format("date-time") next_run_at: string | null;
  @Description("When it last ran; null = never") @Required() @Nullable(String) @Format("date-time") last_run_at: string | null;
  @Required() @Format("date-time") created_at: string;
}

@AdditionalProperties(false)
@Description("Body of POST /reports/definitions/{id}/run.")
export class RunRequest {
  @Optional() @Integer() @Minimum(1) @Maximum(366) @Description("overrides the spec's range_days") range_days?: number;
  @Optional() @CollectionOf(String) @MaxItems(16) @UniqueItems() @Description("email channels to deliver the run to (PDF attached)") channel_ids?: string[];
}

@Description("The id of a queued report run (POST /reports/definitions/{id}/run).")
export class RunAccepted {
  @Description("The run; follow it with GET /reports/runs/{id}") @Required() @Format("uuid") id: string;
}

@Description("A file a report run rendered.")
export class RunOutputView {
  @Description("html, csv or pdf") @Required() @Enum("html", "csv", "pdf") format: string;
  @Description("Size of the file") @Required() @Integer() bytes: number;
}

@Description("The delivery of a report run to one notification channel.")
export class RunDeliveryView {
  @Description("The notification channel") @Required() @Format("uuid") channel_id: string;
  @Description("Whether the delivery succeeded") @Required() delivered: boolean;
  @Description("Why it failed; null when delivered") @Required() @Nullable(String) error: string | null;
}

@Description("A report run and its outputs (GET /reports/runs).")
export class RunView {
  @Required() @Format("uuid") id: string;
  @Description("The definition run; null once it was deleted") @Required() @Nullable(String) @Format("uuid") definition_id: string | null;
  @Description("The definition's name when it ran") @Required() definition_name: string;
  @Description("The schedule that started it; null for an on-demand run or a deleted schedule") @Required() @Nullable(String) @Format("uuid") schedule_id:
    string | null;
  @Description("queued, running, succeeded or failed") @Required() @Enum("queued", "running", "succeeded", "failed") status: string;
  @Description("Username of the caller, or schedule <id> for a scheduled run") @Required() requested_by: string;
  @Required() @Description("`All`, or the folders the run covers") @Schema({ oneOf: [{ type: "string", enum: ["All"] }, { type: "object" }] }) scope: unknown;
  @Description("Start of the reported time range") @Required() @Format("date-time") range_from: string;
  @Description("End of the reported time range") @Required() @Format("date-time") range_to: string;
  @Required() @Format("date-time") created_at: string;
  @Required() @Nullable(String) @Format("date-time") started_at: string | null;
  @Required() @Nullable(String) @Format("date-time") finished_at: string | null;
  @Description("Why a failed run failed; null otherwise") @Required() @Nullable(String) error: string | null;
  @Description("Files rendered") @Required() @CollectionOf(RunOutputView) outputs: RunOutputView[];
  @Description("Deliveries to notification channels") @Required() @CollectionOf(RunDeliveryView) deliveries: RunDeliveryView[];
}

/** A run with what it rendered (per section: kind, title, ms, and its tables and charts, or its error). */
@Description("A report run with what it rendered per section (GET /reports/runs/{id}).")
export class RunDetailView extends RunView {
  @Optional() @Nullable(Array) @Description("per section: {kind, title, ms, data: {tables, charts, notes} | error}") sections: unknown[] | null;
}
