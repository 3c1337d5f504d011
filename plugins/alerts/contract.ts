/**
 * The alerts plugin's contract: bus events for notifications, node states, and incidents raised by other plugins' rules
 * (the EventAlerts token its manifest exports). Imports nothing of the plugin: its internals import from here.
 */

export type Severity = "info" | "warning" | "critical";
export type NodeState = "ok" | "warning" | "critical" | "unknown" | "unreachable" | "maintenance";

/** The metric of incidents raised by event rules (through EventAlerts): a mute of this metric silences a node's event alerts. */
export const EVENT_METRIC = "event_rule";

/** An incident another plugin raises on a node through EventAlerts (its check is that plugin's rule id). */
export interface ExternalAlert {
  node_id: string;
  check_id: string;
  severity: Severity;
  title: string;
  at_ms: number;
  observed_value?: number | null;
  threshold_value?: number | null;
}

/** An incident on a subject that is not a node (a netcloud organization), raised by the plugin that owns it through EventAlerts. */
export interface SubjectAlert {
  subject_kind: "netcloud_org";
  /** The subject's readable name (acks name it as "<kind>:<name>"). */
  subject_name: string;
  check_id: string;
  severity: Severity;
  /** Default: the severity ("unreachable" for a subject that cannot be reached). */
  state?: NodeState;
  title: string;
  at_ms: number;
}

/**
 * Event-driven incidents with history, acks and notifications like any other, committed by the alert engine
 * (metric EVENT_METRIC; one incident per node + check, the check id being the caller's rule id).
 */
export abstract class EventAlerts {
  /** Fires (or moves the severity of) node + check. False when the engine is not running or the node is unknown. */
  abstract fire(a: ExternalAlert): Promise<boolean>;
  /** Clears node + check. False when no such incident is open. */
  abstract clear(nodeId: string, checkId: string): Promise<boolean>;
  /** Fires (or moves the severity of) an incident on a subject that is not a node. False when the engine is not running. */
  abstract fireSubject(a: SubjectAlert): Promise<boolean>;
  /** Clears a subject incident. False when none is open. */
  abstract clearSubject(kind: SubjectAlert["subject_kind"], name: string, checkId: string): Promise<boolean>;
  /** The open incidents of external checks, for the caller to restore its own state at start. */
  abstract open(): { node_id: string; check_id: string; severity: ExternalAlert["severity"]; fired_at_ms: number }[];
}

/** A committed transition, as written to history (spec: Alert history row) plus its incident key. */
/** The root cause an unreachable incident is a symptom of: the open unreachable incident of a node on its upstream path. */
export interface SymptomOf {
  /** The cause's incident key. */
  incident_key: string;
  /** The cause's node. */
  node: string;
  /** That node's current name (inventory); null when it is gone. */
  node_name: string | null;
}

/**
 * Root-cause links as stored (the alerts plugin's manifest exports this token): what the notifications plugin reads
 * again after its settle time, since a symptom may be marked a moment after its fire was announced.
 */
export abstract class AlertSymptoms {
  /** The cause the latest fire of this incident is (or was) a symptom of; null when it is a root cause or unknown. */
  abstract symptomOf(incidentKey: string): Promise<SymptomOf | null>;
}

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
  /**
   * Set when this unreachable incident is a symptom of an upstream node's (topology plugin loaded): on its fire when the
   * cause was already open, on its clear when it fired (or was later marked) as one. A symptom found after its fire
   * was announced is written to the store only (active alert and fire history row), not announced again.
   */
  symptom_of?: SymptomOf | null;
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
