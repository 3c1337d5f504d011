import type { AlertTransition } from "nms-core/contracts/alerts";
import { Inject, Injectable } from "nms-core/tsed";
import { ALERT_RELAY_CONTEXT, type AlertRelayContext } from "../context.js";
import type { ChatRelay, PostOutcome } from "../contract.js";
import type { DeliveryKind } from "../models/DeliveryModels.js";
import { DeliveryRepository } from "../repositories/DeliveryRepository.js";

const RANK = { info: 0, warning: 1, critical: 2 } as const;

/**
 * Relays alert transitions (the alerts plugin's contract events) to a chat webhook as `{"text": …}`, the body
 * Slack- and Mattermost-style incoming webhooks take, and logs every post. Posting never holds up the bus: each
 * post runs on its own, and stop() waits for those in flight.
 */
@Injectable()
export class RelayService implements ChatRelay {
  @Inject(ALERT_RELAY_CONTEXT)
  private ctx: AlertRelayContext;

  @Inject(DeliveryRepository)
  private deliveries: DeliveryRepository;

  private readonly inFlight = new Set<Promise<void>>();
  private unsubscribe: (() => void)[] = [];

  /** Follows alerts.fired and alerts.resolved (alerts.suppressed are muted or in maintenance: not relayed). */
  start(): void {
    this.unsubscribe = [
      this.ctx.bus.on("alerts.fired", (t) => this.track(this.relay("fired", t))),
      this.ctx.bus.on("alerts.resolved", (t) => this.track(this.relay("resolved", t))),
    ];
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    await Promise.allSettled([...this.inFlight]);
  }

  /** Whether a transition of this severity is relayed. */
  wants(t: Pick<AlertTransition, "severity">): boolean {
    return RANK[t.severity] >= RANK[this.ctx.config.minSeverity];
  }

  /** The chat line for a transition. */
  text(kind: "fired" | "resolved", t: AlertTransition): string {
    // The alerts plugin's title names the subject ("CPU load above 90% on core-sw1").
    return `[${kind === "fired" ? t.severity.toUpperCase() : "RESOLVED"}] ${t.title ?? `${t.check} on ${t.subject_name ?? t.subject_kind}`}`;
  }

  async relay(kind: "fired" | "resolved", t: AlertTransition): Promise<void> {
    if (!this.ctx.config.webhookUrl || !this.wants(t)) return;
    const outcome = await this.post(this.text(kind, t));
    await this.record(kind, outcome, t);
  }

  /** Sends a test message and logs it; null when no webhook is configured. */
  async test(text = "nms-core alert relay: test message"): Promise<PostOutcome | null> {
    if (!this.ctx.config.webhookUrl) return null;
    const outcome = await this.post(text);
    await this.record("test", outcome, null);
    return outcome;
  }

  private async post(text: string): Promise<PostOutcome> {
    try {
      const res = await fetch(this.ctx.config.webhookUrl!, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ text }),
        signal: AbortSignal.timeout(this.ctx.config.timeoutMs),
        redirect: "error",
      });
      await res.body?.cancel();
      return { ok: res.ok, http_status: res.status, error: res.ok ? null : `HTTP ${res.status}` };
    } catch (err) {
      // The error's message may carry the URL: keep its class only.
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      const error = (err as Error).name === "TimeoutError" ? "timeout" : (cause ?? (err as Error).name);
      this.ctx.log.warn("webhook post failed", { error });
      return { ok: false, http_status: null, error };
    }
  }

  private async record(kind: DeliveryKind, outcome: PostOutcome, t: AlertTransition | null): Promise<void> {
    await this.deliveries.record({ kind, incident_key: t?.incident_key ?? null, severity: t?.severity ?? null, ...outcome });
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((err: Error) => this.ctx.log.error("relay failed", { error: err.message })).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }
}
