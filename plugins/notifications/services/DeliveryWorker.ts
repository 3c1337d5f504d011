import { hostname } from "node:os";
import { Inject, Injectable } from "@tsed/di";
import { BrokenCircuitError, circuitBreaker, CircuitState, ConsecutiveBreaker, handleAll, type CircuitBreakerPolicy } from "cockatiel";
import type { MetricCounter, MetricHistogram } from "../../../core/index.js";
import { isUuid } from "../../../core/index.js";
import { AlertSymptoms, type AlertTransition } from "../../alerts/contract.js";
import { NOTIFICATIONS_CONTEXT, type NotificationsContext } from "../context.js";
import { DeliveryError, type ChannelForSend, type ChannelKind, type LifecyclePoint, type OutboundNotification } from "../contract.js";
import type { ChannelTestResult } from "../models/ChannelModels.js";
import { DeliveryRepository, type ClaimedDelivery } from "../repositories/DeliveryRepository.js";
import { RoutingRuleRepository } from "../repositories/RoutingRuleRepository.js";
import { ChannelService, sampleAlert } from "./ChannelService.js";
import { Renderer } from "./Renderer.js";

/** This replica, as the delivery log names it. */
const INSTANCE = `${hostname()}:${process.pid}`;

interface Attempted {
  ok: boolean;
  status: number | null;
  error: string | null;
  error_class: string | null;
  retryable: boolean;
  retryAfterMs: number | null;
  incidentRef?: string | null;
}

/**
 * The durable delivery queue. Each transition routed to a channel is written (one row per transition and channel)
 * before anything is sent; every replica's worker claims due rows with a lease, sends, and settles them: delivered,
 * retried later (exponential backoff with full jitter, or the receiver's Retry-After when longer), failed, or expired.
 * A circuit breaker per channel holds deliveries back while the channel keeps failing.
 */
@Injectable()
export class DeliveryWorker {
  @Inject(NOTIFICATIONS_CONTEXT)
  private ctx: NotificationsContext;

  @Inject(DeliveryRepository)
  private deliveries: DeliveryRepository;

  @Inject(RoutingRuleRepository)
  private rules: RoutingRuleRepository;

  @Inject(ChannelService)
  private channels: ChannelService;

  @Inject(Renderer)
  private renderer: Renderer;

  @Inject(AlertSymptoms)
  private symptoms: AlertSymptoms;

  /** Unreachable fires waiting for rootCauseSettleMs before root_cause_only rules decide (each runs at once on stop). */
  private readonly settling = new Map<NodeJS.Timeout, () => Promise<void>>();

  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();
  private unsubscribe: (() => void)[] = [];
  private meters?: {
    deliveries: MetricCounter<"kind" | "outcome">;
    retries: MetricCounter<"kind">;
    sendSeconds: MetricHistogram<"kind" | "result">;
  };

  /** The worker's metrics (registered once, on first use; breaker states and in-flight sends are read on scrape). */
  private get metrics() {
    if (this.meters) return this.meters;
    const m = this.ctx.metrics;
    const STATES: Record<number, string> = {
      [CircuitState.Closed]: "closed",
      [CircuitState.Open]: "open",
      [CircuitState.HalfOpen]: "half_open",
      [CircuitState.Isolated]: "isolated",
    };
    m.gauge({
      name: "breakers",
      help: "Channels' circuit breakers by state (closed, open, half_open, isolated): an open one holds its channel's deliveries back.",
      labelNames: ["state"],
      collect: (g) => {
        const counts: Record<string, number> = { closed: 0, open: 0, half_open: 0, isolated: 0 };
        for (const b of this.breakers.values()) counts[STATES[b.state] ?? "closed"]!++;
        for (const [state, n] of Object.entries(counts)) g.set({ state }, n);
      },
    });
    m.gauge({ name: "sends_in_flight", help: "Deliveries being sent now by this replica.", collect: (g) => g.set({}, this.inFlight.size) });
    return (this.meters = {
      deliveries: m.counter({
        name: "deliveries_total",
        help: "Delivery attempts settled, by channel kind and outcome: delivered, retry (queued again), failed, expired, postponed (circuit open, no attempt spent).",
        labelNames: ["kind", "outcome"],
      }),
      retries: m.counter({ name: "retries_total", help: "Deliveries queued again for a retry after a failed attempt, by channel kind.", labelNames: ["kind"] }),
      sendSeconds: m.histogram({
        name: "send_duration_seconds",
        help: "How long one send took (render and the kind's call), by channel kind and result (ok, error).",
        labelNames: ["kind", "result"],
      }),
    });
  }

  start(): void {
    // A lease shorter than a send would let another replica take a delivery that is still being sent.
    if (this.ctx.config.leaseMs <= this.ctx.config.sendTimeoutMs) {
      throw new Error(`pluginConfig.notifications.leaseMs (${this.ctx.config.leaseMs}) must be longer than sendTimeoutMs (${this.ctx.config.sendTimeoutMs})`);
    }
    const on = (event: LifecyclePoint) => (t: AlertTransition) => this.dispatch(event, t);
    this.unsubscribe = [
      this.ctx.bus.on("alerts.fired", on("fire")),
      this.ctx.bus.on("alerts.resolved", on("resolve")),
      this.ctx.bus.on("alerts.suppressed", on("suppress")),
    ];
    void this.metrics;
    this.timer = setInterval(() => this.kick(), this.ctx.config.pollMs);
    this.kick();
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    // Decide the settling fires now, with what the store says (not lost with this replica).
    const waiting = [...this.settling];
    this.settling.clear();
    for (const [t] of waiting) clearTimeout(t);
    await Promise.allSettled(waiting.map(([, run]) => run()));
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Writes one delivery per channel the routing rules pick for this transition, then sends what is due. Channels only
   * root_cause_only rules pick skip a symptom (symptom_of set). An unreachable node's fire announced as no symptom may
   * be marked one a poll later (its upstream found down after it): those channels decide after rootCauseSettleMs,
   * reading its symptom_of from the store then.
   */
  async dispatch(event: LifecyclePoint, alert: AlertTransition): Promise<void> {
    // The transition carries its node's folders (root down); other subjects carry none.
    const folders = (alert.folder_path ?? []).filter(isUuid);
    const channels = await this.rules.channelsFor(alert.severity, folders);
    const rootOnly = channels.filter((c) => c.root_cause_only);
    const now = alert.symptom_of ? channels.filter((c) => !c.root_cause_only) : channels;
    const mayBecomeSymptom = event === "fire" && !alert.symptom_of && alert.subject_kind === "node" && alert.state === "unreachable";
    const settleMs = this.ctx.config.rootCauseSettleMs;
    const hold = mayBecomeSymptom && rootOnly.length > 0 && settleMs > 0;
    const written = await this.deliveries.enqueue(alert.id, event, alert, hold ? now.filter((c) => !c.root_cause_only) : now);
    if (written) this.kick();
    if (hold) this.holdForRootCause(alert, event, rootOnly, settleMs);
  }

  private holdForRootCause(alert: AlertTransition, event: LifecyclePoint, rootOnly: { id: string; name: string }[], ms: number): void {
    const run = async () => {
      try {
        const symptom_of = await this.symptoms.symptomOf(alert.incident_key);
        if (symptom_of) return;
        if (await this.deliveries.enqueue(alert.id, event, alert, rootOnly)) this.kick();
      } catch (err) {
        this.ctx.log.error("root-cause settle failed", { incident_key: alert.incident_key, error: (err as Error).message });
      }
    };
    const timer: NodeJS.Timeout = setTimeout(() => {
      this.settling.delete(timer);
      void run();
    }, ms);
    timer.unref();
    this.settling.set(timer, run);
  }

  /** Looks for due deliveries now (coalesced: one pass at a time, another right after when asked meanwhile). */
  kick(): void {
    if (!this.timer) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pass()
      .catch((err: Error) => this.ctx.log.error("delivery pass failed", { error: err.message }))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pass(): Promise<void> {
    const room = this.ctx.config.concurrency - this.inFlight.size;
    if (room <= 0) return;
    const claimed = await this.deliveries.claim(room, this.ctx.config.leaseMs, INSTANCE);
    for (const d of claimed) {
      const p = this.deliver(d)
        .catch((err: Error) => this.ctx.log.error("delivery failed unexpectedly", { delivery: d.id, error: err.message }))
        .finally(() => {
          this.inFlight.delete(p);
          this.kick();
        });
      this.inFlight.add(p);
    }
  }

  private breaker(channelId: string): CircuitBreakerPolicy {
    let b = this.breakers.get(channelId);
    if (!b) {
      b = circuitBreaker(handleAll, { halfOpenAfter: this.ctx.config.breakerOpenMs, breaker: new ConsecutiveBreaker(this.ctx.config.breakerFailures) });
      this.breakers.set(channelId, b);
    }
    return b;
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const attempt = d.attempts + 1;
    const found = d.channel_id ? await this.channels.forSend(d.channel_id) : null;
    const kind = found?.kind.kind ?? "unknown";
    const end = (status: "failed" | "expired", error: string, error_class: string) => {
      this.metrics.deliveries.inc({ kind, outcome: status });
      return this.settle(d, { status, attempts: d.attempts, last_status: null, error, error_class });
    };
    if (!found) return end("failed", "the channel was deleted", "channel_deleted");
    if (!found.row.enabled) return end("failed", "the channel is disabled", "channel_disabled");
    if (d.age_ms > this.ctx.config.maxAgeSecs * 1000) return end("expired", `not delivered within ${this.ctx.config.maxAgeSecs} s`, "expired");
    let result: Attempted;
    const started = Date.now();
    try {
      result = await this.breaker(found.row.id).execute(() => this.attempt(d, found.kind, found.row.template, found.channel, d.event));
    } catch (err) {
      // The channel's circuit is open: nothing was sent, so no attempt is spent; try again when it may half-open.
      if (err instanceof BrokenCircuitError) {
        this.metrics.deliveries.inc({ kind, outcome: "postponed" });
        return this.deliveries.postpone(d.id, this.ctx.config.breakerOpenMs);
      }
      result = failure(err);
    }
    this.metrics.sendSeconds.observe({ kind, result: result.ok ? "ok" : "error" }, (Date.now() - started) / 1000);
    await this.deliveries.recordAttempt(d.id, attempt, {
      ok: result.ok,
      status: result.status,
      error_class: result.error_class,
      error: result.error,
      ms: Date.now() - started,
    });
    if (result.ok) {
      this.metrics.deliveries.inc({ kind, outcome: "delivered" });
      if (result.incidentRef !== undefined) await this.deliveries.setIncidentRef(found.row.id, d.incident_key, result.incidentRef);
      return this.settle(d, { status: "delivered", attempts: attempt, last_status: result.status, error: null, error_class: null });
    }
    if (result.retryable && attempt < this.ctx.config.maxAttempts) {
      const backoff = Math.random() * Math.min(this.ctx.config.retryMaxMs, this.ctx.config.retryBaseMs * 2 ** (attempt - 1));
      const retryInMs = Math.max(backoff, result.retryAfterMs ?? 0);
      this.metrics.deliveries.inc({ kind, outcome: "retry" });
      this.metrics.retries.inc({ kind });
      return this.settle(d, {
        status: "queued",
        attempts: attempt,
        last_status: result.status,
        error: result.error,
        error_class: result.error_class,
        retryInMs,
      });
    }
    this.metrics.deliveries.inc({ kind, outcome: "failed" });
    return this.settle(d, { status: "failed", attempts: attempt, last_status: result.status, error: result.error, error_class: result.error_class });
  }

  private async settle(d: ClaimedDelivery, outcome: Parameters<DeliveryRepository["settle"]>[1]): Promise<void> {
    await this.deliveries.settle(d.id, outcome);
    this.ctx.realtime.publish("deliveries", "delivery", { id: d.id, transition_id: d.transition_id, channel_id: d.channel_id, event: d.event, ...outcome });
  }

  /** One send: render, build the notification, call the kind (throws on failure). */
  private async attempt(
    d: Pick<ClaimedDelivery, "id" | "incident_key" | "alert" | "test">,
    kind: ChannelKind,
    template: Parameters<Renderer["render"]>[1],
    channel: ChannelForSend,
    event: LifecyclePoint,
  ): Promise<Attempted> {
    const rendered = await this.renderer.render(kind, template, event, d.alert, d.test).catch((err: Error) => {
      throw new DeliveryError(`the template does not render: ${err.message.split("\n")[0]}`, "template", { retryable: false });
    });
    const n: OutboundNotification = {
      event,
      alert: d.alert,
      subject: d.test ? `[TEST] ${rendered.subject}` : rendered.subject,
      body: d.test && rendered.body !== null ? `This is a test notification from nms-core: no alert fired.\n\n${rendered.body}` : rendered.body,
      dedupKey: d.incident_key,
      idempotencyKey: `${d.id}:${event}`,
      test: d.test,
      incidentRef: await this.deliveries.incidentRef(channel.id, d.incident_key),
    };
    const out = await kind.send(n, channel, AbortSignal.timeout(this.ctx.config.sendTimeoutMs));
    return { ok: true, status: out.status, error: null, error_class: null, retryable: false, retryAfterMs: null, incidentRef: out.incidentRef };
  }

  /**
   * The spec's test send: the sample alert rendered with the channel's template, subject "[TEST] …", `test: true` in
   * webhook and pager bodies, a first line saying so in email and servicedesk bodies; sent once, no retry, logged; works
   * on a disabled channel; a kind that opened an incident closes it again (`closed`).
   */
  async test(channelId: string): Promise<ChannelTestResult> {
    await this.channels.row(channelId);
    const found = (await this.channels.forSend(channelId))!;
    const alert = { ...sampleAlert(), incident_key: `test:${channelId}:${Date.now()}` };
    const id = await this.deliveries.insertTest(found.row, alert);
    const started = Date.now();
    let first: Attempted;
    try {
      first = await this.attempt({ id, incident_key: alert.incident_key, alert, test: true }, found.kind, found.row.template, found.channel, "fire");
    } catch (err) {
      first = failure(err);
    }
    await this.deliveries.recordAttempt(id, 1, {
      ok: first.ok,
      status: first.status,
      error_class: first.error_class,
      error: first.error,
      ms: Date.now() - started,
    });
    let closed: boolean | null = null;
    if (first.ok && found.kind.opensIncidents) {
      if (first.incidentRef) await this.deliveries.setIncidentRef(found.row.id, alert.incident_key, first.incidentRef);
      const resolvedAlert = { ...alert, resolved: true };
      try {
        await this.attempt(
          { id, incident_key: alert.incident_key, alert: resolvedAlert, test: true },
          found.kind,
          found.row.template,
          found.channel,
          "resolve",
        );
        closed = true;
      } catch {
        closed = false;
      }
      await this.deliveries.setIncidentRef(found.row.id, alert.incident_key, null);
    }
    await this.deliveries.settle(id, {
      status: first.ok ? "delivered" : "failed",
      attempts: 1,
      last_status: first.status,
      error: first.error,
      error_class: first.error_class,
    });
    return { delivered: first.ok, closed, error: first.error };
  }
}

function failure(err: unknown): Attempted {
  if (err instanceof DeliveryError) {
    return {
      ok: false,
      status: err.options.status ?? null,
      error: err.message,
      error_class: err.errorClass,
      retryable: err.options.retryable,
      retryAfterMs: err.options.retryAfterMs ?? null,
    };
  }
  // Anything else is a bug in a kind: logged by class only, never by message (it might hold a URL).
  return {
    ok: false,
    status: null,
    error: "the channel failed unexpectedly",
    error_class: (err as Error)?.name ?? "error",
    retryable: true,
    retryAfterMs: null,
  };
}
