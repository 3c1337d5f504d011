/**
 * The one place alert history rows are built: the alerts.history row of a fire or a clear, and
 * the transition announced for it once committed (bus `alerts.fired` / `alerts.resolved` /
 * `alerts.suppressed`, Socket.IO on `alerts.active`). The engine decides; this says what a row holds.
 */
import type { AlertTransition } from "../contract.js";
import type { ActiveRow, HistoryInsert } from "../repositories/IncidentRepository.js";
import { isThresholdCheck } from "./checks.js";
import { timeOrderedUuid } from "../../../core/index.js";

/** What a clear records besides the incident: the sample that committed it (threshold checks), for its value and the port's current name. */
export interface ClearedBy {
  observed_value: number | null;
  if_name: string | null;
}

/**
 * The history row of an incident's fire (`clearedBy` absent) or clear. Both carry the incident as
 * it fired (check, subject, severity, state, bound, title) and its fire time as `at_unix_ms`; a
 * clear of a threshold incident carries the value that cleared it (liveness and pool clears carry
 * none) and the port's name as the clearing sample gave it. Ids are time-ordered, so rows of one
 * flush sort in decision order.
 */
export function historyRow(inc: ActiveRow, clearedBy?: ClearedBy | null): HistoryInsert {
  return {
    id: timeOrderedUuid(),
    at_unix_ms: inc.fired_at_ms,
    incident_key: inc.incident_key,
    check_id: inc.check_id,
    direction: inc.direction,
    ifindex: inc.ifindex,
    if_name: clearedBy?.if_name ?? inc.if_name,
    metric: inc.metric,
    node_id: inc.node_id,
    observed_value: !clearedBy ? inc.observed_value : isThresholdCheck(inc.check_id) ? clearedBy.observed_value : null,
    threshold_value: inc.threshold_value,
    resolved: Boolean(clearedBy),
    row_key: inc.row_key,
    row_name: inc.row_name,
    severity: inc.severity,
    state: inc.state,
    subject_kind: inc.subject_kind,
    subject_name: inc.subject_name,
    title: inc.title,
  };
}

/** The transition of a committed row, in the contract's (the spec's) names. */
export function transitionOf(row: HistoryInsert, recordedAt: string, folderPath: string[]): AlertTransition {
  return {
    id: row.id,
    incident_key: row.incident_key,
    recorded_at: recordedAt,
    at_unix_ms: row.at_unix_ms,
    check: row.check_id,
    direction: row.direction,
    ifindex: row.ifindex,
    if_name: row.if_name,
    metric: row.metric,
    node: row.node_id,
    observed_value: row.observed_value,
    threshold_value: row.threshold_value,
    resolved: row.resolved,
    row: row.row_key,
    row_name: row.row_name,
    severity: row.severity,
    state: row.state,
    subject_kind: row.subject_kind,
    subject_name: row.subject_name,
    title: row.title,
    folder_path: folderPath,
  };
}
