import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  MaxItems,
  MaxLength,
  Maximum,
  Minimum,
  MinItems,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Required,
  UniqueItems,
} from "@tsed/schema";

/** Most targets one window may name. */
export const MAX_WINDOW_TARGETS = 1000;

/** The query of GET /maintenance-windows/active. */
export class ActiveWindowsQuery {
  @MaxLength(64) @Description("RFC 3339 instant; default now") at?: string;
}

/** The query of GET /maintenance-windows: the keyset cursor. */
export class MaintenanceListQuery {
  @MaxLength(2048) cursor?: string;
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
}

/** A recurring window: every day, or on some weekdays, from a local wall-clock time for a duration. */
@AdditionalProperties(false)
@Description("The recurrence of a maintenance window: every day or some weekdays, from a local time for a duration.")
export class RecurrenceModel {
  @Required() @Enum("daily", "weekly") @Description("daily: every day; weekly: on the listed weekdays") kind: "daily" | "weekly";

  @Optional()
  @CollectionOf(Number)
  @Integer()
  @Minimum(0)
  @Maximum(6)
  @MinItems(1)
  @MaxItems(7)
  @UniqueItems()
  @Description("weekly only (required there, refused for daily): local weekdays on which an occurrence starts, 0 = Sunday … 6 = Saturday")
  weekdays?: number[];

  @Required()
  @Pattern(/^([01]\d|2[0-3]):[0-5]\d$/)
  @Description(
    'Local start time "HH:MM" (24-hour) in time_zone. A start in the spring-forward gap begins that far past the gap; in the repeated autumn hour, at its first occurrence',
  )
  start: string;

  @Required()
  @Integer()
  @Minimum(1)
  @Maximum(10080)
  @Description("Length of each occurrence in elapsed minutes (a daily window at most 1440, a weekly one at most 10080)")
  duration_mins: number;

  @Required() @MinLength(1) @MaxLength(64) @Description('IANA time zone name ("Europe/Berlin", "America/New_York", "UTC")') time_zone: string;
}

/**
 * Body of POST /maintenance-windows. One-off: starts_at and ends_at. Recurring: recurrence. Exactly one of
 * the two forms (else 400). Targets are nodes or folders (a folder covers everything beneath it).
 */
@AdditionalProperties(false)
@Description("Body of POST /maintenance-windows: a one-off or recurring window over nodes or folders.")
export class MaintenanceWindowCreate {
  @Description("Shown name of the window") @Required() @MinLength(1) @MaxLength(200) name: string;

  @Required() @Enum("node", "folder") @Description("What target_ids name") target_kind: "node" | "folder";

  @Required()
  @CollectionOf(String)
  @Format("uuid")
  @MinItems(1)
  @MaxItems(MAX_WINDOW_TARGETS)
  @Description("Nodes or folders the caller can see (else 400 unknown_reference); repeats are kept once")
  target_ids: string[];

  @Optional() @MaxLength(64) @Description("One-off: RFC 3339 start (inclusive)") starts_at?: string;

  @Optional() @MaxLength(64) @Description("One-off: RFC 3339 end (exclusive), after starts_at") ends_at?: string;

  @Optional() @Description("Recurring window (instead of starts_at/ends_at)") recurrence?: RecurrenceModel;
}

@Description("The recurrence of a stored maintenance window.")
export class RecurrenceView {
  @Description("daily: every day; weekly: on the listed weekdays") @Required() @Enum("daily", "weekly") kind: string;
  @Description("weekly only: local weekdays on which an occurrence starts, 0 = Sunday … 6 = Saturday") @Optional() @CollectionOf(Number) weekdays?: number[];
  @Description("Local start time HH:MM (24-hour) in time_zone") @Required() start: string;
  @Description("Length of each occurrence, minutes") @Required() @Integer() duration_mins: number;
  @Description("IANA time zone name") @Required() time_zone: string;
}

@Description("A maintenance window as stored (GET /maintenance-windows, GET /maintenance-windows/{id}).")
export class MaintenanceWindowView {
  @Required() @Format("uuid") id: string;
  @Description("Shown name of the window") @Required() name: string;
  @Description("What target_ids name: nodes or folders (a folder covers everything beneath it)") @Required() @Enum("node", "folder") target_kind: string;
  @Description("The nodes or folders the window covers") @Required() @CollectionOf(String) target_ids: string[];
  @Required() @Nullable(String) @Format("date-time") @Description("One-off windows; null for recurring ones") starts_at: string | null;
  @Description("One-off windows (exclusive); null for recurring ones") @Required() @Nullable(String) @Format("date-time") ends_at: string | null;
  @Required() @Nullable(RecurrenceView) @Description("Recurring windows; null for one-off ones") recurrence: RecurrenceView | null;
  @Description("Username or token name of the caller who created it") @Required() created_by: string;
  @Required() @Format("date-time") created_at: string;
}

/** A window active at the asked instant, with the occurrence that covers it. */
@Description("A maintenance window active at the asked instant, with the occurrence that covers it (GET /maintenance-windows/active).")
export class ActiveMaintenanceWindow extends MaintenanceWindowView {
  @Required() @Format("date-time") @Description("Start of the occurrence covering the instant") active_from: string;
  @Required() @Format("date-time") @Description("End of that occurrence (exclusive)") active_until: string;
}
