import { Inject, Injectable } from "@tsed/di";
import { derivedUsage, HostSampler } from "../poller/telemetry.js";
import type { HostTelemetry } from "../poller/wire.js";
import { PollerRepository } from "../repositories/PollerRepository.js";
import { checkedCounters, HostCounterRegistry } from "./HostCounterRegistry.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

export interface HostEntry extends HostTelemetry {
  counters: Record<string, number>;
  instance: string;
  role: "core" | "poller";
  online: boolean;
  pool: string | null;
  mem_used_pct: number | null;
  disk_used_pct: number | null;
}

/** Most pollers listed besides the core. */
export const HOSTS_CAP = 500;

function entry(base: Pick<HostEntry, "instance" | "role" | "online" | "pool">, t: HostTelemetry | null): HostEntry {
  return {
    ...base,
    cpu_pct: t?.cpu_pct ?? null,
    load1: t?.load1 ?? null,
    mem_total_bytes: t?.mem_total_bytes ?? null,
    mem_used_bytes: t?.mem_used_bytes ?? null,
    ...derivedUsage(t),
    disks: t?.disks ?? [],
    counters: checkedCounters(t?.counters),
  };
}

/**
 * Host telemetry: the core measured here (CPU % between calls, load1, memory, the filesystems
 * of "/" and the data directory), then every remote poller that reported telemetry in a
 * heartbeat, with its online flag. Without a store (skeleton mode) or when the poller list
 * cannot be read, the answer is the core alone.
 */
@Injectable()
export class HostTelemetryService {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  @Inject(PollerRepository)
  private pollers: PollerRepository;

  @Inject(HostCounterRegistry)
  private counters: HostCounterRegistry;

  private sampler: HostSampler | null = null;

  async hosts(): Promise<HostEntry[]> {
    this.sampler ??= new HostSampler([
      { label: "/", path: "/" },
      { label: "data", path: this.ctx.kernelConfig.dataDir },
    ]);
    const core = entry({ instance: "core", role: "core", online: true, pool: null }, { ...(await this.sampler.sample()), counters: this.counters.read() });
    if (!this.ctx.store.available) return [core];
    try {
      const rows = await this.pollers.reporting(HOSTS_CAP);
      return [core, ...rows.map((p) => entry({ instance: p.id, role: "poller", online: p.online, pool: p.pool }, p.telemetry))];
    } catch (err) {
      this.ctx.log.warn("poller telemetry unavailable; answering the core alone", { error: (err as Error).message });
      return [core];
    }
  }
}
