import type { MetricCounter, PluginMetrics } from "../../../core/index.js";
import { RULE_ACTIONS, type RuleAction } from "../rules/vocab.js";
import type { ListenerService } from "./ListenerService.js";

/** Per listener (`http` for the HTTP ingest): what the pipeline dropped, and what the ingest received. */
export interface ListenerTally {
  http_received: number;
  queue_full: number;
  source_disabled: number;
}

/** What the pipeline's metrics read at scrape time (the objects are the pipeline's own, read live). */
export interface PipelineReadings {
  /** Events by the rules' outcome (a labelled inc per event costs more than reading these at scrape time). */
  readonly matchCounts: Readonly<Record<RuleAction, number>>;
  readonly byListener: ReadonlyMap<string, ListenerTally>;
  written(): number;
  writeFailures(): number;
  liveLeftOut(): number;
  /** Events waiting for the next batched write. */
  queueDepth(): number;
  queueJournalStats(): { backlog: number; bytes: number; dropped: number } | null;
}

/**
 * Registers the events metrics (once per kernel): received, malformed and dropped per listener (the listeners' own
 * counters, split by reason with the pipeline's tallies), rule matches by action, writes, and the queue. Answers the
 * dead-letter counter (the store increments it).
 */
export function registerPipelineMetrics(m: PluginMetrics, listeners: ListenerService, r: PipelineReadings): MetricCounter<"target"> {
  m.counter({
    name: "rule_matches_total",
    help: "Events an event rule matched, by the outcome (fired, cleared, suppressed, counted).",
    labelNames: ["action"],
    collect: (report) => {
      for (const action of RULE_ACTIONS) if (action !== "unmatched" && r.matchCounts[action] > 0) report({ action }, r.matchCounts[action]);
    },
  });
  registerListenerMetrics(m, listeners, r.byListener);
  m.counter({ name: "written_total", help: "Events written to the store.", collect: (report) => report({}, r.written()) });
  const deadLetters = m.counter({
    name: "dead_letters_total",
    help: "Events PostgreSQL refused (kept in core.dead_letters with the reason), by target table.",
    labelNames: ["target"],
  });
  m.counter({
    name: "live_left_out_total",
    help: "Received events the live channel did not carry (it sends a sample of each ingest batch).",
    collect: (report) => report({}, r.liveLeftOut()),
  });
  m.counter({
    name: "write_failures_total",
    help: "Event writes that failed (a batch retried, or an event the store refused).",
    collect: (report) => report({}, r.writeFailures()),
  });
  m.gauge({ name: "queue_depth", help: "Events waiting for the next batched write.", collect: (g) => g.set({}, r.queueDepth()) });
  registerJournalMetrics(m, listeners, r);
  return deadLetters;
}

/** Received, malformed and dropped messages per listener. */
function registerListenerMetrics(m: PluginMetrics, listeners: ListenerService, byListener: ReadonlyMap<string, ListenerTally>): void {
  m.counter({
    name: "received_total",
    help: "Messages received per listener (syslog.udp, syslog.tcp, syslog.tls, traps.udp, http for the HTTP ingest), malformed ones included.",
    labelNames: ["listener"],
    collect: (report) => {
      for (const l of listeners.listeners()) report({ listener: l.name }, l.counters.received);
      const http = byListener.get("http");
      if (http) report({ listener: "http" }, http.http_received);
    },
  });
  m.counter({
    name: "malformed_total",
    help: "Messages per listener that did not parse (stored raw where possible).",
    labelNames: ["listener"],
    collect: (report) => {
      for (const l of listeners.listeners()) report({ listener: l.name }, l.counters.malformed);
    },
  });
  m.counter({
    name: "dropped_total",
    help: "Messages dropped per listener and reason: queue_full (the store is slower than the senders), source_disabled, refused (over a limit, unknown community or user).",
    labelNames: ["listener", "reason"],
    collect: (report) => {
      const zero = { http_received: 0, queue_full: 0, source_disabled: 0 };
      const bound = new Set<string>();
      // Every bound listener has its three reasons (a zero too: the syslog listeners' messages no longer pass here one by one).
      for (const l of listeners.listeners()) {
        bound.add(l.name);
        const t = byListener.get(l.name) ?? zero;
        report({ listener: l.name, reason: "refused" }, Math.max(0, l.counters.dropped - t.queue_full - t.source_disabled));
        report({ listener: l.name, reason: "queue_full" }, t.queue_full);
        report({ listener: l.name, reason: "source_disabled" }, t.source_disabled);
      }
      for (const [listener, t] of byListener) {
        if (bound.has(listener)) continue;
        report({ listener, reason: "queue_full" }, t.queue_full);
        report({ listener, reason: "source_disabled" }, t.source_disabled);
      }
    },
  });
}

/** The ingest journals: the syslog workers' and the queue journal, summed. */
function registerJournalMetrics(m: PluginMetrics, listeners: ListenerService, r: PipelineReadings): void {
  m.gauge({
    name: "journal_backlog",
    help: "Events in the ingest journals (syslog workers' and the queue journal) not yet stored (received faster than the store takes them, or the store is down).",
    collect: (g) => g.set({}, (listeners.journalStats()?.backlog ?? 0) + (r.queueJournalStats()?.backlog ?? 0)),
  });
  m.gauge({
    name: "journal_bytes",
    help: "Bytes the events ingest journals hold on disk.",
    collect: (g) => g.set({}, (listeners.journalStats()?.bytes ?? 0) + (r.queueJournalStats()?.bytes ?? 0)),
  });
  m.counter({
    name: "journal_dropped_total",
    help: "Received events the ingest journals dropped unstored (past their size or age bound: pluginConfig.events.ingest.journal).",
    collect: (report) => report({}, (listeners.journalStats()?.dropped ?? 0) + (r.queueJournalStats()?.dropped ?? 0)),
  });
  m.counter({
    name: "ingest_restarts_total",
    help: "Syslog ingest threads restarted after they died, by thread: worker (receives and journals) or parser.",
    labelNames: ["thread"],
    collect: (report) => {
      const n = listeners.ingestRestarts();
      if (!n) return;
      report({ thread: "worker" }, n.worker);
      report({ thread: "parser" }, n.parser);
    },
  });
}
