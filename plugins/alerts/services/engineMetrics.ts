import type { MetricCounter, PluginMetrics } from "../../../core/index.js";

/** What the engine's metrics read at scrape time. */
export interface EngineReadings {
  samplesReceived(): number;
  samplesEvaluated(): number;
  flushFailures(): number;
  queueDepth(): number;
  /** Samples sent to the owner of their node's partition (another replica). */
  samplesForwarded(): number;
  /** Partitions this replica holds (ADR 0017). */
  partitionsHeld(): number;
  openIncidents(): number;
  /** Open incidents by severity. */
  bySeverity(): Record<string, number>;
  /** Nodes by state (a node the engine never saw is unknown), read from the store at scrape time. */
  nodeStates(): Promise<Record<string, number>>;
}

const SEVERITIES = ["info", "warning", "critical"] as const;
const NODE_STATES = ["ok", "warning", "critical", "unknown", "unreachable", "maintenance"] as const;

/**
 * Registers the engine's metrics (once per kernel): its queue of transitions, evaluations, fires and clears, open
 * incidents. Answers the counters the transition queue increments.
 */
export function registerEngineMetrics(m: PluginMetrics, r: EngineReadings): { transitions: MetricCounter<"kind">; dropped: MetricCounter } {
  const transitions = m.counter({
    name: "engine_transitions_total",
    help: "Incident transitions the alert engine decided, by kind (fire, clear; a severity change is a clear and a fire).",
    labelNames: ["kind"],
  });
  const dropped = m.counter({
    name: "engine_transitions_dropped_total",
    help: "Transitions dropped because the queue was full (the store did not take them for long).",
  });
  // Counters the engine keeps as numbers, read at scrape time.
  const scraped = (name: string, help: string, value: () => number) => m.counter({ name, help, collect: (report) => report({}, value()) });
  scraped("engine_samples_received_total", "Live samples the alert engine received from the bus.", r.samplesReceived);
  scraped("engine_evaluations_total", "Samples the alert engine evaluated against a threshold rule.", r.samplesEvaluated);
  scraped("engine_samples_forwarded_total", "Live samples sent to the replica owning their node's partition (ADR 0017).", r.samplesForwarded);
  scraped("engine_flush_failures_total", "Writes of the engine's transitions that failed (retried, then dropped).", r.flushFailures);
  m.gauge({
    name: "engine_queue_depth",
    help: "Transitions waiting for the engine's next write.",
    collect: (g) => g.set({}, r.queueDepth()),
  });
  m.gauge({
    name: "engine_partitions",
    help: "Partitions of the partitioned engines this replica holds (all of them when it runs alone).",
    collect: (g) => g.set({}, r.partitionsHeld()),
  });
  m.gauge({
    name: "engine_open_incidents",
    help: "Incidents the engine holds open.",
    collect: (g) => g.set({}, r.openIncidents()),
  });
  m.gauge({
    name: "active_alerts",
    help: "Open alerts (incidents) by severity.",
    labelNames: ["severity"],
    collect: (g) => {
      const counts = r.bySeverity();
      for (const severity of SEVERITIES) g.set({ severity }, counts[severity] ?? 0);
    },
  });
  m.gauge({
    name: "nodes",
    help: "Nodes of the inventory by state: ok, warning, critical, unreachable, maintenance, unknown (never polled, or its SNMP agent not answering).",
    labelNames: ["state"],
    collect: async (g) => {
      // A store that does not answer leaves the last values: the scrape itself must not fail.
      const counts = await r.nodeStates().catch(() => null);
      if (counts) for (const state of NODE_STATES) g.set({ state }, counts[state] ?? 0);
    },
  });
  return { transitions, dropped };
}
