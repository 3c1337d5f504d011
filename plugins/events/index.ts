import { definePlugin, pruneDeadLetters, sqlMigrationsFrom, TurnBatcher, type PluginContext } from "../../core/index.js";
import { eventsBundleTables } from "./bundle.js";
import { EventAlerts } from "../alerts/contract.js";
import { NodeAddresses } from "../inventory/contract.js";
import { HostCounters } from "../polling/contract.js";
import { SyslogMirror } from "./contract.js";
import type { Inbound } from "./lib/types.js";
import { eventsConfigSchema, type EventsConfig } from "./context.js";
import { EventController } from "./controllers/EventController.js";
import { EventRuleController } from "./controllers/EventRuleController.js";
import { EventSourceController } from "./controllers/EventSourceController.js";
import { PollerTrapUserController } from "./controllers/PollerTrapUserController.js";
import { TrapNameController } from "./controllers/TrapNameController.js";
import { EventRepository } from "./repositories/EventRepository.js";
import { RuleRepository } from "./repositories/RuleRepository.js";
import { SourceRepository } from "./repositories/SourceRepository.js";
import { TrapNameRepository } from "./repositories/TrapNameRepository.js";
import { EventPipeline, liveView } from "./services/EventPipeline.js";
import { EventQueryService } from "./services/EventQueryService.js";
import { IngestService } from "./services/IngestService.js";
import { liveFilter } from "./services/liveFilter.js";
import { LISTENERS } from "./lib/receivers.js";
import { eventsPassiveReceiver } from "./poller/passive.js";
import { ListenerService } from "./services/ListenerService.js";
import { RuleService } from "./services/RuleService.js";
import { SourceService } from "./services/SourceService.js";
import { SyslogUdpMirror } from "./services/SyslogUdpMirror.js";
import { TrapNameService } from "./services/TrapNameService.js";

export * from "./contract.js";
export type { EventsConfig } from "./context.js";

/** How often the stored journal ranges below each journal's checkpoint are forgotten. */
const PRUNE_RANGES_MS = 30_000;
/** Per running plugin context: what stop() undoes. */
const undo = new WeakMap<object, (() => void)[]>();

async function start(ctx: PluginContext<EventsConfig>): Promise<void> {
  if (ctx.mode !== "full") return;
  const pipeline = ctx.get(EventPipeline);
  // What the listeners receive goes to the forwarding tee (events.received) as well as to the store.
  const feed = new TurnBatcher(ctx.bus, "events.received", (events: Inbound[]) => ({ events }));
  await pipeline.start(
    ctx.get(EventAlerts),
    (rows) => {
      // One message per folder path per flush: a scoped subscriber gets the events of its folders only.
      const groups = new Map<string, typeof rows>();
      for (const r of rows) {
        const key = r.folder_path.join("/");
        const g = groups.get(key);
        if (g) (g as unknown[]).push(r);
        else groups.set(key, [r]);
      }
      for (const g of groups.values()) ctx.realtime.publish("live", "events", g.map(liveView), { folders: g[0].folder_path });
    },
    (m) => feed.push(m),
  );
  // The queue's overflow is reported with the core's host telemetry (GET /system/hosts), as well as by the metrics.
  const counters = ctx.get(HostCounters);
  counters.register("events_queue_dropped", () => pipeline.stats().dropped_queue_full);
  const listeners = ctx.get(ListenerService);
  // The syslog workers' journals and the queue journal (traps, HTTP ingest, forwarded events) together.
  counters.register("events_journal_dropped", () => (listeners.journalStats()?.dropped ?? 0) + (pipeline.queueJournalStats()?.dropped ?? 0));
  counters.register("events_journal_backlog", () => (listeners.journalStats()?.backlog ?? 0) + (pipeline.queueJournalStats()?.backlog ?? 0));
  const repo = ctx.get(EventRepository);
  await listeners.start(
    (m) => {
      feed.push(m);
      return pipeline.accept(m);
    },
    {
      state: pipeline.ingestState(),
      onBatch: (b, ack) => pipeline.acceptBatch(b, ack),
      storedRanges: (id, from) => repo.storedRanges(id, from),
    },
  );
  const book = ctx.get(NodeAddresses);
  const prune = setInterval(() => {
    const q = pipeline.queueJournalStats();
    const checkpoints = [...(listeners.ingest?.checkpoints() ?? []), ...(q ? ([[q.id, q.checkpointed]] as const) : [])];
    for (const [id, below] of checkpoints)
      repo.pruneRanges(id, below).catch((err: unknown) => ctx.log.warn("events: journal ranges not pruned", { error: err }));
  }, PRUNE_RANGES_MS);
  prune.unref();
  undo.set(ctx, [
    book.onReload((changed) => pipeline.bookReloaded(changed)),
    // The workers copy every message for the feed only while somebody (the forwarding tee) listens to it.
    ctx.bus.watchListeners("events.received", (n) => listeners.ingest?.setFlags(n > 0, true)),
    () => clearInterval(prune),
  ]);
}

async function stop(ctx: PluginContext<EventsConfig>): Promise<void> {
  if (ctx.mode !== "full") return;
  for (const off of undo.get(ctx) ?? []) off();
  undo.delete(ctx);
  const listeners = ctx.get(ListenerService);
  await listeners.stop();
  await ctx.get(EventPipeline).stop();
  await listeners.exitWorkers();
}

export const eventsPlugin = definePlugin({
  id: "events",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Passive events: syslog (UDP, TCP, TLS) and SNMP trap receivers, HTTP ingest, event sources and rules raising alerts, the event list, stats and live stream",
  dependsOn: { inventory: "^0.1.0", polling: "^0.1.0", alerts: "^0.1.0" },
  // Its stats count flow records from flows' published rollup views when flows is loaded (EventRepository.flowQuery), and do without otherwise.
  optionalDependsOn: { flows: "^0.1.0" },
  // Remote pollers run the same receivers for their pool and forward to POST /events/forwarded.
  contributes: { "polling.passive": [eventsPassiveReceiver] },
  controllers: [EventController, EventRuleController, EventSourceController, PollerTrapUserController, TrapNameController],
  providers: [
    EventPipeline,
    EventRepository,
    EventQueryService,
    IngestService,
    ListenerService,
    RuleService,
    RuleRepository,
    SourceService,
    SourceRepository,
    SyslogUdpMirror,
    TrapNameRepository,
    TrapNameService,
  ],
  // The UDP syslog fast path the forwarding tee relays verbatim, unfiltered destinations through.
  exports: [{ provide: SyslogMirror, use: SyslogUdpMirror }],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  listeners: LISTENERS.map((l) => ({
    name: l.name,
    stream: l.stream,
    protocol: l.protocol,
    portKey: `${l.name.startsWith("traps") ? "traps" : "syslog"}.${l.protocol}`,
  })),
  channels: [
    {
      name: "live",
      permission: "read",
      scoped: true,
      filter: liveFilter,
      maxBuffered: 1000,
      description: "received events as they are stored (event events.events: an array of events); subscribe with filter {kind, node_id, severity}",
    },
  ],
  jobs: [
    {
      name: "partitions",
      every: "1 hour",
      handler: async (_job, ctx) => {
        await ctx.get(EventPipeline).maintainPartitions();
        // The dead letters (events PostgreSQL refused) are kept 30 days, 100,000 at most (docs/operations.md).
        await pruneDeadLetters(ctx.store);
      },
    },
  ],
  bundle: { tables: eventsBundleTables },
  config: eventsConfigSchema,
  start,
  stop,
});
