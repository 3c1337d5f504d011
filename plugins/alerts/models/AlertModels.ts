import {
  AdditionalProperties,
  CollectionOf,
  Default,
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
  Required,
} from "@tsed/schema";

export const SEVERITIES = ["info", "warning", "critical"] as const;
export const NODE_STATES = ["ok", "warning", "critical", "unknown", "unreachable", "maintenance"] as const;
export const SUBJECT_KINDS = ["node", "pool", "netcloud_org"] as const;

/** The root cause an unreachable alert is a symptom of (docs/topology.md, "Root-cause alerts"). */
@Description("The root cause an unreachable alert is a symptom of: the open unreachable incident of a node on its upstream path (topology plugin).")
export class SymptomRef {
  @Required() @Description("The cause's incident key") incident_key: string;
  @Required() @Format("uuid") @Description("The cause's node (unreachable upstream of this alert's node)") node: string;
  @Required() @Nullable(String) @Description("That node's current name (inventory); null when it has been deleted") node_name: string | null;
}

/** The ack state of an incident (incident key + severity), shared by all its transitions. */
@Description("The ack state of an incident (node + check + severity), shared by all its transitions.")
export class AckState {
  @Required() @Description("Username of the account or name of the API token that acknowledged") by: string;
  @Required() @Format("date-time") @Description("When it was acknowledged (RFC 3339, microseconds)") at: string;
  @Required() @Nullable(String) @Description("Free-text note given with the acknowledgement") note: string | null;
}

/** An open incident (active alert) with its inbound ack state; fields named like the Alert history row. */
@Description("An active alert with its inbound ack state (GET /alerts).")
export class ActiveAlertView {
  @Required() @Format("uuid") id: string;
  @Required() @Description("Identity of the incident (subject + check + port or row); ack state is per incident key and severity") incident_key: string;
  @Description("node, pool or netcloud_org") @Required() @Enum(...SUBJECT_KINDS) subject_kind: string;
  @Required() @Nullable(String) @Format("uuid") @Description("Non-null exactly when subject_kind is node") node: string | null;
  @Required() @Nullable(String) @Description("The node's current name (inventory), null for other subjects") node_name: string | null;
  @Required() @Nullable(String) @Description("Name of a subject identified by name (a poller pool)") subject_name: string | null;
  @Description("The check that raised it: a threshold rule id, or the liveness check id") @Required() @Format("uuid") check: string;
  @Required() @Nullable(String) @Description("Metric the check measures; null for liveness alerts") metric: string | null;
  @Required() @Nullable(Number) @Integer() @Description("Port index for per-interface metrics (0 is a real index)") ifindex: number | null;
  @Required() @Nullable(String) @Description("Port name as called now") if_name: string | null;
  @Required() @Nullable(Number) @Integer() @Description("Row key of a vendor table") row: number | null;
  @Description("Name of that row when it fired") @Required() @Nullable(String) row_name: string | null;
  @Description("info, warning or critical (ordered low to high)") @Required() @Enum(...SEVERITIES) severity: string;
  @Description("The node state the alert puts its subject in") @Required() @Enum(...NODE_STATES) state: string;
  @Description("Side of the bound that was crossed (for example above); null when not a threshold alert") @Required() @Nullable(String) direction:
    string | null;
  @Description("Sample that committed the transition (threshold checks only)") @Required() @Nullable(Number) observed_value: number | null;
  @Description("Bound crossed for the current severity") @Required() @Nullable(Number) threshold_value: number | null;
  @Required() @Nullable(String) @Description("English alert title") title: string | null;
  @Required() @Format("date-time") @Description("When the incident fired") fired_at: string;
  @Required() @Format("date-time") @Description("Last change of severity or values") updated_at: string;
  @Required()
  @Nullable(AckState)
  @Description("Ack state of the incident at its current severity; null = not acknowledged")
  acked: AckState | null;
  @Optional()
  @Nullable(SymptomRef)
  @Description("Set while this unreachable alert is a symptom of an upstream node's open unreachable alert (its root cause); null otherwise")
  symptom_of?: SymptomRef | null;
}

const SUBJECT_DOC =
  'A readable subject: "pool:<pool name>" (a poller-pool alert), "netcloud_org:<organization name>", or "node:<uuid>" (same as node). Subjects other than nodes have no folder: only callers with scope All can acknowledge them.';

/**
 * Body of POST /alerts/ack. Names a subject (`node` or `subject`, exactly one), optionally narrows to one
 * incident, and records the ack (default) or clears it (`clear: true`).
 */
@AdditionalProperties(false)
@Description("Body of POST /alerts/ack: the subject (node or subject), optionally one incident, and record or clear.")
export class AckRequest {
  @Optional() @Format("uuid") @Description("The node whose incidents to acknowledge") node?: string;

  @Optional() @MinLength(1) @MaxLength(300) @Description(SUBJECT_DOC) subject?: string;

  @Optional() @Format("uuid") @Description("Only the incidents of this check (threshold rule id, or the liveness check id)") check?: string;

  @Optional() @MinLength(1) @MaxLength(200) @Description("Only the incidents of this metric (exact name)") metric?: string;

  @Optional() @Integer() @Minimum(0) @Maximum(2147483647) @Description("Only the incident of this port index") ifindex?: number;

  @Optional() @Integer() @Minimum(-2147483648) @Maximum(2147483647) @Description("Only the incident of this table row key") row?: number;

  @Optional()
  @Default(false)
  @Description(
    "false (default): record the ack (by the caller, now, with note) on each selected incident at its current severity, replacing an earlier ack. true: clear the ack of each selected incident instead (note is ignored).",
  )
  clear?: boolean;

  @Optional() @MaxLength(2000) @Description("Free-text note kept with the ack") note?: string;
}

/** One incident an ack request addressed, with its ack state after the request. */
@Description("One incident an ack request addressed, with its ack state after the request.")
export class AckedIncident {
  @Required() @Format("uuid") id: string;
  @Description("Identity of the incident (subject + check + port or row)") @Required() incident_key: string;
  @Description("node, pool or netcloud_org") @Required() @Enum(...SUBJECT_KINDS) subject_kind: string;
  @Description("Non-null exactly when subject_kind is node") @Required() @Nullable(String) @Format("uuid") node: string | null;
  @Description("Name of a subject identified by name (a poller pool)") @Required() @Nullable(String) subject_name: string | null;
  @Description("The check that raised it: a threshold rule id, or the liveness check id") @Required() @Format("uuid") check: string;
  @Description("Metric the check measures; null for liveness alerts") @Required() @Nullable(String) metric: string | null;
  @Description("Port index for per-interface metrics (0 is a real index)") @Required() @Nullable(Number) @Integer() ifindex: number | null;
  @Description("Row key of a vendor table") @Required() @Nullable(Number) @Integer() row: number | null;
  @Description("Severity the ack state applies to") @Required() @Enum(...SEVERITIES) severity: string;
  @Description("English alert title") @Required() @Nullable(String) title: string | null;
  @Required() @Nullable(AckState) @Description("Ack state after the request: null once cleared") acked: AckState | null;
}

/** Answer of POST /alerts/ack (also the payload of the alerts.ack broadcast, with the subject's fields). */
@Description("Answer of POST /alerts/ack: the incidents the request addressed, acknowledged or cleared.")
export class AckResult {
  @Required() @Integer() @Description("Incidents whose ack was recorded (0 when clearing)") acked: number;
  @Required() @Integer() @Description("Incidents whose ack was cleared (0 when recording; an incident without an ack is not counted)") cleared: number;
  @Required()
  @CollectionOf(AckedIncident)
  @Description("Every open incident the request selected (default: all open incidents of the subject), with its ack state now")
  incidents: AckedIncident[];
}

/** The query of GET /alerts: an optional folder. */
export class AlertListQuery {
  @Format("uuid")
  @Description("Only alerts of nodes filed in this folder or anywhere beneath it; 404 when the folder is unknown or outside the caller's scope")
  folder_id?: string;
}

/** Most alerts one bulk ack may name. */
export const MAX_BULK_ACK = 1000;

/** Body of POST /alerts/ack/bulk: several active alerts by id, acknowledged (or cleared) with one note. */
@AdditionalProperties(false)
@Description("Body of POST /alerts/ack/bulk: active alerts (GET /alerts ids) to acknowledge with one note, or to clear.")
export class BulkAckRequest {
  @Required()
  @CollectionOf(String)
  @Format("uuid")
  @MinItems(1)
  @MaxItems(MAX_BULK_ACK)
  @Description("Ids of active alerts (the id of GET /alerts), 1 to 1000; repeats are answered once")
  ids: string[];

  @Optional()
  @Default(false)
  @Description("false (default): record the ack (by the caller, now, with note) at each alert's current severity; true: clear it")
  clear?: boolean;

  @Optional() @MaxLength(2000) @Description("Free-text note kept with each ack (ignored when clearing)") note?: string;
}

/** The outcome for one id of a bulk ack. */
@Description("The outcome of a bulk ack for one alert id.")
export class BulkAckItem {
  @Required() @Format("uuid") @Description("The id as asked (lower case)") id: string;
  @Required()
  @Enum("acked", "cleared", "unchanged", "not_found")
  @Description(
    "acked: recorded; cleared: its ack removed; unchanged: clear asked but it had no ack; not_found: no such open alert, or outside the caller's scope (not distinguished)",
  )
  status: string;
  @Required() @Nullable(AckedIncident) @Description("The incident with its ack state now; null when not_found") incident: AckedIncident | null;
}

/** Answer of POST /alerts/ack/bulk. */
@Description("Answer of POST /alerts/ack/bulk: one item per distinct id, in the order asked.")
export class BulkAckResult {
  @Required() @Integer() @Description("Alerts whose ack was recorded") acked: number;
  @Required() @Integer() @Description("Alerts whose ack was cleared") cleared: number;
  @Required() @Integer() @Description("Ids not found (closed since, or outside the caller's scope)") not_found: number;
  @Required() @CollectionOf(BulkAckItem) @Description("Per id, in the order asked") items: BulkAckItem[];
}

/** Payload of the event alerts.ack on channel alerts.acks: the ack result plus who did what to which subject. */
export interface AckBroadcast extends AckResult {
  action: "recorded" | "cleared";
  subject_kind: string;
  node: string | null;
  subject_name: string | null;
  by: string;
  at: string;
}
