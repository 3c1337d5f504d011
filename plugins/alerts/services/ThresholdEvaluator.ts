import type { Sample } from "../../polling/contract.js";
import { classify, hitAtLevel, LEVEL_OF, levelOf, type BandHit, type Level } from "../lib/bands.js";
import { EVENT_METRIC } from "../contract.js";
import { isThresholdCheck, nodeIncidentKey } from "../lib/checks.js";
import { dwellStep, newDwellState, type DwellState } from "../lib/dwell.js";
import type { ThresholdRule } from "../lib/rules.js";
import { thresholdTitle } from "../lib/titles.js";
import type { DirectoryEntry } from "../repositories/ThresholdRepository.js";
import type { OpenIncident, OpenIncidents } from "./OpenIncidents.js";

/** Per series (node + metric + port + row): the rule tracking it, the dwell state and its open incident. */
interface SeriesState {
  node_id: string;
  metric: string;
  check_id: string;
  dwell: DwellState;
  open: OpenIncident | null;
  /** Time of the last sample judged (Unix ms). */
  last_ms: number;
}

const seriesKey = (nodeId: string, metric: string, ifindex: number | null, row: number | null) => `${nodeId}|${metric}|${ifindex ?? ""}|${row ?? ""}`;

/**
 * Threshold evaluation: each live sample against the rule that applies to it. A change of severity is committed after
 * the rule's dwell_samples consecutive samples agree (lib/dwell.ts): a fire opens the incident node + check (+ port or
 * row); a severity change is a clear of the old severity followed by a fire of the new one; a clear closes it. When the
 * rule that applies to a series changes, an open incident of the old rule is cleared at once and the new rule starts
 * from normal.
 */
export class ThresholdEvaluator {
  private series = new Map<string, SeriesState>();
  /** Metrics that have series state (a metric whose rules all went must still clear its incidents). */
  private seriesMetrics = new Map<string, number>();

  constructor(private readonly incidents: OpenIncidents) {}

  reset(): void {
    this.series = new Map();
    this.seriesMetrics = new Map();
  }

  /** Whether some series of `metric` has state (its samples matter even when no rule names the metric any more). */
  tracks(metric: string): boolean {
    return this.seriesMetrics.has(metric);
  }

  /** Resumes the series of a threshold incident open in the store (at start), at its severity. */
  restore(inc: OpenIncident): void {
    if (!inc.node_id || !inc.metric || inc.metric === EVENT_METRIC || !isThresholdCheck(inc.check_id) || inc.severity === "info") return;
    const key = seriesKey(inc.node_id, inc.metric, inc.ifindex, inc.row_key);
    this.series.set(key, {
      node_id: inc.node_id,
      metric: inc.metric,
      check_id: inc.check_id,
      dwell: newDwellState(LEVEL_OF[inc.severity]),
      open: inc,
      last_ms: inc.fired_at_ms,
    });
    this.seriesMetrics.set(inc.metric, (this.seriesMetrics.get(inc.metric) ?? 0) + 1);
  }

  /**
   * Judges one sample of a node in the inventory against its rule (null: no rule applies any more). A sample older than
   * the last one judged is skipped, and with `once` one as old too: a forwarded sample the replay of the store already
   * judged (ADR 0017).
   */
  evaluate(s: Sample, entry: DirectoryEntry, rule: ThresholdRule | null, once = false): void {
    const key = seriesKey(entry.id, s.metric, s.ifindex, s.row);
    let st = this.series.get(key);
    if (st && (s.at_unix_ms < st.last_ms || (once && s.at_unix_ms === st.last_ms))) return;
    if (st) st.last_ms = s.at_unix_ms;
    if (!rule) {
      if (st) {
        if (st.open) this.incidents.clear(st.open, s.value, s);
        this.drop(key, st);
      }
      return;
    }
    if (!st) {
      st = { node_id: entry.id, metric: s.metric, check_id: rule.id, dwell: newDwellState(0), open: null, last_ms: s.at_unix_ms };
      this.series.set(key, st);
      this.seriesMetrics.set(s.metric, (this.seriesMetrics.get(s.metric) ?? 0) + 1);
    } else if (st.check_id !== rule.id) {
      if (st.open) this.incidents.clear(st.open, s.value, s);
      st.check_id = rule.id;
      st.dwell = newDwellState(0);
      st.open = null;
    }
    const hit = classify(s.value, rule);
    const committed = dwellStep(st.dwell, levelOf(hit), rule.dwell_samples);
    if (committed === null) {
      // Same severity on the other side of a band (above → below): the open incident names the wrong bound; move it.
      if (st.open && hit && hit.severity === st.open.severity && hit.direction !== st.open.direction) {
        this.incidents.clear(st.open, s.value, s);
        st.open = this.fire(s, entry, rule, hit);
      }
      return;
    }
    if (st.open) {
      this.incidents.clear(st.open, s.value, s);
      st.open = null;
    }
    if (committed > 0) st.open = this.fire(s, entry, rule, hitAtLevel(committed as Level, s.value, rule)!);
  }

  /** A threshold was deleted: its series' open incidents are cleared and their state goes. */
  clearCheck(checkId: string): void {
    for (const [key, st] of this.series) {
      if (st.check_id !== checkId) continue;
      if (st.open) this.incidents.clear(st.open, null, null);
      this.drop(key, st);
    }
  }

  /** The series of these nodes go, incidents untouched (their partition moved to another replica). */
  forgetNodes(owned: (nodeId: string) => boolean): void {
    for (const [key, st] of this.series) if (owned(st.node_id)) this.drop(key, st);
  }

  /** A node was deleted: its series' state goes (the engine clears its incidents). */
  forgetNode(nodeId: string): void {
    for (const [key, st] of this.series) if (st.node_id === nodeId) this.drop(key, st);
  }

  private fire(s: Sample, entry: DirectoryEntry, rule: ThresholdRule, hit: BandHit): OpenIncident {
    const inc: OpenIncident = {
      incident_key: nodeIncidentKey(entry.id, rule.id, s.ifindex, s.row),
      subject_kind: "node",
      node_id: entry.id,
      subject_name: null,
      check_id: rule.id,
      metric: s.metric,
      ifindex: s.ifindex,
      if_name: s.if_name,
      row_key: s.row,
      row_name: s.row_name,
      severity: hit.severity,
      state: hit.severity,
      direction: hit.direction,
      observed_value: s.value,
      threshold_value: hit.threshold,
      title: thresholdTitle({
        metric: s.metric,
        node_name: entry.name,
        ifindex: s.ifindex,
        if_name: s.if_name,
        row: s.row,
        row_name: s.row_name,
        direction: hit.direction,
        threshold: hit.threshold,
      }),
      fired_at_ms: s.at_unix_ms,
      folder_path: entry.folder_path,
    };
    this.incidents.fire(inc, s.metric);
    return inc;
  }

  private drop(key: string, st: SeriesState): void {
    this.series.delete(key);
    const n = (this.seriesMetrics.get(st.metric) ?? 1) - 1;
    if (n <= 0) this.seriesMetrics.delete(st.metric);
    else this.seriesMetrics.set(st.metric, n);
  }
}
