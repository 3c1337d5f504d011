/**
 * Live channels over Socket.IO, typed. The handshake sends the bearer token (`auth.token`); a client subscribes to a
 * channel by name and receives its events. Folder-scoped accounts only receive what their folders cover: the service
 * filters per socket. Without a token, only a public-dashboard deployment accepts the connection (anonymous viewer).
 */
import { io, type ManagerOptions, type Socket, type SocketOptions } from "socket.io-client";
import type { components } from "./schema.js";

type S = components["schemas"];
type Severity = "info" | "warning" | "critical";
type NodeState = "ok" | "warning" | "critical" | "unknown" | "unreachable" | "maintenance";

/** A committed alert transition (alerts.fired / alerts.resolved on alerts.active): a history row plus its incident key. */
export interface AlertTransitionEvent {
  id: string;
  incident_key: string;
  recorded_at: string;
  at_unix_ms: number;
  check: string;
  direction: string | null;
  ifindex: number | null;
  if_name: string | null;
  metric: string | null;
  node: string | null;
  observed_value: number | null;
  threshold_value: number | null;
  resolved: boolean;
  row: number | null;
  row_name: string | null;
  severity: Severity;
  state: NodeState;
  subject_kind: "node" | "pool" | "netcloud_org";
  subject_name: string | null;
  title: string | null;
  folder_path: string[];
}

/** A node's state changed (alerts.node.state on alerts.active). */
export interface NodeStateEvent {
  node_id: string;
  state: NodeState;
  folder_path: string[];
}

/** An ack recorded or cleared (alerts.ack on alerts.acks): the ack result plus who did what to which subject. */
type AckResult = S["AckResult"];
export interface AckEvent extends AckResult {
  action: "recorded" | "cleared";
  subject_kind: string;
  node: string | null;
  subject_name: string | null;
  by: string;
  at: string;
}

export interface NodeChangeEvent {
  id: string;
  name: string;
  address: string;
  group_id: string | null;
  folder_path: string[];
}

export interface FolderChangeEvent {
  id: string;
  name: string;
  parent_id: string | null;
  folder_path: string[];
}

export interface DeliveryEvent {
  id: string;
  transition_id: string;
  channel_id: string;
  event: string;
  status: string;
  attempts: number;
  last_status?: number | null;
  error?: string | null;
  error_class?: string | null;
  retryInMs?: number;
}

export interface SweepProgressEvent {
  id: string;
  status: string;
  cidr: string;
  total: number;
  probed: number;
  found: number;
}

/** A link between two nodes appeared (or came back) or was marked gone; ports are interface names where known. */
export interface TopologyLinkEvent {
  id: string;
  a_node: string;
  a_port: string | null;
  b_node: string;
  b_port: string | null;
  protocols: string[];
}

/** Every event the service emits to subscribers, by its full name. */
export interface RealtimeEvents {
  "alerts.fired": AlertTransitionEvent;
  "alerts.resolved": AlertTransitionEvent;
  "alerts.node.state": NodeStateEvent;
  "alerts.ack": AckEvent;
  /** A batch of received events (one message per folder path per flush), after the subscriber's filter. */
  "events.events": S["EventView"][];
  "inventory.node.created": NodeChangeEvent;
  "inventory.node.updated": NodeChangeEvent;
  "inventory.node.deleted": NodeChangeEvent;
  "inventory.folder.created": FolderChangeEvent;
  "inventory.folder.updated": FolderChangeEvent;
  "inventory.folder.deleted": FolderChangeEvent;
  "notifications.delivery": DeliveryEvent;
  "polling.sweep.progress": SweepProgressEvent;
  "polling.sweep.found": { id: string; results: S["SweepResultView"][] };
  "topology.link.up": TopologyLinkEvent;
  "topology.link.gone": TopologyLinkEvent;
  /** The session ended or the token was revoked: the socket is disconnected next. */
  session_ended: S["ErrorEnvelope"];
  /** A filtered channel's subscriber fell too far behind and is disconnected. */
  dropped: { channel: string; reason: "too_slow" };
}

/** The channels, each with the filter its subscribe takes (`never`: no filter) and the events it carries. */
export interface RealtimeChannels {
  "alerts.active": { filter: never; events: "alerts.fired" | "alerts.resolved" | "alerts.node.state" };
  "alerts.acks": { filter: never; events: "alerts.ack" };
  "events.live": {
    filter: { kind?: "syslog" | "trap" | ("syslog" | "trap")[]; node_id?: string; severity?: number | number[] };
    events: "events.events";
  };
  "inventory.changes": {
    filter: never;
    events: `inventory.${"node" | "folder"}.${"created" | "updated" | "deleted"}`;
  };
  "notifications.deliveries": { filter: never; events: "notifications.delivery" };
  "polling.sweeps": { filter: never; events: "polling.sweep.progress" | "polling.sweep.found" };
  "topology.changes": { filter: never; events: "topology.link.up" | "topology.link.gone" };
}

export type ChannelName = keyof RealtimeChannels;

type Listener<E extends keyof RealtimeEvents> = (payload: RealtimeEvents[E]) => void;

export interface RealtimeOptions {
  /** The service's base URL (`""` or omitted in a browser on the same origin). */
  baseUrl?: string;
  /** The bearer token; null or omitted connects anonymously (public-dashboard mode only). */
  token?: string | null;
  /** More socket.io-client options (transports, reconnection …). */
  socket?: Partial<ManagerOptions & SocketOptions>;
}

export interface NmsRealtime {
  /** The underlying socket.io-client socket. */
  readonly socket: Socket;
  /** Subscribes to a channel; resolves once the service accepted it, rejects with its error envelope's message otherwise. */
  subscribe<C extends ChannelName>(
    channel: C,
    ...filter: [RealtimeChannels[C]["filter"]] extends [never] ? [] : [RealtimeChannels[C]["filter"]?]
  ): Promise<void>;
  unsubscribe(channel: ChannelName): Promise<void>;
  /** Listens to one event; returns the function that stops listening. */
  on<E extends keyof RealtimeEvents>(event: E, listener: Listener<E>): () => void;
  /** Resolves once connected; rejects with the handshake's refusal (code `unauthorized` …). */
  ready(): Promise<void>;
  close(): void;
}

/** An error the service sent back for a subscribe or a refused handshake. */
export class RealtimeError extends Error {
  override readonly name = "RealtimeError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type SubscribeReply = { ok: true; channel: string } | { ok: false; error: { code: string; message: string } };

/**
 * Connects to the service's Socket.IO endpoint (`/socket.io`).
 *
 * ```ts
 * const live = connectRealtime({ baseUrl: "http://127.0.0.1:8080", token });
 * live.on("alerts.fired", (t) => console.log(t.severity, t.title));
 * await live.subscribe("alerts.active");
 * await live.subscribe("events.live", { kind: "syslog", severity: [0, 1, 2, 3] });
 * ```
 */
export function connectRealtime(options: RealtimeOptions = {}): NmsRealtime {
  const socket = io(options.baseUrl ?? "", {
    path: "/socket.io",
    transports: ["websocket"],
    ...(options.token ? { auth: { token: options.token } } : {}),
    ...options.socket,
  });
  // Subscriptions are re-sent after a reconnect (the service forgets a socket's rooms when it goes).
  const subscribed = new Map<string, unknown>();
  const send = (channel: string, filter: unknown) =>
    new Promise<void>((resolve, reject) => {
      socket.emit("subscribe", filter === undefined ? { channel } : { channel, filter }, (reply: SubscribeReply) => {
        if (reply.ok) resolve();
        else reject(new RealtimeError(reply.error.code, reply.error.message));
      });
    });
  let wasConnected = false;
  socket.on("connect", () => {
    if (wasConnected) for (const [channel, filter] of subscribed) void send(channel, filter).catch(() => undefined);
    wasConnected = true;
  });
  return {
    socket,
    subscribe(channel, ...filter) {
      subscribed.set(channel, filter[0]);
      return send(channel, filter[0]).catch((err: unknown) => {
        subscribed.delete(channel);
        throw err;
      });
    },
    unsubscribe(channel) {
      subscribed.delete(channel);
      return new Promise<void>((resolve) => socket.emit("unsubscribe", { channel }, () => resolve()));
    },
    on(event, listener) {
      const l = listener as (payload: unknown) => void;
      socket.on(event as string, l);
      return () => void socket.off(event as string, l);
    },
    ready() {
      if (socket.connected) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const ok = () => {
          socket.off("connect_error", fail);
          resolve();
        };
        const fail = (err: Error & { data?: { code?: string } }) => {
          // A refused handshake is final; a network error keeps retrying (socket.io-client reconnects).
          if (!err.data?.code) return;
          socket.off("connect", ok);
          socket.off("connect_error", fail);
          reject(new RealtimeError(err.data.code, err.message));
        };
        socket.once("connect", ok);
        socket.on("connect_error", fail);
      });
    },
    close() {
      subscribed.clear();
      socket.close();
    },
  };
}
