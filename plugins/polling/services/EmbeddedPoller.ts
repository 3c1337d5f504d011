import { Inject, Injectable } from "@tsed/di";
import type { Lease, MetricCounter, MetricHistogram } from "../../../core/index.js";
import { PollLoop, type Probes } from "../poller/PollLoop.js";
import { defaultProbes } from "../poller/probes.js";
import { SampleRepository } from "../repositories/SampleRepository.js";
import { SnmpPollerService } from "../snmp/SnmpPollerService.js";
import { AssignmentService } from "./AssignmentService.js";
import { PollerRegistry } from "./PollerRegistry.js";
import { SampleSink } from "./SampleSink.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";
import { EMBEDDED_POOL } from "../contract.js";

export const EMBEDDED_POLLER_ID = "core";
export { EMBEDDED_POOL };
/** The assignment is read again this often even without inventory events (credentials, profiles change silently). */
const REFRESH_MS = 60_000;
/** Inventory events come in bursts (an import): one refresh after the burst. */
const DEBOUNCE_MS = 1000;

const INVENTORY_EVENTS = [
  "inventory.node.created",
  "inventory.node.updated",
  "inventory.node.deleted",
  "inventory.folder.created",
  "inventory.folder.updated",
  "inventory.folder.deleted",
] as const;

/**
 * The core's own poller for the `default` pool (id "core", kind embedded): registers, heartbeats
 * (so a core that was down leaves a monitoring gap behind), polls its assignment with PollLoop,
 * seeded with the rate state kept in polling.interfaces, and writes through the SampleSink.
 * The assignment follows inventory's node and folder events (debounced) and a periodic refresh.
 */
@Injectable()
export class EmbeddedPoller {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  @Inject(AssignmentService)
  private assignments: AssignmentService;

  @Inject(SampleSink)
  private sink: SampleSink;

  @Inject(SampleRepository)
  private samples: SampleRepository;

  @Inject(PollerRegistry)
  private registry: PollerRegistry;

  @Inject(SnmpPollerService)
  private snmp: SnmpPollerService;

  private loop: PollLoop | null = null;
  private lease: Lease | null = null;
  private timers: NodeJS.Timeout[] = [];
  private debounce: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void)[] = [];
  private refreshing: Promise<void> | null = null;
  private meters?: { polls: MetricCounter<"pool" | "outcome">; duration: MetricHistogram<"pool" | "outcome"> };

  /** The embedded poller's metrics (registered once, on first use). */
  private get metrics() {
    return (this.meters ??= {
      polls: this.ctx.metrics.counter({
        name: "polls_total",
        help: "Polls made by the embedded poller, by pool and outcome: ok, unreachable, snmp_timeout, snmp_auth, snmp_error (the node answered, its SNMP agent did not), failed.",
        labelNames: ["pool", "outcome"],
      }),
      duration: this.ctx.metrics.histogram({
        name: "poll_duration_seconds",
        help: "How long one poll of one node took (SNMP, liveness, URL and DNS checks at once), by pool and outcome.",
        labelNames: ["pool", "outcome"],
      }),
    });
  }

  get running(): boolean {
    return this.loop !== null;
  }

  /**
   * Takes part in polling the default pool (probes: the production ones unless given): every replica with the
   * embedded poller on tries to take the lease "embedded-poller"; the one holding it polls, the others stand by and
   * take over within about `leaseRetryMs` when it stops or dies. Resolves after the first try.
   */
  async start(probes?: Probes): Promise<void> {
    if (this.lease || this.ctx.mode !== "full") return;
    const log = this.ctx.log.child("polling.poller");
    this.lease = this.ctx.store.lease("embedded-poller", { acquired: () => this.startPolling(probes), lost: () => this.stopPolling() }, log, {
      retryMs: this.ctx.config.leaseRetryMs,
    });
    await this.lease.start();
  }

  /** Whether this replica holds the embedded poller's lease (and so polls the default pool). */
  get leader(): boolean {
    return this.lease?.held ?? false;
  }

  async stop(): Promise<void> {
    const lease = this.lease;
    this.lease = null;
    await lease?.stop();
  }

  private async startPolling(probes?: Probes): Promise<void> {
    if (this.loop) return;
    const log = this.ctx.log.child("polling.poller");
    await this.registry.register({ id: EMBEDDED_POLLER_ID, pool: EMBEDDED_POOL, kind: "embedded", version: this.ctx.version, listeners: [] });
    const source = { poller_id: EMBEDDED_POLLER_ID, pool: EMBEDDED_POOL };
    this.loop = new PollLoop({
      pollerId: EMBEDDED_POLLER_ID,
      pool: EMBEDDED_POOL,
      concurrency: this.ctx.config.concurrency,
      probes: probes ?? (await defaultProbes({ snmpTimeoutMs: this.ctx.config.snmpTimeoutMs, snmpRetries: this.ctx.config.snmpRetries, log, snmp: this.snmp })),
      sink: { write: (batch) => this.sink.accept(batch, source) },
      log,
      onPoll: (seconds, outcome) => {
        this.metrics.polls.inc({ pool: EMBEDDED_POOL, outcome });
        this.metrics.duration.observe({ pool: EMBEDDED_POOL, outcome }, seconds);
      },
    });
    this.loop.seedStates(await this.samples.interfaceStates(EMBEDDED_POOL));
    await this.refresh();
    this.loop.start();
    const beat = () => void this.registry.heartbeat(EMBEDDED_POLLER_ID, null).catch((err: Error) => log.warn("heartbeat failed", { error: err.message }));
    this.timers.push(setInterval(beat, this.registry.heartbeatSecs() * 1000));
    this.timers.push(setInterval(() => void this.refresh(), REFRESH_MS));
    for (const name of INVENTORY_EVENTS) this.unsubscribe.push(this.ctx.bus.on(name, () => this.refreshSoon()));
    log.info("embedded poller started", { pool: EMBEDDED_POOL, targets: this.loop.stats().targets });
  }

  private async stopPolling(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = null;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    const loop = this.loop;
    this.loop = null;
    if (loop) await loop.stop(5000);
    await this.refreshing;
    await this.sink.flush();
  }

  /** Reads the assignment again now (after the current read, if one is under way). */
  refresh(): Promise<void> {
    const run = async () => {
      if (!this.loop) return;
      try {
        this.loop.setTargets(await this.assignments.targets(EMBEDDED_POOL));
      } catch (err) {
        this.ctx.log.warn("assignment refresh failed", { pool: EMBEDDED_POOL, error: (err as Error).message });
      }
    };
    const next: Promise<void> = (this.refreshing ?? Promise.resolve()).then(run).finally(() => {
      if (this.refreshing === next) this.refreshing = null;
    });
    this.refreshing = next;
    return next;
  }

  stats() {
    return this.loop?.stats() ?? null;
  }

  private refreshSoon(): void {
    if (this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = null;
      void this.refresh();
    }, DEBOUNCE_MS);
  }
}
