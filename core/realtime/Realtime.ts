import type { Server as HttpServer } from "node:http";
import { Server, type Socket } from "socket.io";
import { createAdapter } from "@socket.io/postgres-adapter";
import type pg from "pg";
import type { AuthService } from "../auth/AuthService.js";
import { ANONYMOUS_VIEWER, hasPermission, type Caller, type PermissionName } from "../auth/Caller.js";
import type { Logger } from "../logging/Logger.js";
import type { PluginRealtime, PublishOptions } from "../pluginhost/manifest.js";

export interface ChannelSpec {
  fullName: string;
  permission: PermissionName;
  scoped: boolean;
}

type Ack = (reply: { ok: true; channel: string } | { ok: false; error: { code: string; message: string } }) => void;

const ALL = "all";
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
  private readonly channels = new Map<string, ChannelSpec>();

  constructor(
    private readonly auth: AuthService,
    private readonly publicDashboard: boolean,
    private readonly log: Logger,
  ) {}

  declare(spec: ChannelSpec): void {
    this.channels.set(spec.fullName, spec);
  }

  attach(server: HttpServer, adapterPool: pg.Pool | null): void {
    this.io = new Server(server, { path: "/socket.io", serveClient: false, cors: { origin: false } });
    if (adapterPool) {
      this.io.adapter(
        createAdapter(adapterPool, {
          tableName: "core.socket_io_attachments",
          channelPrefix: "nms_socket_io",
          errorHandler: (e) => this.log.warn("socket.io adapter error", { error: e }),
        }),
      );
    }
    this.io.use((socket, next) => {
      this.authenticate(socket)
        .then((caller) => {
          socket.data.caller = caller;
          next();
        })
        .catch((err: { code?: string; message?: string }) => {
          const e = new Error(err?.message ?? "unauthorized") as Error & { data: unknown };
          e.data = { code: err?.code ?? "unauthorized" };
          next(e);
        });
    });
    this.io.on("connection", (socket) => this.onConnection(socket));
  }

  private async authenticate(socket: Socket): Promise<Caller> {
    const fromAuth = (socket.handshake.auth as { token?: unknown })?.token;
    const header = socket.handshake.headers.authorization;
    const token = typeof fromAuth === "string" && fromAuth ? fromAuth : header?.replace(/^Bearer\s+/i, "");
    if (token) return this.auth.authenticate(token);
    if (this.publicDashboard) return ANONYMOUS_VIEWER;
    throw Object.assign(new Error("A valid bearer token is required."), { code: "unauthorized" });
  }

  private onConnection(socket: Socket): void {
    const caller = socket.data.caller as Caller;
    socket.on("subscribe", (req: unknown, ack?: Ack) => {
      const reply = typeof ack === "function" ? ack : () => undefined;
      const name = typeof req === "string" ? req : (req as { channel?: unknown })?.channel;
      const spec = typeof name === "string" ? this.channels.get(name) : undefined;
      if (!spec) return reply({ ok: false, error: { code: "unknown_channel", message: "No such channel." } });
      if (!hasPermission(caller, spec.permission)) {
        return reply({ ok: false, error: { code: "permission_denied", message: `Your role (${caller.role}) lacks the ${spec.permission} permission.` } });
      }
      void socket.join(this.roomsFor(spec, caller));
      reply({ ok: true, channel: spec.fullName });
    });
    socket.on("unsubscribe", (req: unknown, ack?: Ack) => {
      const name = typeof req === "string" ? req : (req as { channel?: unknown })?.channel;
      const spec = typeof name === "string" ? this.channels.get(name) : undefined;
      if (spec) for (const r of this.roomsFor(spec, caller)) void socket.leave(r);
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
    const rooms = [room(channel, ALL)];
    if (spec.scoped) for (const f of options.folders ?? []) rooms.push(room(channel, `f:${f}`));
    this.io.to(rooms).emit(event, payload);
  }

  forPlugin(pluginId: string): PluginRealtime {
    return {
      publish: (channel, event, payload, options) => this.publish(`${pluginId}.${channel}`, `${pluginId}.${event}`, payload, options),
    };
  }

  /** Disconnects clients; the HTTP server is closed by the kernel. */
  async close(): Promise<void> {
    if (!this.io) return;
    this.io.disconnectSockets(true);
    await new Promise<void>((resolve) => this.io!.close(() => resolve()));
    this.io = undefined;
  }
}
