import { METRICS, SNMP_AGENT_STATUS, type Sample } from "../contract.js";
import { computeRates, counterRate, type CounterState } from "../lib/rates.js";
import type { DnsCheckSpec, InterfaceState, PollTarget, SnmpPollResult, UrlCheckSpec } from "./types.js";
import { emptyBatch, type BatchSink, type FactsUpdate, type PollBatch } from "./wire.js";

/** A metric value a probe measured (the loop adds node, time, pool and poller). */
export interface MetricValue {
  metric: string;
  value: number;
}

export interface LivenessResult {
  reachable: boolean;
  /** How it was decided. */
  method: "icmp" | "snmp" | "tcp";
  rtt_ms: number | null;
}

/** A raw template counter (scalar: row null) as the SNMP engine reports it, for counter rates. */
export interface CounterReading {
  metric: string;
  row: number | null;
  row_name: string | null;
  value: string;
  bits: 32 | 64;
}

/**
 * The measuring parts a loop runs (snmp/ and checks/ in production; tests may give their own real
 * stand-ins). A probe that throws counts as "no answer" for that poll. Counters become rates in the
 * loop, always with lib/rates.ts (wrap and restart aware): one algorithm, not a probe.
 */
export interface Probes {
  /** `template_counters`: every template counter, scalar and table, raw, for counterRate. */
  snmp: { poll(target: PollTarget): Promise<SnmpPollResult & { template_counters: CounterReading[] }> } | null;
  liveness: { check(target: PollTarget): Promise<LivenessResult> };
  url: { run(spec: UrlCheckSpec): Promise<MetricValue[]> } | null;
  dns: { run(spec: DnsCheckSpec): Promise<MetricValue[]> } | null;
}

export interface LoopLogger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface PollLoopOptions {
  pollerId: string;
  pool: string;
  /** Nodes polled at once. */
  concurrency: number;
  probes: Probes;
  sink: BatchSink;
  log: LoopLogger;
  /** How often due polls are looked for (ms). */
  tickMs?: number;
  /** Told of every poll: how long it took and whether it produced a batch (the embedded poller's metrics). */
  onPoll?: (seconds: number, outcome: PollOutcome) => void;
}

interface Entry {
  target: PollTarget;
  /** When the next poll is due (Unix ms). */
  due: number;
  busy: boolean;
}

export interface LoopStats {
  targets: number;
  polls: number;
  failedWrites: number;
  inFlight: number;
  queued: number;
}

const SAMPLE_NONE = { ifindex: null, if_name: null, row: null, row_name: null } as const;

/** The facts inventory keeps, compared to decide whether to send them again. */
function factsKey(f: FactsUpdate): string {
  return JSON.stringify([f.sys_descr, f.sys_object_id, f.sys_name]);
}

/**
 * Polls each target on its interval with bounded concurrency and hands what it measured, as
 * samples (contract.ts) plus interface, facts and reachability updates, to a sink. The same loop
 * runs in the core (embedded poller) and in a remote poller process; it keeps the per-interface
 * rate state in memory (seed it with seedStates when it is known).
 */
export class PollLoop {
  private readonly entries = new Map<string, Entry>();
  private readonly queue: Entry[] = [];
  private readonly states = new Map<string, Map<number, InterfaceState>>();
  private readonly counterState = new Map<string, Map<string, CounterState>>();
  private readonly sentFacts = new Map<string, string>();
  private readonly writes = new Set<Promise<void>>();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private polls = 0;
  private failedWrites = 0;

  constructor(private readonly opts: PollLoopOptions) {}

  /** Replaces the assignment: new nodes are due now, known ones keep their cadence, removed ones are forgotten. */
  setTargets(targets: readonly PollTarget[]): void {
    const now = Date.now();
    const keep = new Set<string>();
    for (const t of targets) {
      keep.add(t.node_id);
      const found = this.entries.get(t.node_id);
      if (!found) {
        this.entries.set(t.node_id, { target: t, due: now, busy: false });
        continue;
      }
      // A shorter interval takes effect at once; an address or credential change at the next poll.
      if (t.interval_secs < found.target.interval_secs) found.due = Math.min(found.due, now + t.interval_secs * 1000);
      found.target = t;
    }
    for (const id of [...this.entries.keys()]) {
      if (keep.has(id)) continue;
      this.entries.delete(id);
      this.states.delete(id);
      this.counterState.delete(id);
      this.sentFacts.delete(id);
    }
    this.pump();
  }

  /** Rate state known from before (the embedded poller reads it from polling.interfaces). */
  seedStates(states: readonly (InterfaceState & { node_id: string })[]): void {
    for (const s of states) {
      let byIf = this.states.get(s.node_id);
      if (!byIf) this.states.set(s.node_id, (byIf = new Map()));
      const { node_id: _node, ...state } = s;
      byIf.set(s.ifindex, state);
    }
  }

  start(): void {
    this.stopped = false;
    this.timer ??= setInterval(() => this.tick(), this.opts.tickMs ?? 250);
    this.tick();
  }

  /** Stops scheduling, waits for the polls under way (at most drainMs) and for their batches to reach the sink. */
  async stop(drainMs = 10000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // Queued polls are not run; they are due again if the loop starts again.
    for (const e of this.queue.splice(0)) e.busy = false;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running]).then(() => Promise.allSettled([...this.writes])),
      new Promise((r) => (timeout = setTimeout(r, drainMs))),
    ]);
    clearTimeout(timeout);
  }

  stats(): LoopStats {
    return { targets: this.entries.size, polls: this.polls, failedWrites: this.failedWrites, inFlight: this.running.size, queued: this.queue.length };
  }

  private tick(): void {
    if (this.stopped) return;
    const now = Date.now();
    const due: Entry[] = [];
    for (const e of this.entries.values()) if (!e.busy && e.due <= now) due.push(e);
    due.sort((a, b) => a.due - b.due);
    for (const e of due) {
      e.busy = true;
      this.queue.push(e);
    }
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.running.size < this.opts.concurrency && this.queue.length) {
      const entry = this.queue.shift()!;
      const run: Promise<void> = this.pollEntry(entry).finally(() => {
        this.running.delete(run);
        this.pump();
      });
      this.running.add(run);
    }
  }

  private async pollEntry(entry: Entry): Promise<void> {
    const scheduled = entry.due;
    const started = process.hrtime.bigint();
    const took = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const batch = await this.pollOnce(entry.target);
      this.polls++;
      this.opts.onPoll?.(took(), pollOutcome(batch));
      if (this.entries.get(entry.target.node_id) === entry) await this.deliver(batch);
    } catch (err) {
      this.opts.onPoll?.(took(), "failed");
      this.opts.log.error("poll failed", { node_id: entry.target.node_id, error: (err as Error).message });
    } finally {
      entry.busy = false;
      // Keep the cadence; a loop that fell behind polls again as soon as the queue lets it.
      entry.due = Math.max(scheduled + entry.target.interval_secs * 1000, Date.now());
    }
  }

  /** Hands a batch to the sink without holding the poll slot; too many unfinished writes make polls wait. */
  private async deliver(batch: PollBatch): Promise<void> {
    const write: Promise<void> = this.opts.sink
      .write(batch)
      .catch((err: Error) => {
        this.failedWrites++;
        this.opts.log.error("sample batch not stored", { samples: batch.samples.length, error: err.message });
      })
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
    if (this.writes.size > this.opts.concurrency * 4) await Promise.race(this.writes);
  }

  /** One poll of one node: SNMP, liveness, URL and DNS checks at once, then samples. */
  async pollOnce(t: PollTarget): Promise<PollBatch> {
    const { probes, log } = this.opts;
    const started = Date.now();
    const quiet = <T>(what: string, p: Promise<T>): Promise<T | null> =>
      p.catch((err: Error) => {
        log.warn(`${what} probe failed`, { node_id: t.node_id, error: err.message });
        return null;
      });
    const [snmp, live, url, dns] = await Promise.all([
      t.snmp && probes.snmp ? quiet("snmp", probes.snmp.poll(t)) : null,
      quiet("liveness", probes.liveness.check(t)),
      t.url_check && probes.url ? quiet("url", probes.url.run(t.url_check)) : null,
      t.dns_check && probes.dns ? quiet("dns", probes.dns.run(t.dns_check)) : null,
    ]);

    const batch = emptyBatch(false);
    const base = { node_id: t.node_id, pool: this.opts.pool, poller_id: this.opts.pollerId, backfill: false };
    const push = (metric: string, value: number, at: number, where: Partial<Pick<Sample, "ifindex" | "if_name" | "row" | "row_name">> = {}) => {
      if (Number.isFinite(value)) batch.samples.push({ ...base, ...SAMPLE_NONE, ...where, metric, value, at_unix_ms: at });
    };

    // Liveness: the probe's verdict, and an SNMP answer proves the node is up even where ICMP and TCP are blocked.
    const answered = snmp?.answered === true;
    const reachable = live?.reachable === true || answered;
    const method = live?.reachable ? live.method : answered ? "snmp" : (live?.method ?? (t.snmp ? "snmp" : "tcp"));
    push("reachable", reachable ? 1 : 0, started);
    if (live?.reachable && live.rtt_ms !== null) push("rtt_ms", live.rtt_ms, started);
    batch.reachability.push({ node_id: t.node_id, reachable, method, at_unix_ms: started });

    if (t.snmp && probes.snmp) push(METRICS.snmpAgentStatus, agentStatus(snmp), started);
    if (snmp && answered) this.snmpSamples(t, snmp, batch, push);

    for (const m of [...(url ?? []), ...(dns ?? [])]) push(m.metric, m.value, started);
    return batch;
  }

  private snmpSamples(
    t: PollTarget,
    r: SnmpPollResult & { template_counters: CounterReading[] },
    batch: PollBatch,
    push: (metric: string, value: number, at: number, where?: Partial<Sample>) => void,
  ) {
    const at = r.at_unix_ms;
    const uptime = r.facts?.uptime_ticks ?? null;
    if (r.facts) {
      if (uptime !== null) push("sys_uptime_secs", Math.floor(uptime / 100), at);
      const facts: FactsUpdate = { node_id: t.node_id, sys_descr: r.facts.sys_descr, sys_object_id: r.facts.sys_object_id, sys_name: r.facts.sys_name };
      const key = factsKey(facts);
      if (this.sentFacts.get(t.node_id) !== key && (facts.sys_descr !== null || facts.sys_object_id !== null || facts.sys_name !== null)) {
        batch.facts.push(facts);
        this.sentFacts.set(t.node_id, key);
      }
    }

    const before = this.states.get(t.node_id);
    const after = new Map<number, InterfaceState>();
    for (const reading of r.interfaces) {
      const where = { ifindex: reading.ifindex, if_name: reading.if_name };
      const { samples, state } = computeRates(before?.get(reading.ifindex), reading, uptime, at);
      for (const s of samples) push(s.metric, s.value, at, where);
      if (reading.oper_up !== null) push("if_oper_up", reading.oper_up ? 1 : 0, at, where);
      after.set(reading.ifindex, state);
      batch.interfaces.push({
        node_id: t.node_id,
        ifindex: reading.ifindex,
        if_name: reading.if_name,
        if_alias: reading.if_alias,
        if_speed_bps: reading.if_speed_bps,
        oper_up: reading.oper_up,
        counter_bits: state.counter_bits,
        counters: state.counters,
        uptime_ticks: state.uptime_ticks,
        at_unix_ms: state.at_unix_ms,
      });
    }
    this.states.set(t.node_id, after);

    for (const row of r.rows) push(row.metric, row.value, at, { row: row.row, row_name: row.row_name });

    // Template counters (scalar and table): per-second rates from the previous reading.
    let known = this.counterState.get(t.node_id);
    if (!known) this.counterState.set(t.node_id, (known = new Map()));
    for (const c of r.template_counters) {
      const key = `${c.metric}|${c.row ?? ""}`;
      const { rate, state } = counterRate(known.get(key), { value: c.value, bits: c.bits, uptime_ticks: uptime, at_unix_ms: at });
      known.set(key, state);
      if (rate !== null) push(c.metric, rate, at, c.row === null ? {} : { row: c.row, row_name: c.row_name });
    }
    for (const s of r.scalars) if (s.kind === "gauge") push(s.metric, Number(s.value), at);
  }
}

/**
 * What one poll found, as `nms_polling_polls_total` counts it: `ok` (reachable, and the SNMP agent answered or none is
 * polled), `unreachable` (no liveness answer), `snmp_timeout`, `snmp_auth` (credentials refused) or `snmp_error` (the
 * node answered its liveness check but its agent did not), `failed` (the poll itself threw).
 */
export type PollOutcome = "ok" | "unreachable" | "snmp_timeout" | "snmp_auth" | "snmp_error" | "failed";

/** The SNMP agent's state in one poll, as the sample `snmp_agent_status` carries it (contract.ts, SNMP_AGENT_STATUS). */
function agentStatus(r: { answered: boolean; failure?: string | null } | null): number {
  if (r?.answered) return SNMP_AGENT_STATUS.answering;
  if (r?.failure === "timeout") return SNMP_AGENT_STATUS.timeout;
  if (r?.failure === "auth") return SNMP_AGENT_STATUS.auth;
  return SNMP_AGENT_STATUS.error;
}

/** A poll's outcome, read from the batch it produced (its reachable and snmp_agent_status samples). */
export function pollOutcome(batch: PollBatch): PollOutcome {
  const value = (metric: string) => batch.samples.find((s) => s.metric === metric)?.value;
  if (value(METRICS.reachable) === 0) return "unreachable";
  switch (value(METRICS.snmpAgentStatus)) {
    case SNMP_AGENT_STATUS.timeout:
      return "snmp_timeout";
    case SNMP_AGENT_STATUS.auth:
      return "snmp_auth";
    case SNMP_AGENT_STATUS.error:
      return "snmp_error";
    default:
      return "ok";
  }
}
