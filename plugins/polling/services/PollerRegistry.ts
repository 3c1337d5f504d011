import { Inject, Injectable } from "@tsed/di";
import { assertPoolName, conflict, notFound, type Queryable } from "../../../core/index.js";
import type { HostTelemetry } from "../poller/wire.js";
import { GapRepository, type GapRow } from "../repositories/GapRepository.js";
import { PollerRepository, type PollerBefore, type PollerRow } from "../repositories/PollerRepository.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

export interface Registration {
  id: string;
  pool: string;
  kind: "embedded" | "remote";
  version: string | null;
  listeners: string[];
}

/** Most pollers listed (a deployment has a handful per pool). */
export const POLLER_LIST_CAP = 1000;
/** Most monitoring gaps GET /monitoring-gaps answers (newest first). */
export const GAP_LIST_CAP = 200;

/**
 * Pollers and their liveness. Each contact (registration or heartbeat) marks a poller seen;
 * one that had gone silent past heartbeatAllowanceSecs (marked offline by the watch job, or
 * not yet) gets a monitoring gap from its last contact to now, with the listeners it had
 * bound, and "polling.poller.online" is emitted. The watch job emits "polling.poller.offline".
 */
@Injectable()
export class PollerRegistry {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  @Inject(PollerRepository)
  private pollers: PollerRepository;

  @Inject(GapRepository)
  private gaps: GapRepository;

  /** How often pollers heartbeat: a third of the allowance, so two lost heartbeats are not a gap. */
  heartbeatSecs(): number {
    return Math.max(1, Math.floor(this.ctx.config.heartbeatAllowanceSecs / 3));
  }

  async register(r: Registration): Promise<{ heartbeat_secs: number }> {
    assertPoolName(r.pool);
    if (r.kind === "remote" && r.pool === "default" && this.ctx.config.embeddedPoller) {
      this.ctx.log.warn("a remote poller registered for pool default, which the embedded poller also polls: its nodes are polled twice", { poller_id: r.id });
    }
    await this.contact(r.id, async (before, db) => {
      if (before && before.kind === "embedded" && r.kind === "remote") {
        throw conflict("poller_id_reserved", "This poller id belongs to the core's embedded poller; choose another --id.");
      }
      await this.pollers.upsert(r, db);
    });
    return { heartbeat_secs: this.heartbeatSecs() };
  }

  /** A heartbeat (with the poller's host telemetry, if it sent some); 404 for a poller that never registered. */
  async heartbeat(id: string, telemetry: HostTelemetry | null): Promise<{ heartbeat_secs: number }> {
    await this.contact(id, async (before, db) => {
      if (!before) throw notFound("No such poller: register it first.");
      await this.pollers.touch(id, telemetry, db);
    });
    return { heartbeat_secs: this.heartbeatSecs() };
  }

  /** The watch job: pollers silent past the allowance go offline (the gap is recorded when they return). */
  async markSilentOffline(): Promise<string[]> {
    const gone = await this.pollers.markSilentOffline(this.ctx.config.heartbeatAllowanceSecs);
    for (const p of gone) {
      this.ctx.log.warn("poller offline", { poller_id: p.id, pool: p.pool, allowance_secs: this.ctx.config.heartbeatAllowanceSecs });
      await this.ctx.bus.emit("polling.poller.offline", { poller_id: p.id, pool: p.pool, at_unix_ms: Date.now() });
    }
    return gone.map((p) => p.id);
  }

  /** Newest first, at most GAP_LIST_CAP; a read error degrades to an empty list (logged), as the spec asks. */
  async recentGaps(): Promise<GapRow[]> {
    try {
      return await this.gaps.recent(GAP_LIST_CAP);
    } catch (err) {
      this.ctx.log.error("monitoring gaps unreadable; answering an empty list", { error: (err as Error).message });
      return [];
    }
  }

  list(): Promise<PollerRow[]> {
    return this.pollers.list(POLLER_LIST_CAP);
  }

  /** A registered poller (404 otherwise). */
  async get(id: string): Promise<PollerRow> {
    const found = await this.pollers.get(id);
    if (!found) throw notFound("No such poller: register it first.");
    return found;
  }

  /** One contact, in one transaction with the poller's row locked; then the events. */
  private async contact(id: string, update: (before: PollerBefore | null, db: Queryable) => Promise<void>): Promise<void> {
    const { before, gap } = await this.ctx.store.tx(async (db) => {
      const before = await this.pollers.lockBefore(id, this.ctx.config.heartbeatAllowanceSecs, db);
      await update(before, db);
      let gap: GapRow | null = null;
      if (before && (!before.online || before.silent)) {
        gap = await this.gaps.insert({ poller_id: id, pool: before.pool, started_at: before.last_seen_at, listeners: before.listeners }, db);
      }
      return { before, gap };
    });
    if (gap) {
      this.ctx.log.warn("poller back: monitoring gap recorded", { poller_id: id, pool: gap.pool, duration_secs: gap.duration_secs, listeners: gap.listeners });
    }
    if (!before || gap) {
      const pool = (await this.pollers.get(id))?.pool ?? before?.pool ?? "";
      await this.ctx.bus.emit("polling.poller.online", { poller_id: id, pool, at_unix_ms: Date.now() });
    }
  }
}
