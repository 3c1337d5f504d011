import { TurnBatcher } from "../../../core/index.js";
import type { PassiveEnvironment, PassiveReceiver, RunningPassive } from "../../polling/contract.js";
import "../contract.js";
import type { EventsConfig } from "../context.js";
import { bindReceivers } from "../lib/receivers.js";
import { openTrapUsers } from "../lib/trapUsers.js";
import type { Inbound } from "../lib/types.js";
import type { TrapListener, TrapUser } from "../traps/receiver.js";

/** Most events one POST carries, and the longest one waits on the poller. */
const BATCH = 500;
const FLUSH_MS = 200;
/** Events waiting for a POST in flight; past this they are dropped (the spec: passive data is not buffered). */
const MAX_WAITING = 20_000;

/**
 * The events plugin's receivers on a remote poller (`nms poller`): the same listeners as on the core, from the same
 * `pluginConfig.events` section, forwarding what they receive to the core (POST /events/forwarded) in small
 * batches. Nothing is buffered across a partition: a batch the core does not take is dropped and counted, as
 * the spec says passive data arriving during a partition is lost. The trap listener's SNMPv3 users are the core's
 * (traps.v3Credentials there), asked at start and every traps.v3RefreshMs; their keys come sealed and open only with
 * the core's secret key (NMS_SECRET_KEY set alike on both), else the poller takes v1/v2c traps only and says why.
 */
export const eventsPassiveReceiver: PassiveReceiver = {
  name: "events",
  async start(env: PassiveEnvironment): Promise<RunningPassive> {
    const config = env.pluginConfig<EventsConfig>("events");
    const forwarder = new Forwarder(env);
    const users = new PollerTrapUsers(env);
    // What this poller receives also goes on its own bus, for a local tee (the forwarding plugin's pool destinations).
    const received = new TurnBatcher(env.bus, "events.received", (events: Inbound[]) => ({ events }));
    const take = (m: Inbound) => {
      received.push(m);
      return forwarder.add(m);
    };
    const bound = await bindReceivers(config, take, {
      dataDir: env.dataDir,
      trapUsers: () => users.initial(),
      log: env.log,
    });
    const trap = bound.find((l): l is TrapListener => l.name === "traps.udp" && "setUsers" in l);
    if (trap) users.keepUpdated(trap, config.traps.v3RefreshMs);
    env.log.info("passive listeners bound", { listeners: bound.map((l) => `${l.name}:${l.address}:${l.port}`) });
    return {
      listeners: bound.map((l) => `${l.name}:${l.port}`),
      counters: () => ({ events_forward_lost: forwarder.lostTotal }),
      stop: async () => {
        users.stop();
        await Promise.all(bound.map((l) => l.close().catch(() => undefined)));
        await forwarder.stop();
      },
    };
  },
};

/** What a forwarded record carries: not the bytes (they are for a local verbatim relay), not a trap's community. */
export function forwardedRecord(m: Inbound): Inbound {
  const { bytes: _bytes, ...record } = m;
  // The core never stores a community, so it has no business crossing the network again.
  if (record.trap?.community) record.trap = { ...record.trap, community: null };
  return record;
}

/** The core's v3 trap users for this poller's trap listener (GET /events/pollers/trap-users). */
class PollerTrapUsers {
  private key = "[]";
  private timer: NodeJS.Timeout | null = null;
  private warned = "";

  constructor(private readonly env: PassiveEnvironment) {}

  /** The users at start: none when the core is not reached (the next refresh brings them). */
  async initial(): Promise<TrapUser[]> {
    const users = (await this.fetch()) ?? [];
    this.key = JSON.stringify(users);
    return users;
  }

  keepUpdated(trap: TrapListener, everyMs: number): void {
    this.timer = setInterval(() => {
      void this.fetch().then((next) => {
        if (next === null) return;
        const key = JSON.stringify(next);
        if (key === this.key) return;
        this.key = key;
        trap.setUsers(next);
        this.env.log.info("events: v3 trap users reloaded from the core", { users: next.map((u) => u.name) });
      });
    }, everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The users, or null when the core did not answer them or they cannot be opened here (said once per reason). */
  private async fetch(): Promise<TrapUser[] | null> {
    const res = await this.env.call("GET", "/events/pollers/trap-users").catch(() => ({ status: 0, body: null }));
    if (res.status !== 200) return this.fail(`the core answered ${res.status || "nothing"}`);
    try {
      const users = openTrapUsers((res.body as { users?: unknown } | null)?.users, this.env.secrets);
      this.warned = "";
      return users;
    } catch {
      return this.fail("their keys do not open with this poller's secret key: set NMS_SECRET_KEY to the core's");
    }
  }

  private fail(reason: string): null {
    if (this.warned !== reason) this.env.log.warn(`events: v3 trap users not loaded (${reason}); v1/v2c traps are taken`, {});
    this.warned = reason;
    return null;
  }
}

class Forwarder {
  private waiting: Inbound[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();
  private inFlight = 0;
  private lost = 0;

  /** Events received here that the core did not take (past the waiting limit, or a batch it did not answer 202). */
  get lostTotal(): number {
    return this.lost;
  }
  private lastReport = 0;

  constructor(private readonly env: PassiveEnvironment) {}

  add(m: Inbound): boolean {
    if (this.waiting.length + this.inFlight >= MAX_WAITING) {
      this.lose(1);
      return false;
    }
    this.waiting.push(forwardedRecord(m));
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
        const status = await this.env.post("/events/forwarded", { poller_id: this.env.pollerId, pool: this.env.pool, events: batch });
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
