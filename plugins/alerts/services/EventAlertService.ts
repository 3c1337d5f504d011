import { Inject, Injectable } from "@tsed/di";
import type { EventAlerts, ExternalAlert, SubjectAlert } from "../contract.js";
import { AlertEngine } from "./AlertEngine.js";

/**
 * Incidents raised by another plugin's rules (the events plugin's event rules), committed by the alert
 * engine like any other: a history row per fire and clear, the active alert with its ack state, node
 * states, mutes (metric EVENT_METRIC) and maintenance, the bus events notifications send from, and
 * the Socket.IO channel. The check id is the caller's rule id; one incident per node + check.
 */
@Injectable()
export class EventAlertService implements EventAlerts {
  @Inject(AlertEngine)
  private engine: AlertEngine;

  /** Fires (or moves the severity of) node + check. False when the engine is not running or the node is unknown. */
  fire(a: ExternalAlert): Promise<boolean> {
    return this.engine.raiseExternal(a);
  }

  /** Clears node + check. False when no such incident is open. */
  clear(nodeId: string, checkId: string): Promise<boolean> {
    return this.engine.clearExternal(nodeId, checkId);
  }

  /** Fires (or moves the severity of) an incident on a subject that is not a node (a netcloud organization). False when the engine is not running. */
  fireSubject(a: SubjectAlert): Promise<boolean> {
    return this.engine.raiseSubject(a);
  }

  /** Clears a subject incident. False when none is open. */
  clearSubject(kind: SubjectAlert["subject_kind"], name: string, checkId: string): Promise<boolean> {
    return this.engine.clearSubject(kind, name, checkId);
  }

  /** The open incidents of external checks, for the caller to restore its own state at start. */
  open(): { node_id: string; check_id: string; severity: ExternalAlert["severity"]; fired_at_ms: number }[] {
    return this.engine.openExternal();
  }

  /** Commits what is pending now rather than at the end of the engine's flush window. */
  flush(): Promise<void> {
    return this.engine.flushNow();
  }
}
