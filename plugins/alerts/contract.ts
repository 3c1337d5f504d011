/** The alerts plugin's contract: bus events for notifications, node states, and incidents raised by other plugins' rules. */

/** `fire(alert)`, `clear(nodeId, checkId)`, `open()`, `fireSubject(alert)`, `clearSubject(kind, name, checkId)`: event-driven incidents with history, acks and notifications like any other. */
export { EventAlertService, EVENT_METRIC, type ExternalAlert, type SubjectAlert } from "./services/EventAlertService.js";

export type Severity = "info" | "warning" | "critical";
export type NodeState = "ok" | "warning" | "critical" | "unknown" | "unreachable" | "maintenance";

/** A committed transition, as written to history (spec: Alert history row) plus its incident key. */
export interface AlertTransition {
  id: string;
  incident_key: string;
  recorded_at: string;
  at_unix_ms: number;
  check: string;
  direction: string | null;
  ifindex: number | null;
  if_name: string | null;
  metric: string | null;
  node: string | null;
  observed_value: number | null;
  threshold_value: number | null;
  resolved: boolean;
  row: number | null;
  row_name: string | null;
  severity: Severity;
  state: NodeState;
  subject_kind: "node" | "pool" | "netcloud_org";
  subject_name: string | null;
  title: string | null;
  /** Folder ids from the root to the node's folder (scoped delivery); empty for non-node subjects. */
  folder_path: string[];
}

declare module "../../core/bus/EventBus.js" {
  interface BusEvents {
    /** A fire committed (notifications send it unless muted or in maintenance). */
    "alerts.fired": AlertTransition;
    "alerts.resolved": AlertTransition;
    /** A fire or clear whose notification is suppressed (mute or maintenance). */
    "alerts.suppressed": AlertTransition & { reason: "mute" | "maintenance" };
    "alerts.node.state": { node_id: string; state: NodeState; folder_path: string[] };
  }
}

/** Read-only views for the reports plugin (migration 0900): committed transitions (history) and incident acks. */
export const REPORT_HISTORY_VIEW = "alerts.report_history";
export const REPORT_ACKS_VIEW = "alerts.report_acks";
