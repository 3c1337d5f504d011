import { Inject, Injectable } from "@tsed/di";
import { isPgError, PG_ERROR, type MetricCounter } from "../../../core/index.js";
// Exported by inventory's manifest (its contract); the class is imported from its file.
import { NodeFacts } from "../../inventory/contract.js";
import type { Sample } from "../contract.js";
import type { PollBatch } from "../poller/wire.js";
import { dayStart, SampleRepository, sampleKey } from "../repositories/SampleRepository.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

const DAY_MS = 86_400_000;
/** Days of partitions kept ready ahead of today. */
const DAYS_AHEAD = 2;

/** Which poller a batch came from (stamped on its samples and reachability events). */
export interface BatchSource {
  poller_id: string;
  pool: string;
}

interface Pending {
  batch: PollBatch;
  source: BatchSource;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface SinkOptions {
  /** Longest a batch waits for others to share its write (ms). */
  flushMs: number;
  /** A flush starts at once when this many samples wait. */
  maxSamples: number;
}

/**
 * The core side of every poller: batched writes of samples to polling.samples (day partitions,
 * created on demand and ahead) and polling.latest, interface state to polling.interfaces, facts
 * to inventory (NodeFacts.recordFacts), then the bus: "polling.sample" per poll (or per
 * backfill batch), with only the samples newly stored, and "polling.reachability" for live polls.
 * accept() resolves once the batch is committed and announced: a remote poller's 2xx means stored.
 *
 * Backfilled samples (a remote poller's store-and-forward buffer) are stored and go on the bus
 * with `backfill: true` on each sample; the alert engine skips them (alerts resume from now), and
 * no reachability event is emitted for them.
 */
@Injectable()
export class SampleSink {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  @Inject(SampleRepository)
  private repo: SampleRepository;

  @Inject(NodeFacts)
  private nodes: NodeFacts;

  private pending: Pending[] = [];
  private pendingSamples = 0;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private knownDays = new Set<number>();
  private daysLoaded = false;
  private meters?: { batches: MetricCounter<"pool" | "backfill">; written: MetricCounter<"pool">; failures: MetricCounter };

  /** The sink's metrics (registered once, on first use; the pending gauge is read on scrape). */
  private get metrics() {
    if (this.meters) return this.meters;
    this.ctx.metrics.gauge({ name: "samples_pending", help: "Samples waiting for the next batched write.", collect: (g) => g.set({}, this.pendingSamples) });
    return (this.meters = {
      batches: this.ctx.metrics.counter({
        name: "batches_received_total",
        help: "Batches of samples received from pollers (one per live poll of the embedded poller), by pool and backfill (true, false).",
        labelNames: ["pool", "backfill"],
      }),
      written: this.ctx.metrics.counter({
        name: "samples_written_total",
        help: "Samples newly stored (duplicates not counted), by pool.",
        labelNames: ["pool"],
      }),
      failures: this.ctx.metrics.counter({ name: "sample_write_failures_total", help: "Batched sample writes that failed (their pollers retry)." }),
    });
  }
  readonly options: SinkOptions = { flushMs: 200, maxSamples: 5000 };

  /** Queues a batch for the next write; resolves once it is committed and on the bus. Its samples are stamped with the source and backfill flag. */
  accept(batch: PollBatch, source: BatchSource): Promise<void> {
    for (const s of batch.samples) {
      s.pool = source.pool;
      s.poller_id = source.poller_id;
      s.backfill = batch.backfill;
    }
    this.metrics.batches.inc({ pool: source.pool, backfill: String(batch.backfill) });
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ batch, source, resolve, reject });
      this.pendingSamples += batch.samples.length;
      if (this.pendingSamples >= this.options.maxSamples) this.flushSoon(0);
      else this.flushSoon(this.options.flushMs);
    });
  }

  /** Writes whatever waits now; resolves when everything accepted so far is written (shutdown). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.take();
    return this.chain;
  }

  /** Partitions for today and the days ahead; drops whole days older than the retention. Returns the days dropped. */
  async maintainPartitions(now = Date.now()): Promise<number[]> {
    const today = dayStart(now);
    const wanted = Array.from({ length: DAYS_AHEAD + 1 }, (_, i) => today + i * DAY_MS);
    await this.ensureDays(wanted, true);
    const cutoff = today - this.ctx.config.retentionDays * DAY_MS;
    const dropped: number[] = [];
    for (const day of await this.repo.partitionDays()) {
      if (day >= cutoff) continue;
      await this.repo.dropPartition(day);
      this.knownDays.delete(day);
      dropped.push(day);
    }
    if (dropped.length) this.ctx.log.info("sample partitions dropped (retention)", { days: dropped.map((d) => new Date(d).toISOString().slice(0, 10)) });
    return dropped;
  }

  private flushSoon(ms: number): void {
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.take();
    }, ms);
  }

  /** Everything waiting becomes the next write (writes run one after the other). */
  private take(): void {
    const taken = this.pending;
    this.pending = [];
    this.pendingSamples = 0;
    if (!taken.length) return;
    this.chain = this.chain
      .then(() => this.store(taken))
      .catch((err: Error) => {
        // store() settles its writers itself; this only keeps the chain going after an unexpected throw.
        this.ctx.log.error("sample write chain error", { error: err.message });
        for (const p of taken) p.reject(err);
      });
  }

  private async ensureDays(days: number[], refresh = false): Promise<void> {
    if (!this.daysLoaded || refresh) {
      this.knownDays = new Set(await this.repo.partitionDays());
      this.daysLoaded = true;
    }
    const missing = [...new Set(days)].filter((d) => !this.knownDays.has(d));
    if (!missing.length) return;
    await this.repo.createPartitions(missing);
    for (const d of missing) this.knownDays.add(d);
  }

  /** One transaction for every batch taken; then facts, then the bus. Writers learn the outcome. */
  private async store(taken: Pending[]): Promise<void> {
    const now = Date.now();
    const oldest = dayStart(now) - this.ctx.config.retentionDays * DAY_MS;
    const newest = dayStart(now) + (DAYS_AHEAD + 1) * DAY_MS;
    let outside = 0;
    const samples: Sample[] = [];
    for (const p of taken) {
      for (const s of p.batch.samples) {
        // Older than the retention would be dropped at once; far in the future is a broken clock.
        if (s.at_unix_ms < oldest || s.at_unix_ms >= newest) outside++;
        else samples.push(s);
      }
    }
    if (outside) this.ctx.log.warn("samples outside the kept history skipped", { count: outside });
    let inserted: Set<string>;
    try {
      inserted = await this.writeAll(taken, samples, false);
    } catch (err) {
      // check_violation: no partition for a row (another replica's retention dropped one we thought we had): reload and retry once.
      if (!isPgError(err, PG_ERROR.checkViolation)) return this.fail(taken, err as Error);
      try {
        inserted = await this.writeAll(taken, samples, true);
      } catch (again) {
        return this.fail(taken, again as Error);
      }
    }
    await this.afterCommit(taken, inserted);
    for (const p of taken) p.resolve();
  }

  private async writeAll(taken: Pending[], samples: Sample[], refreshDays: boolean): Promise<Set<string>> {
    await this.ensureDays(
      samples.map((s) => dayStart(s.at_unix_ms)),
      refreshDays,
    );
    return this.ctx.store.tx(async (db) => {
      const inserted = await this.repo.insertSamples(samples, db);
      await this.repo.upsertLatest(samples, db);
      await this.repo.upsertInterfaces(
        taken.flatMap((p) => p.batch.interfaces),
        db,
      );
      return inserted;
    });
  }

  private fail(taken: Pending[], err: Error): void {
    this.ctx.log.error("sample batch write failed", { batches: taken.length, error: err.message });
    this.metrics.failures.inc();
    for (const p of taken) p.reject(err);
  }

  private async afterCommit(taken: Pending[], inserted: Set<string>): Promise<void> {
    for (const p of taken) {
      for (const f of p.batch.facts) {
        try {
          await this.nodes.recordFacts(f.node_id, { sys_descr: f.sys_descr, sys_object_id: f.sys_object_id, sys_name: f.sys_name });
        } catch (err) {
          this.ctx.log.warn("node facts not recorded", { node_id: f.node_id, error: (err as Error).message });
        }
      }
    }
    for (const p of taken) {
      const fresh = p.batch.samples.filter((s) => inserted.has(sampleKey(s.node_id, s.metric, s.ifindex ?? -1, s.row ?? -1, Math.round(s.at_unix_ms))));
      this.metrics.written.inc({ pool: p.source.pool }, fresh.length);
      if (p.batch.backfill) {
        if (fresh.length) await this.ctx.bus.emit("polling.sample", { samples: fresh });
        continue;
      }
      // A live batch may hold several nodes' polls (a remote poller ships them together): one event per node.
      const byNode = new Map<string, Sample[]>();
      for (const s of fresh) {
        const list = byNode.get(s.node_id);
        if (list) list.push(s);
        else byNode.set(s.node_id, [s]);
      }
      for (const list of byNode.values()) await this.ctx.bus.emit("polling.sample", { samples: list });
      for (const r of p.batch.reachability) await this.ctx.bus.emit("polling.reachability", { ...r, ...p.source });
    }
  }
}
