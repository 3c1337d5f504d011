import { randomUUID } from "node:crypto";
import type { Server as HttpServer } from "node:http";
import { Server, type Socket } from "socket.io";
import { createAdapter } from "@socket.io/postgres-adapter";
import type pg from "pg";
import type { AuthService } from "../auth/AuthService.js";
import { ANONYMOUS_VIEWER, hasPermission, type Caller, type PermissionName } from "../auth/Caller.js";
import { ApiError, unauthorized } from "../errors.js";
import type { Logger } from "../logging/Logger.js";
import { closePool, type Queryable } from "../store/Store.js";
import type { ChannelFilter, PluginRealtime, PublishOptions } from "../pluginhost/manifest.js";

export interface ChannelSpec {
  fullName: string;
  permission: PermissionName;
  scoped: boolean;
  /** Filtered channel: each subscriber gets the items of a publish that pass its own filter (ChannelDeclaration). */
  filter?: ChannelFilter;
  maxBuffered?: number;
}

/** Unsent messages past which a subscriber of a filtered channel is disconnected, unless the channel says otherwise. */
const DEFAULT_MAX_BUFFERED = 1000;
/** The event replicas exchange for filtered channels (each filters for its own sockets). */
const FILTERED_EVENT = "nms:filtered";
/**
 * Which replicas have subscribers of which filtered channel: a replica sends a filtered publish to the others only when
 * one of them has a subscriber (each publish is written through PostgreSQL: without a subscriber it is pure cost).
 * A replica says so when its first subscriber comes or its last goes, and again every INTEREST_REPEAT_MS (so a new
 * replica learns it); an interest not repeated within INTEREST_TTL_MS is forgotten.
 */
const INTEREST_EVENT = "nms:interest";
const INTEREST_REPEAT_MS = 15_000;
const INTEREST_TTL_MS = 45_000;

type Ack = (reply: { ok: true; channel: string } | { ok: false; error: { code: string; message: string } }) => void;

const ALL = "all";

/** Messages engine.io holds for a socket that its transport has not taken yet (a subscriber that does not read). */
const unsent = (socket: Socket): number => (socket.conn as unknown as { writeBuffer: unknown[] }).writeBuffer.length;
const room = (channel: string, part: string) => `ch:${channel}:${part}`;

/**
 * Socket.IO on the kernel's HTTP server. The handshake authenticates the bearer
 * token (`auth.token`, or an Authorization header); a client then emits
 * `subscribe` / `unsubscribe` with a channel name. Rooms are per channel and per
 * scope part, so a folder-scoped socket only joins the rooms of its folders and
 * an event published for a folder path reaches exactly the sockets that may see it,
 * on every replica (Postgres adapter).
 */
export class Realtime {
  private io?: Server;
  private adapterPool?: pg.Pool;
  private sweep?: NodeJS.Timeout;
  private readonly channels = new Map<string, ChannelSpec>();
  private readonly serverId = randomUUID();
  /** channel → replica → until when its interest holds (ms). */
  private readonly interest = new Map<string, Map<string, number>>();
  private readonly announced = new Map<string, boolean>();
  private interestTimer?: NodeJS.Timeout;
  /** Told of every publish (the kernel's broadcast counter). */
  onBroadcast?: (channel: string) => void;

  constructor(
    private readonly auth: AuthService,
    private readonly publicDashboard: boolean,
    private readonly log: Logger,
    private readonly revalidateMs = 60000,
  ) {}

  declare(spec: ChannelSpec): void {
    this.channels.set(spec.fullName, spec);
  }

  /**
   * With an adapter (its own small pool: it holds one client for LISTEN),
   * broadcasts go through PostgreSQL to every replica. Resolves once that
   * listener is LISTENing (seen in pg_stat_activity under the pool's own
   * application_name), so a kernel that reports ready also delivers across
   * replicas, and a close right after boot never strands a half-set-up client.
   */
  async attach(server: HttpServer, adapter: { pool: pg.Pool; applicationName: string; probe: Queryable } | null): Promise<void> {
    this.io = new Server(server, { path: "/socket.io", serveClient: false, cors: { origin: false } });
    if (adapter) {
      this.adapterPool = adapter.pool;
      this.io.adapter(
        createAdapter(adapter.pool, {
          tableName: "core.socket_io_attachments",
          channelPrefix: "nms_socket_io",
          errorHandler: (e) => this.log.warn("socket.io adapter error", { error: e }),
        }),
      );
      const deadline = Date.now() + 10000;
      for (;;) {
        const { rows } = await adapter.probe.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'", [
          adapter.applicationName,
        ]);
        if (rows.length) break;
        if (Date.now() > deadline) throw new Error("the Socket.IO PostgreSQL adapter could not start listening");
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    this.io.use((socket, next) => {
      this.authenticate(socket)
        .then((caller) => {
          socket.data.caller = caller;
          next();
        })
        .catch((err: unknown) => {
          // Only our own envelope errors reach the client; anything else (a database outage) stays in the log.
          const known = err instanceof ApiError;
          if (!known) this.log.error("socket handshake failed", { error: err });
          const e = new Error(known ? err.message : "The handshake could not be completed.") as Error & { data: unknown };
          e.data = { code: known ? err.code : "internal_error" };
          next(e);
        });
    });
    this.io.on("connection", (socket) => this.onConnection(socket));
    this.io.on(FILTERED_EVENT, (channel: string, event: string, items: unknown[], folders: string[]) => {
      const spec = this.channels.get(channel);
      if (spec?.filter) this.dispatchFiltered(spec, event, items, folders);
    });
    this.io.on(INTEREST_EVENT, (channel: string, serverId: string, subscribed: boolean) => {
      if (serverId === this.serverId) return;
      let replicas = this.interest.get(channel);
      if (!replicas) this.interest.set(channel, (replicas = new Map()));
      if (subscribed) replicas.set(serverId, Date.now() + INTEREST_TTL_MS);
      else replicas.delete(serverId);
    });
    if (adapter) {
      this.interestTimer = setInterval(() => this.announceAll(true), INTEREST_REPEAT_MS);
      this.interestTimer.unref();
    }
    this.sweep = setInterval(() => void this.revalidate().catch((err) => this.log.warn("socket revalidation failed", { error: err })), this.revalidateMs);
    this.sweep.unref();
  }

  private async authenticate(socket: Socket): Promise<Caller> {
    const fromAuth = (socket.handshake.auth as { token?: unknown })?.token;
    const header = socket.handshake.headers.authorization;
    const token = typeof fromAuth === "string" && fromAuth ? fromAuth : header?.replace(/^Bearer\s+/i, "");
    if (token) return this.auth.authenticate(token);
    if (this.publicDashboard) return ANONYMOUS_VIEWER;
    throw unauthorized();
  }

  /**
   * Tokens are checked at the handshake and again on every subscribe; this sweep
   * also disconnects idle sockets whose session ended or whose token was revoked.
   */
  private async revalidate(): Promise<void> {
    if (!this.io) return;
    for (const socket of await this.io.local.fetchSockets()) {
      const caller = socket.data.caller as Caller | undefined;
      if (!caller || caller.kind === "anonymous") continue;
      try {
        await this.authenticate(socket as unknown as Socket);
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) {
          socket.emit("session_ended", { error: { code: err.code, message: err.message } });
          socket.disconnect(true);
        }
      }
    }
  }

  private onConnection(socket: Socket): void {
    const caller = socket.data.caller as Caller;
    // Rooms are left once the socket is gone: say so after that.
    socket.on("disconnect", () => setImmediate(() => this.announceAll(false)));
    socket.on("subscribe", async (req: unknown, ack?: Ack) => {
      const reply = typeof ack === "function" ? ack : () => undefined;
      if (caller.kind !== "anonymous") {
        try {
          await this.authenticate(socket);
        } catch (err) {
          const known = err instanceof ApiError;
          reply({ ok: false, error: { code: known ? err.code : "internal_error", message: known ? err.message : "The subscription could not be checked." } });
          if (known && err.status === 401) socket.disconnect(true);
          return;
        }
      }
      const name = typeof req === "string" ? req : (req as { channel?: unknown })?.channel;
      const spec = typeof name === "string" ? this.channels.get(name) : undefined;
      if (!spec) return reply({ ok: false, error: { code: "unknown_channel", message: "No such channel." } });
      if (!hasPermission(caller, spec.permission)) {
        return reply({ ok: false, error: { code: "permission_denied", message: `Your role (${caller.role}) lacks the ${spec.permission} permission.` } });
      }
      if (spec.filter) {
        const verdict = spec.filter((req as { filter?: unknown })?.filter ?? {});
        if (!verdict.ok) return reply({ ok: false, error: { code: "invalid_filter", message: verdict.message } });
        (socket.data.filters ??= {} as Record<string, (item: unknown) => boolean>)[spec.fullName] = verdict.test;
      }
      void socket.join(this.roomsFor(spec, caller));
      reply({ ok: true, channel: spec.fullName });
      if (spec.filter) this.announce(spec.fullName);
    });
    socket.on("unsubscribe", (req: unknown, ack?: Ack) => {
      const name = typeof req === "string" ? req : (req as { channel?: unknown })?.channel;
      const spec = typeof name === "string" ? this.channels.get(name) : undefined;
      if (spec) for (const r of this.roomsFor(spec, caller)) void socket.leave(r);
      if (spec?.filter) this.announce(spec.fullName);
      if (typeof ack === "function")
        ack(spec ? { ok: true, channel: spec.fullName } : { ok: false, error: { code: "unknown_channel", message: "No such channel." } });
    });
  }

  private roomsFor(spec: ChannelSpec, caller: Caller): string[] {
    if (!spec.scoped || caller.scope === "All") return [room(spec.fullName, ALL)];
    return caller.scope.folders.map((f) => room(spec.fullName, `f:${f}`));
  }

  publish(channel: string, event: string, payload: unknown, options: PublishOptions = {}): void {
    const spec = this.channels.get(channel);
    if (!spec) throw new Error(`no channel ${channel} is declared`);
    if (!this.io) return;
    this.onBroadcast?.(channel);
    const rooms = [room(channel, ALL)];
    if (spec.scoped) for (const f of options.folders ?? []) rooms.push(room(channel, `f:${f}`));
    if (spec.filter) {
      const items = Array.isArray(payload) ? payload : [payload];
      this.dispatchFiltered(spec, event, items, options.folders ?? []);
      if (this.adapterPool && this.remoteInterest(channel)) this.io.serverSideEmit(FILTERED_EVENT, channel, event, items, options.folders ?? []);
      return;
    }
    this.io.to(rooms).emit(event, payload);
  }

  /** Whether this replica has a socket in any room of `channel`. */
  private hasLocalSubscribers(channel: string): boolean {
    const prefix = `ch:${channel}:`;
    for (const [name, members] of this.io?.of("/").adapter.rooms ?? []) if (members.size && name.startsWith(prefix)) return true;
    return false;
  }

  private remoteInterest(channel: string): boolean {
    const replicas = this.interest.get(channel);
    if (!replicas) return false;
    const now = Date.now();
    for (const [id, until] of replicas) if (until < now) replicas.delete(id);
    return replicas.size > 0;
  }

  /** Tells the other replicas whether this one has subscribers of a filtered channel, when that changed (or always). */
  private announce(channel: string, always = false): void {
    if (!this.io || !this.adapterPool) return;
    const has = this.hasLocalSubscribers(channel);
    if (!always && this.announced.get(channel) === has) return;
    this.announced.set(channel, has);
    if (has || !always) this.io.serverSideEmit(INTEREST_EVENT, channel, this.serverId, has);
  }

  private announceAll(always: boolean): void {
    for (const spec of this.channels.values()) if (spec.filter) this.announce(spec.fullName, always);
  }

  /**
   * A filtered channel's publish, on this replica: every local socket in the channel's rooms (scope) gets the items
   * passing its filter as one message; one with too many unsent messages is told why and disconnected.
   */
  private dispatchFiltered(spec: ChannelSpec, event: string, items: unknown[], folders: readonly string[]): void {
    const ns = this.io!.of("/");
    const ids = new Set<string>();
    const rooms = [room(spec.fullName, ALL), ...(spec.scoped ? folders.map((f) => room(spec.fullName, `f:${f}`)) : [])];
    for (const r of rooms) for (const id of ns.adapter.rooms.get(r) ?? []) ids.add(id);
    const max = spec.maxBuffered ?? DEFAULT_MAX_BUFFERED;
    for (const id of ids) {
      const socket = ns.sockets.get(id);
      if (!socket) continue;
      const test = (socket.data.filters as Record<string, (item: unknown) => boolean> | undefined)?.[spec.fullName];
      const passed = test ? items.filter((item) => test(item)) : items;
      if (!passed.length) continue;
      const buffered = unsent(socket);
      if (buffered > max) {
        this.log.warn("slow subscriber disconnected", { channel: spec.fullName, buffered });
        socket.emit("dropped", { channel: spec.fullName, reason: "too_slow" });
        socket.disconnect(true);
        continue;
      }
      socket.emit(event, passed);
    }
  }

  /** Sockets connected (authenticated) to this replica. */
  get connections(): number {
    return this.io?.of("/").sockets.size ?? 0;
  }

  forPlugin(pluginId: string): PluginRealtime {
    return {
      publish: (channel, event, payload, options) => this.publish(`${pluginId}.${channel}`, `${pluginId}.${event}`, payload, options),
    };
  }

  /** Disconnects every client (first step of a shutdown: the HTTP server then closes). */
  disconnectAll(): void {
    this.io?.disconnectSockets(true);
  }

  /** Disconnects clients and the adapter; the HTTP server is closed by the kernel. */
  async close(): Promise<void> {
    clearInterval(this.sweep);
    clearInterval(this.interestTimer);
    if (!this.io) return;
    this.io.disconnectSockets(true);
    await new Promise<void>((resolve) => this.io!.close(() => resolve()));
    this.io = undefined;
    if (this.adapterPool) await closePool(this.adapterPool);
    this.adapterPool = undefined;
  }
}
