import { CollectionOf, Description, Enum, Format, Integer, MaxLength, Maximum, Minimum, Nullable, Optional, Required } from "@tsed/schema";
import { AckState, NODE_STATES, SEVERITIES, SUBJECT_KINDS, SymptomRef } from "./AlertModels.js";

/** The query of GET /alerts/calendar. */
export class CalendarQuery {
  @Integer() @Minimum(1) @Maximum(366) @Description("Days back from now, 1 to 366, default 28") days: number = 28;
}

/** The query of GET /alerts/top-nodes. */
export class TopNodesQuery {
  @Integer() @Minimum(60) @Maximum(31622400) @Description("Seconds back from now, 60 to 31622400 (366 days), default 86400") window: number = 86400;
  @Integer() @Minimum(1) @Maximum(100) @Description("1 to 100, default 10") limit: number = 10;
}

/** The query of GET /alerts/transitions. */
export class TransitionsQuery {
  @Integer() @Minimum(1) @Maximum(100) @Description("1 to 100, default 12") limit: number = 12;
}

/** The query of GET /alerts/history (cursor, bounds, filters); the service checks what a schema cannot say. */
export class HistoryQuery {
  @Integer() @Minimum(1) @Maximum(1000) @Description("1 to 1000, default 100") limit: number = 100;
  @MaxLength(64) @Description("Keyset cursor: the last row's recorded_at (RFC 3339)") before?: string;
  @Format("uuid") @Description("Keyset cursor second half: the last row's id; send with before; omitted = strictly before that instant") before_id?: string;
  @MaxLength(64) @Description("recorded_at at or after (RFC 3339)") since?: string;
  @MaxLength(64) @Description("recorded_at at or before (RFC 3339)") until?: string;
  @MaxLength(200) @Description("Comma-separated info, warning, critical; empty = all; an unknown token is 400") severity?: string;
  @MaxLength(200)
  @Description("Comma-separated ok, warning, critical, unknown, unreachable, maintenance; empty = all; an unknown token is 400")
  state?: string;
  @Enum("true", "false") @Description("Boolean: false = fires only; true = clears only") resolved?: string;
  @Enum("true", "false") @Description("Boolean: true = rows of acknowledged incidents (incident key + severity); false = of the others") acked?: string;
  @MaxLength(200) @Description("Case-insensitive substring of the metric name; liveness rows (no metric) never match") metric?: string;
  @Format("uuid") @Description("One node's rows; rows of other subjects are excluded") node_id?: string;
  @MaxLength(255) @Description("Case-insensitive substring of the node's current name (inventory)") node_q?: string;
  @Format("uuid") @Description("Rows of nodes filed in that folder or anywhere beneath it (current filing)") group_id?: string;
}

/** The spec's Alert history row, field for field. */
@Description("An alert history row: one committed fire or clear (GET /alerts/history).")
export class AlertHistoryRow {
  @Required() @Format("uuid") @Description("Row identity; second half of the keyset cursor (before_id)") id: string;
  @Required()
  @Format("date-time")
  @Description("Insertion time with microseconds; first half of the keyset cursor (before): pass it back exactly as received. Rows of one flush share it")
  recorded_at: string;
  @Required() @Integer() @Description("Time the alert fired (Unix ms)") at_unix_ms: number;
  @Description("The check that raised it: a threshold rule id, or the liveness check id") @Required() @Format("uuid") check: string;
  @Required() @Nullable(String) @Description('"above" or "below"; null for liveness rows') direction: string | null;
  @Required() @Nullable(Number) @Integer() @Description("Port index for per-interface metrics; null for node-level alerts (0 is a real index)") ifindex:
    number | null;
  @Required() @Nullable(String) @Description("Port name as called now") if_name: string | null;
  @Required() @Nullable(String) @Description("Metric the check measured; liveness rows store none") metric: string | null;
  @Required() @Nullable(String) @Format("uuid") @Description("Non-null exactly when subject_kind is node") node: string | null;
  @Required() @Nullable(Number) @Description("Sample that committed the transition (threshold checks only)") observed_value: number | null;
  @Required() @Nullable(Number) @Description("Bound crossed for the committed severity") threshold_value: number | null;
  @Required() @Description("false for a fire, true for a clear") resolved: boolean;
  @Required() @Nullable(Number) @Integer() @Description("Row key of a vendor table; null for whole-node or port alerts") row: number | null;
  @Required() @Nullable(String) @Description("Name of that row when it fired") row_name: string | null;
  @Description("info, warning or critical (ordered low to high)") @Required() @Enum(...SEVERITIES) severity: string;
  @Description("The node state the transition committed") @Required() @Enum(...NODE_STATES) state: string;
  @Description("node, pool or netcloud_org") @Required() @Enum(...SUBJECT_KINDS) subject_kind: string;
  @Required() @Nullable(String) @Description("Name for subjects identified by name (a poller pool)") subject_name: string | null;
  @Required()
  @Nullable(AckState)
  @Description("Ack state of the incident (node + check + severity), shared by all its transitions; null = not acknowledged")
  acked: AckState | null;
  @Required() @Nullable(String) @Description("English alert title") title: string | null;
  @Optional()
  @Nullable(SymptomRef)
  @Description(
    "The root cause this unreachable transition was a symptom of (a fire, also when marked after it was announced; a clear of such a fire); null otherwise",
  )
  symptom_of?: SymptomRef | null;
}

/** A history row with the node's current name: one of GET /alerts/transitions. */
@Description("A recent fire or resolution with the node's current name (GET /alerts/transitions).")
export class AlertTransitionView extends AlertHistoryRow {
  @Required() @Nullable(String) @Description("The node's current name (inventory); null for other subjects or a node since deleted") node_name: string | null;
}

/** Fires in one weekday × hour cell (UTC). */
@Description("Alert fires in one weekday-by-hour cell, UTC (GET /alerts/calendar).")
export class CalendarBucket {
  @Required() @Integer() @Description("Day of the week in UTC: 0 = Sunday … 6 = Saturday") weekday: number;
  @Required() @Integer() @Description("Hour of the day in UTC, 0 to 23") hour: number;
  @Required() @Integer() @Description("Fires (history rows with resolved = false) recorded in that cell") count: number;
}

/** One node of GET /alerts/top-nodes. */
@Description("A node and its alert fire count, as GET /alerts/top-nodes ranks it.")
export class AlertNodeCount {
  @Description("The node") @Required() @Format("uuid") node_id: string;
  @Required() @Description("The node's current name") node_name: string;
  @Required() @Integer() @Description("Fires recorded for the node within the window") count: number;
}

/** Ranked result of alert node counts. */
@Description("Nodes ranked by alert fires (GET /alerts/top-nodes).")
export class TopAlertNodes {
  @Required() @CollectionOf(AlertNodeCount) @Description("Highest count first (ties by node id), at most limit") entries: AlertNodeCount[];
  @Required()
  @Description("true when the scope filter may have removed entries the caller is entitled to (every folder-scoped caller); always false for scope All")
  partial: boolean;
}

/** The history filters, validated (GET /alerts/history). */
export interface HistoryFilter {
  limit: number;
  before: { at: string; id: string | null } | null;
  since: string | null;
  until: string | null;
  severities: string[] | null;
  states: string[] | null;
  resolved: boolean | null;
  acked: boolean | null;
  metric: string | null;
  nodeId: string | null;
  nodeQ: string | null;
  groupId: string | null;
}
