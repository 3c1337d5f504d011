import {
  AdditionalProperties,
  Any,
  Description,
  Enum,
  Example,
  Format,
  Integer,
  Maximum,
  MaxLength,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Property,
  Required,
} from "@tsed/schema";

export const SCOPE_KINDS = ["all", "folder", "node"] as const;
export type ScopeKind = (typeof SCOPE_KINDS)[number];
export const FREQUENCIES = ["daily", "weekly", "monthly"] as const;
export const JOB_STATUSES = ["queued", "running", "succeeded", "failed"] as const;

/** The query of GET /analysis/jobs/{id}/findings: a keyset cursor and the tool and severity filters. */
export class JobFindingQuery {
  @Integer() @Minimum(1) @Maximum(1000) @Description("1 to 1000, default 100") limit: number = 100;
  @MaxLength(64) @Description("keyset cursor: the last row's at (RFC 3339)") before?: string;
  @Format("uuid") @Description("keyset cursor second half: the last row's id; send with before; omitted = strictly before that instant") before_id?: string;
  @MaxLength(500) @Description("comma-separated tool names; an unknown one is 400") tool?: string;
  @MaxLength(100) @Description("comma-separated info, warning, critical; empty = all") severity?: string;
}

/** The query of GET /analysis/findings: a run's filters, and the node or folder the findings are about. */
export class FindingQuery extends JobFindingQuery {
  @Format("uuid") @Description("findings about that node (its interfaces included)") node_id?: string;
  @Format("uuid") @Description("findings filed in that folder or anywhere beneath it") group_id?: string;
}

@Description("An analysis tool and the parameters it takes (GET /analysis/tools).")
export class ToolView {
  @Description("Tool name, as JobCreate.tool takes it") @Required() @Example("silent_nodes") name: string;
  @Description("Short human title") @Required() title: string;
  @Description("What the tool looks for") @Required() description: string;
  @Required() @Description("JSON schema of the tool's params; every key has its default") params_schema: Record<string, unknown>;
}

@AdditionalProperties(false)
@Description("Body of POST /analysis/jobs: run one analysis tool over a scope.")
export class JobCreate {
  @Required() @MinLength(1) @MaxLength(63) @Description("a tool of GET /analysis/tools") tool: string;
  @Required() @Enum(...SCOPE_KINDS) @Description("all: every node the caller may see; folder: that folder and beneath; node: one node") scope_kind: ScopeKind;
  @Optional() @Nullable(String) @Format("uuid") @Description("the folder or node; required for folder and node, null or absent for all") scope_id?:
    string | null;
  @Optional()
  @Description("the tool's params (checked against its schema; omitted keys take their defaults); at most limits.jsonDocumentMaxBytes")
  params?: Record<string, unknown>;
}

@Description("Counts of an analysis job's findings by severity.")
export class JobCounts {
  @Description("Findings saved") @Required() @Integer() total: number;
  @Description("Findings of severity info") @Required() @Integer() info: number;
  @Description("Findings of severity warning") @Required() @Integer() warning: number;
  @Description("Findings of severity critical") @Required() @Integer() critical: number;
  @Required() @Description("true when the run found more than maxFindingsPerRun and kept the most severe") truncated: boolean;
}

@Description("An analysis job and its progress (GET /analysis/jobs/{id}).")
export class JobView {
  @Required() @Format("uuid") id: string;
  @Description("The tool run") @Required() tool: string;
  @Description("all: every node the caller may see; folder: that folder and beneath; node: one node") @Required() @Enum(...SCOPE_KINDS) scope_kind: string;
  @Description("The folder or node; null for all") @Required() @Nullable(String) @Format("uuid") scope_id: string | null;
  @Description("The tool's params, defaults filled in") @Required() params: Record<string, unknown>;
  @Required() @Nullable(String) @Format("uuid") @Description("the schedule that started it, or null for an on-demand run") schedule_id: string | null;
  @Description("queued, running, succeeded or failed") @Required() @Enum(...JOB_STATUSES) status: string;
  @Required() @Minimum(0) @Maximum(1) @Description("0 to 1") progress: number;
  @Required() @Property(JobCounts) counts: JobCounts;
  @Required() @Nullable(String) @Description("why a failed run failed (a generic sentence; the detail is in the log)") error: string | null;
  @Required() @Format("date-time") created_at: string;
  @Required() @Nullable(String) @Format("date-time") started_at: string | null;
  @Required() @Nullable(String) @Format("date-time") finished_at: string | null;
}

@Description("What a finding is about.")
export class FindingSubject {
  @Description("node, interface or subnet") @Required() @Enum("node", "interface", "subnet") kind: string;
  @Required() @Description("node: its id; interface: node id:ifindex; subnet: the prefix") id: string;
  @Description("Shown name of the subject") @Required() name: string;
}

@Description("A finding an analysis job saved (GET /analysis/findings, GET /analysis/jobs/{id}/findings).")
export class FindingView {
  @Required() @Format("uuid") @Description("second half of the keyset cursor (before_id)") id: string;
  @Description("The run that saved it") @Required() @Format("uuid") job_id: string;
  @Required() @Format("date-time") @Description("when the run saved it (every finding of a run shares it); first half of the cursor (before)") at: string;
  @Description("The tool that found it") @Required() tool: string;
  @Description("info, warning or critical") @Required() @Enum("info", "warning", "critical") severity: string;
  @Required() @Property(FindingSubject) subject: FindingSubject;
  @Description("The node the subject is or belongs to; null when none") @Required() @Nullable(String) @Format("uuid") node_id: string | null;
  @Description("The interface of an interface subject; null otherwise") @Required() @Nullable(Number) @Integer() ifindex: number | null;
  @Required() @Nullable(String) @Format("uuid") @Description("the folder the subject is filed in; null at the tree root") folder_id: string | null;
  @Description("One sentence saying what was found") @Required() message: string;
  @Description("Tool-specific details") @Required() @Any("object") data: Record<string, unknown>;
}

@AdditionalProperties(false)
@Description("Body of POST /analysis/schedules and of the full-document PUT /analysis/schedules/{id}.")
export class AnalysisScheduleBody {
  @Description("A tool of GET /analysis/tools") @Required() @MinLength(1) @MaxLength(63) tool: string;
  @Description("all: every node its creator may see; folder: that folder and beneath; node: one node") @Required() @Enum(...SCOPE_KINDS) scope_kind: ScopeKind;
  @Optional() @MaxLength(200) @Description("a label for people; default: the folder's or node's name, or All") scope_label?: string;
  @Description("The folder or node; required for folder and node, null or absent for all") @Optional() @Nullable(String) @Format("uuid") scope_id?:
    string | null;
  @Description("The tool's params (checked against its schema; omitted keys take their defaults)") @Optional() params?: Record<string, unknown>;
  @Description("daily, weekly or monthly") @Required() @Enum(...FREQUENCIES) frequency: string;
  @Description("Hour of the run in timezone, 0 to 23") @Required() @Integer() @Minimum(0) @Maximum(23) at_hour: number;
  @Description("Minute of the run, 0 to 59") @Required() @Integer() @Minimum(0) @Maximum(59) at_minute: number;
  @Optional() @Nullable(Number) @Integer() @Minimum(0) @Maximum(6) @Description("weekly: 0 = Sunday … 6 = Saturday; null otherwise") day_of_week?:
    number | null;
  @Optional()
  @Nullable(Number)
  @Integer()
  @Minimum(1)
  @Maximum(31)
  @Description("monthly: 1 to 31 (a shorter month runs on its last day); null otherwise")
  day_of_month?: number | null;
  @Description("default true") @Optional() enabled?: boolean;
  @Optional() @MinLength(1) @MaxLength(64) @Example("Europe/Berlin") @Description("IANA zone of at_hour:at_minute; default UTC") timezone?: string;
}

@Description("A schedule that runs an analysis tool periodically (GET /analysis/schedules).")
export class AnalysisScheduleView {
  @Required() @Format("uuid") id: string;
  @Description("The tool it runs") @Required() tool: string;
  @Description("all, folder or node") @Required() @Enum(...SCOPE_KINDS) scope_kind: string;
  @Description("A label for people") @Required() scope_label: string;
  @Description("The folder or node; null for all") @Required() @Nullable(String) @Format("uuid") scope_id: string | null;
  @Description("The tool's params, defaults filled in") @Required() params: Record<string, unknown>;
  @Description("daily, weekly or monthly") @Required() @Enum(...FREQUENCIES) frequency: string;
  @Description("Hour of the run in timezone, 0 to 23") @Required() @Integer() at_hour: number;
  @Description("Minute of the run, 0 to 59") @Required() @Integer() at_minute: number;
  @Description("weekly: 0 = Sunday … 6 = Saturday; null otherwise") @Required() @Nullable(Number) @Integer() day_of_week: number | null;
  @Description("monthly: 1 to 31 (a shorter month runs on its last day); null otherwise") @Required() @Nullable(Number) @Integer() day_of_month: number | null;
  @Description("Disabled schedules do not run") @Required() enabled: boolean;
  @Description("IANA zone of at_hour:at_minute") @Required() timezone: string;
  @Description("When it runs next; null while disabled") @Required() @Nullable(String) @Format("date-time") next_run_at: string | null;
  @Description("When it last ran; null = never") @Required() @Nullable(String) @Format("date-time") last_run_at: string | null;
}
