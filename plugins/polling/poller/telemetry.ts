import { statfs } from "node:fs/promises";
import { cpus, freemem, loadavg, totalmem } from "node:os";
import type { HostTelemetry } from "./wire.js";

interface CpuTimes {
  idle: number;
  total: number;
}

function cpuTimes(): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const cpu of cpus()) {
    const t = cpu.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total };
}

/** A filesystem to report: a label (the spec's `mount`) and a path on it. */
export interface WatchedMount {
  label: string;
  path: string;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Measures this host: CPU % (busy share of all cores since the previous measurement), load1,
 * memory (total, and used = total - available) and the watched filesystems. Used by the core
 * for itself and by remote pollers for their heartbeat.
 */
export class HostSampler {
  private last: CpuTimes & { at: number };
  private lastPct: number | null = null;

  constructor(private readonly mounts: WatchedMount[]) {
    this.last = { ...cpuTimes(), at: Date.now() };
  }

  /** CPU % since the previous call (at least 200 ms apart; sooner answers the previous figure). */
  cpuPct(): number | null {
    if (Date.now() - this.last.at < 200) return this.lastPct;
    return this.measure();
  }

  /** CPU % since the previous measurement, whatever the window. */
  private measure(): number | null {
    const now = Date.now();
    const cur = cpuTimes();
    const total = cur.total - this.last.total;
    const idle = cur.idle - this.last.idle;
    this.last = { ...cur, at: now };
    if (total > 0) this.lastPct = round(Math.min(100, Math.max(0, (100 * (total - idle)) / total)));
    return this.lastPct;
  }

  async sample(): Promise<HostTelemetry> {
    const total = totalmem();
    const disks: HostTelemetry["disks"] = [];
    const seen = new Set<string>();
    for (const m of this.mounts) {
      try {
        const s = await statfs(m.path);
        const size = s.blocks * s.bsize;
        // Two watched paths on one filesystem are reported once (same size and free space, the first label wins).
        const key = `${s.type}:${s.blocks}:${s.bfree}:${s.bsize}`;
        if (seen.has(key)) continue;
        seen.add(key);
        disks.push({ mount: m.label, size_bytes: size, used_bytes: (s.blocks - s.bfree) * s.bsize });
      } catch {
        // A path that vanished (an unmounted volume) is left out rather than reported as empty.
      }
    }
    let pct = this.cpuPct();
    if (pct === null) {
      // First measurement: sample a short window so the first answer is not empty. A timer may
      // fire a millisecond before Date.now() shows 200 ms gone, so measure without the age check.
      await new Promise((r) => setTimeout(r, 200));
      pct = this.measure();
    }
    return {
      cpu_pct: pct,
      load1: round(loadavg()[0], 2),
      mem_total_bytes: total,
      mem_used_bytes: total - freemem(),
      disks,
    };
  }
}

/** The spec's derived figures: memory used %, and the highest used % of the watched filesystems. */
export function derivedUsage(t: HostTelemetry | null): { mem_used_pct: number | null; disk_used_pct: number | null } {
  if (!t) return { mem_used_pct: null, disk_used_pct: null };
  const mem = t.mem_total_bytes && t.mem_used_bytes !== null ? round((100 * t.mem_used_bytes) / t.mem_total_bytes) : null;
  const pcts = t.disks.filter((d) => d.size_bytes > 0).map((d) => (100 * d.used_bytes) / d.size_bytes);
  return { mem_used_pct: mem, disk_used_pct: pcts.length ? round(Math.max(...pcts)) : null };
}
