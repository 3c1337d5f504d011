import { TurnBatcher } from "../../../core/index.js";
import type { PassiveEnvironment, PassiveReceiver, RunningPassive } from "../../polling/contract.js";
import "../contract.js";
import type { EventsConfig } from "../context.js";
import { bindReceivers } from "../lib/receivers.js";
import type { Inbound } from "../lib/types.js";

/** Most events one POST carries, and the longest one waits on the poller. */
const BATCH = 500;
const FLUSH_MS = 200;
/** Events waiting for a POST in flight; past this they are dropped (the spec: passive data is not buffered). */
const MAX_WAITING = 20_000;

/**
 * The events plugin's receivers on a remote poller (`nms poller`): the same listeners as on the core, from the same
 * `pluginConfig.events` section, forwarding what they receive to the core (POST /events/forwarded) in small
 * batches. Nothing is buffered across a partition: a batch the core does not take is dropped and counted, as
 * the spec says passive data arriving during a partition is lost. SNMPv3 trap users need credentials the core never
 * answers over HTTP, so a poller takes v1/v2c traps only.
 */
export const eventsPassiveReceiver: PassiveReceiver = {
  name: "events",
  async start(env: PassiveEnvironment): Promise<RunningPassive> {
    const forwarder = new Forwarder(env);
    // What this poller receives also goes on its own bus, for a local tee (the forwarding plugin's pool destinations).
    const received = new TurnBatcher(env.bus, "events.received", (events: Inbound[]) => ({ events }));
    const take = (m: Inbound) => {
      received.push(m);
      return forwarder.add(m);
    };
    const bound = await bindReceivers(env.pluginConfig<EventsConfig>("events"), take, {
      dataDir: env.dataDir,
      trapUsers: async () => [],
      log: env.log,
    });
    env.log.info("passive listeners bound", { listeners: bound.map((l) => `${l.name}:${l.address}:${l.port}`) });
    return {
      listeners: bound.map((l) => `${l.name}:${l.port}`),
      stop: async () => {
        await Promise.all(bound.map((l) => l.close().catch(() => undefined)));
        await forwarder.stop();
      },
    };
  },
};

class Forwarder {
  private waiting: Inbound[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();
  private inFlight = 0;
  private lost = 0;
  private lastReport = 0;

  constructor(private readonly env: PassiveEnvironment) {}

  add(m: Inbound): boolean {
    if (this.waiting.length + this.inFlight >= MAX_WAITING) {
      this.lose(1);
      return false;
    }
    // The original bytes stay here: they are for a local verbatim relay (and a trap's bytes hold its community in clear).
    const { bytes: _bytes, ...record } = m;
    this.waiting.push(record);
    if (this.waiting.length >= BATCH) this.send();
    else this.timer ??= setTimeout(() => this.send(), FLUSH_MS);
    return true;
  }

  async stop(): Promise<void> {
    this.send();
    await this.sending;
  }

  private send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, BATCH);
      this.inFlight += batch.length;
      this.sending = this.sending.then(async () => {
        const status = await this.env.post("/events/forwarded", { poller_id: this.env.pollerId, events: batch });
        this.inFlight -= batch.length;
        if (status !== 202) this.lose(batch.length, status);
      });
    }
  }

  /** Counts lost events; says so at most once a minute (a partition would otherwise log every batch). */
  private lose(n: number, status?: number): void {
    this.lost += n;
    const now = Date.now();
    if (now - this.lastReport < 60_000) return;
    this.lastReport = now;
    this.env.log.warn("passive events lost: the core did not take them (they are not buffered)", { lost_total: this.lost, status: status ?? null });
  }
}
