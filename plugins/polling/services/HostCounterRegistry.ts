import { Injectable } from "@tsed/di";
import type { HostCounters } from "../contract.js";

/** A host counter's name: what GET /system/hosts answers under `counters`. */
export const HOST_COUNTER_NAME = /^[a-z][a-z0-9_]{0,62}$/;
/** Most counters one host reports. */
export const MAX_HOST_COUNTERS = 32;

/**
 * Counters of this host (the core) that other plugins register, answered with its host telemetry (GET /system/hosts,
 * `counters`): what a plugin receives and loses here, for example the events plugin's queue overflow. Remote pollers
 * report theirs in their heartbeats (their passive receivers' `counters()`). Exported as the contract token HostCounters:
 * a plugin that depends on polling registers with `ctx.get(HostCounters).register(name, read)` at start.
 */
@Injectable()
export class HostCounterRegistry implements HostCounters {
  private readonly readers = new Map<string, () => number>();

  /** `read` is called whenever host telemetry is answered; a name registered again takes the new reader. */
  register(name: string, read: () => number): void {
    if (!HOST_COUNTER_NAME.test(name)) throw new Error(`host counter name ${JSON.stringify(name)} must match ${HOST_COUNTER_NAME}`);
    if (!this.readers.has(name) && this.readers.size >= MAX_HOST_COUNTERS) throw new Error(`at most ${MAX_HOST_COUNTERS} host counters`);
    this.readers.set(name, read);
  }

  /** Every counter's value now (a reader that throws or answers no whole number ≥ 0 is left out). */
  read(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, read] of this.readers) {
      try {
        const v = read();
        if (Number.isSafeInteger(v) && v >= 0) out[name] = v;
      } catch {
        // one plugin's broken reader does not hide the others
      }
    }
    return out;
  }
}

/** The counters a poller reported, kept to well-formed names and values (a body is checked, an old stored row is not). */
export function checkedCounters(c: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!c || typeof c !== "object" || Array.isArray(c)) return out;
  for (const [name, v] of Object.entries(c as Record<string, unknown>)) {
    if (Object.keys(out).length >= MAX_HOST_COUNTERS) break;
    if (HOST_COUNTER_NAME.test(name) && typeof v === "number" && Number.isSafeInteger(v) && v >= 0) out[name] = v;
  }
  return out;
}
