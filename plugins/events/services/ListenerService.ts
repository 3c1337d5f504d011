import { Inject, Injectable } from "@tsed/di";
import { sumMirrorCounts, workerJournalOptions, type MirrorCount, type MirrorTarget } from "../../../core/index.js";
import { Credentials } from "../../inventory/contract.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { IngestWorkers, type IngestBatch, type IngestJournalStats } from "../ingest/IngestWorkers.js";
import type { IngestState } from "../ingest/protocol.js";
import { bindHint, bindReceivers, tlsPair } from "../lib/receivers.js";
import { sealTrapUsers, type TrapUserWire } from "../lib/trapUsers.js";
import type { BoundListener, Inbound } from "../lib/types.js";
import type { TrapListener, TrapUser } from "../traps/receiver.js";

/** The core's receivers (lib/receivers.ts), each bound one reported to the kernel (GET /listeners and the ready line). */
@Injectable()
export class ListenerService {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  @Inject(Credentials)
  private credentials: Credentials;

  private bound: BoundListener[] = [];
  private mirrors: readonly MirrorTarget[] = [];
  private mirrorGen = 0;
  private usersKey = "[]";
  private refresh: NodeJS.Timeout | null = null;
  private workers: IngestWorkers | null = null;

  listeners(): readonly BoundListener[] {
    return this.bound;
  }

  /** The syslog ingest workers, once started (full mode). */
  get ingest(): IngestWorkers | null {
    return this.workers;
  }

  journalStats(): IngestJournalStats | null {
    return this.workers?.journalStats() ?? null;
  }

  /** Ingest threads restarted after they died, by kind (null without ingest workers). */
  ingestRestarts(): Readonly<Record<"worker" | "parser", number>> | null {
    return this.workers?.restarts() ?? null;
  }

  /**
   * Binds the receivers: with `ingest` (the core, full mode) the syslog listeners run in the ingest workers, which
   * journal and parse and hand `ingest.onBatch` batches ready to store; the trap listener (and, without `ingest`, the
   * syslog ones) hand each message to `deliver`.
   */
  async start(
    deliver: (m: Inbound) => boolean,
    ingest?: { state: IngestState; onBatch(b: IngestBatch, ack: () => void): void; storedRanges(id: string, from: number): Promise<[number, number][]> },
  ): Promise<void> {
    const cfg = this.ctx.config;
    const onBound = (name: string, l: BoundListener) => {
      if (l.protocol === "udp" && l.stream === "syslog" && this.mirrors.length > 0) l.mirror?.(this.mirrors, this.mirrorGen);
      this.ctx.reportListener(name, { bound: true, port: l.port, address: l.address, counters: l.counters });
    };
    const bound: BoundListener[] = [];
    if (ingest) {
      const s = cfg.syslog;
      const pair =
        s.tls !== null
          ? await tlsPair(cfg, this.ctx.kernelConfig.dataDir).catch((err: unknown) => {
              this.ctx.log.error(`events: listener syslog.tls not bound: ${String((err as Error).message)}`, { listener: "syslog.tls" });
              return null;
            })
          : null;
      const j = cfg.ingest.journal;
      const workers = cfg.ingest.workers ?? availableParallelism();
      this.workers = new IngestWorkers({
        workers,
        journalRoot: join(this.ctx.kernelConfig.dataDir, "journal"),
        journal: workerJournalOptions(j, workers),
        listeners: {
          host: s.bindAddress,
          udp: s.udp,
          tcp: s.tcp,
          tls: pair ? s.tls : null,
          tlsCert: pair?.cert,
          tlsKey: pair?.key,
          maxMessageBytes: s.maxMessageBytes,
          idleTimeoutMs: s.idleTimeoutMs,
          maxConnectionsPerAddress: s.maxConnectionsPerAddress,
          maxConnections: s.maxConnections,
          udpReceiveBufferBytes: s.udpReceiveBufferBytes,
          udpSockets: cfg.ingest.udpSocketsPerWorker ?? Math.ceil(8 / workers),
        },
        batchSize: cfg.batchSize,
        maxInFlight: Math.max(1000, Math.floor(cfg.ingest.maxInFlight / workers)),
        parserNice: cfg.ingest.parserNice,
        onBatch: ingest.onBatch,
        storedRanges: ingest.storedRanges,
        onBindError: (name, port, err) => this.ctx.log.error(`events: listener ${name} not bound: ${bindHint(port, err)}`, { listener: name, port }),
        log: this.ctx.log,
      });
      for (const l of await this.workers.start(ingest.state)) {
        bound.push(l);
        onBound(l.name, l);
      }
    }
    const passive = ingest ? { ...cfg, syslog: { ...cfg.syslog, udp: null, tcp: null, tls: null } } : cfg;
    bound.push(
      ...(await bindReceivers(passive, deliver, {
        dataDir: this.ctx.kernelConfig.dataDir,
        trapUsers: async () => {
          const users = await this.trapUsers(this.ctx.config.traps.v3Credentials);
          this.usersKey = JSON.stringify(users);
          return users;
        },
        log: this.ctx.log,
        onBound,
      })),
    );
    this.bound = bound;
    if (this.ctx.config.traps.v3Credentials.length && this.ctx.mode === "full") {
      this.refresh = setInterval(
        () => void this.refreshTrapUsers().catch((err: unknown) => this.ctx.log.warn("events: v3 trap users not reloaded", { error: String(err) })),
        this.ctx.config.traps.v3RefreshMs,
      );
      this.refresh.unref();
    }
  }

  /** Relays every datagram the UDP syslog listeners receive, as received, to these targets (see SyslogUdpMirror). */
  mirrorSyslogUdp(targets: readonly MirrorTarget[], generation: number): void {
    this.mirrors = targets;
    this.mirrorGen = generation;
    for (const l of this.bound) l.mirror?.(targets, generation);
  }

  /** Per mirror target id: what the UDP syslog listeners relayed (summed over them). */
  syslogUdpMirrorCounts(): Map<string, MirrorCount> {
    return sumMirrorCounts(this.bound.map((l) => l.mirrorCounts?.() ?? new Map<string, MirrorCount>()));
  }

  /**
   * Reads the v3 trap credentials again and hands them to the trap listener when they changed (a password rotated,
   * a user renamed): no restart needed. Runs every traps.v3RefreshMs; tests call it directly.
   */
  async refreshTrapUsers(): Promise<boolean> {
    const trap = this.bound.find((l): l is TrapListener => l.name === "traps.udp" && "setUsers" in l);
    if (!trap) return false;
    const next = await this.trapUsers(this.ctx.config.traps.v3Credentials);
    const key = JSON.stringify(next);
    if (key === this.usersKey) return false;
    this.usersKey = key;
    trap.setUsers(next);
    this.ctx.log.info("events: v3 trap users reloaded", { users: next.map((u) => u.name) });
    return true;
  }

  /**
   * The v3 trap users of traps.v3Credentials for remote pollers' trap listeners (GET /events/pollers/trap-users): the
   * keys sealed, so only a poller holding the core's secret key opens them.
   */
  async pollerTrapUsers(): Promise<TrapUserWire[]> {
    return sealTrapUsers(await this.trapUsers(this.ctx.config.traps.v3Credentials), this.ctx.secrets);
  }

  async stop(): Promise<void> {
    if (this.refresh) clearInterval(this.refresh);
    this.refresh = null;
    const bound = this.bound;
    this.bound = [];
    await Promise.all([...bound.map((l) => l.close().catch(() => undefined)), this.workers?.close()]);
    for (const l of bound) this.ctx.reportListener(l.name, { bound: false, port: null });
  }

  /** After stop() and the pipeline's last writes: the ingest workers close their journals and end. */
  async exitWorkers(): Promise<void> {
    await this.workers?.exit();
    this.workers = null;
  }

  /** USM users of the configured snmp_v3 credentials (a missing or non-v3 credential is logged and skipped). */
  private async trapUsers(ids: readonly string[]): Promise<TrapUser[]> {
    if (!ids.length || this.ctx.mode !== "full") return [];
    const users: TrapUser[] = [];
    for (const id of ids) {
      const c = await this.credentials.reveal(id);
      const user = (c?.settings as Partial<Record<string, string>> | undefined)?.user;
      if (!c || c.kind !== "snmp_v3" || !user) {
        this.ctx.log.warn("events: v3 trap credential skipped (not an snmp_v3 credential)", { credential_id: id });
        continue;
      }
      users.push({
        name: user,
        level: (c.settings.security_level ?? "noAuthNoPriv") as TrapUser["level"],
        authProtocol: c.settings.auth_protocol?.toLowerCase() as TrapUser["authProtocol"],
        authKey: c.secrets.auth_key,
        privProtocol: c.settings.priv_protocol?.toLowerCase() as TrapUser["privProtocol"],
        privKey: c.secrets.priv_key,
      });
    }
    return users;
  }
}
