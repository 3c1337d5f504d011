/**
 * Forwarding on a remote poller (`nms poller` with the forwarding plugin loaded): the destinations of the poller's
 * pool, and those without a pool (every pool), are teed here from what this poller's own listeners receive (the events
 * and flows receivers publish on the poller's bus); the core does not tee again what a poller forwards to it. Every
 * reload period the poller syncs with the core (POST /forwarding/pollers/sync): it reports its counters and gets
 * those destinations back. Secrets come sealed
 * and are opened with this poller's secret key: a destination whose secret it cannot open (NMS_SECRET_KEY not set as
 * on the core) is left out, with a warning naming it. A core that cannot be reached leaves the current destinations
 * running.
 */
import type { PassiveEnvironment, PassiveReceiver, RunningPassive } from "../../polling/contract.js";
import type { ForwardingConfig } from "../context.js";
import { runnable } from "../lib/runtime.js";
import type { PoolDestinationWire, RuntimeDestination } from "../lib/types.js";
import { Tee, type DestinationSource } from "../services/Tee.js";

/** The core, seen from a poller: its pool's destinations and those of every pool, in exchange for this poller's counters. */
class CoreSource implements DestinationSource {
  private readonly unopened = new Set<string>();
  counters: () => Record<string, unknown> = () => ({});

  constructor(private readonly env: PassiveEnvironment) {}

  async runtimeDestinations(): Promise<RuntimeDestination[]> {
    const env = this.env;
    const res = await env.call("POST", "/forwarding/pollers/sync", { poller_id: env.pollerId, pool: env.pool, counters: this.counters() });
    if (res.status !== 200) throw new Error(res.status === 0 ? "the core was not reached" : `the core answered ${res.status}`);
    const wire = (res.body as { destinations?: PoolDestinationWire[] }).destinations ?? [];
    const out: RuntimeDestination[] = [];
    for (const w of wire) {
      try {
        out.push(runnable(w, env.secrets));
        this.unopened.delete(w.id);
      } catch (err) {
        if (this.unopened.has(w.id)) continue;
        this.unopened.add(w.id);
        env.log.warn("forwarding destination left out on this poller: its secret cannot be opened here (set NMS_SECRET_KEY as on the core)", {
          destination: w.id,
          name: w.name,
          reason: (err as Error).name,
        });
      }
    }
    return out;
  }

  onChange(): void {
    // The poller learns of changes at its next sync (every reloadMs).
  }
}

export const forwardingPassiveReceiver: PassiveReceiver = {
  name: "forwarding",
  async start(env: PassiveEnvironment): Promise<RunningPassive> {
    const config = env.pluginConfig<ForwardingConfig>("forwarding");
    const source = new CoreSource(env);
    const tee = new Tee({ config, log: env.log, bus: env.bus, pool: env.pool });
    source.counters = () => tee.allCounters();
    await tee.start(source);
    env.log.info("forwarding: teeing this pool's destinations", { pool: env.pool, destinations: Object.keys(tee.allCounters()).length });
    return { listeners: [], stop: () => tee.stop() };
  },
};
