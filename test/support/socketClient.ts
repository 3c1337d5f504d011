import { io, type Socket } from "socket.io-client";

/** What the kernel answers to `subscribe` / `unsubscribe`. */
export type SubscribeAck = { ok: true; channel: string } | { ok: false; error: { code: string; message: string } };

export interface ReceivedEvent {
  name: string;
  payload: unknown;
  at: number;
}

/** A connected Socket.IO client that records every event it receives. */
export interface TestSocket {
  socket: Socket;
  /** Every event received so far, in order. */
  events: ReceivedEvent[];
  subscribe(channel: unknown): Promise<SubscribeAck>;
  unsubscribe(channel: unknown): Promise<SubscribeAck>;
  /** Payloads received under `name` (optionally matching `where`). */
  received(name: string, where?: (payload: unknown) => boolean): unknown[];
  /** Resolves with the first payload under `name` matching `where` (already received or arriving within timeoutMs). */
  waitFor(name: string, where?: (payload: unknown) => boolean, timeoutMs?: number): Promise<unknown>;
  /** Waits `ms`, then fails if an event `name` matching `where` was received (at any time). */
  expectNone(name: string, where?: (payload: unknown) => boolean, ms?: number): Promise<void>;
  close(): void;
}

/** The error of a refused handshake: message, plus `data` from the server middleware. */
export type ConnectError = Error & { data?: { code?: string } };

const open = new Set<Socket>();

function rawSocket(url: string, token: string | undefined): Socket {
  const socket = io(url, {
    auth: token === undefined ? {} : { token },
    transports: ["websocket"],
    reconnection: false,
    forceNew: true,
    timeout: 10000,
  });
  open.add(socket);
  return socket;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const any = () => true;

/** Connects with `auth.token` (none = anonymous); resolves once connected, rejects with the connect_error. */
export function connectSocket(url: string, token?: string): Promise<TestSocket> {
  const socket = rawSocket(url, token);
  const events: ReceivedEvent[] = [];
  const waiters = new Set<() => void>();
  socket.onAny((name: string, payload: unknown) => {
    events.push({ name, payload, at: Date.now() });
    for (const w of [...waiters]) w();
  });

  const ackCall = (what: "subscribe" | "unsubscribe", channel: unknown) =>
    socket.timeout(5000).emitWithAck(what, typeof channel === "object" && channel !== null ? channel : { channel }) as Promise<SubscribeAck>;

  const received = (name: string, where: (payload: unknown) => boolean = any) =>
    events.filter((e) => e.name === name && where(e.payload)).map((e) => e.payload);

  const t: TestSocket = {
    socket,
    events,
    subscribe: (channel) => ackCall("subscribe", channel),
    unsubscribe: (channel) => ackCall("unsubscribe", channel),
    received,
    waitFor(name, where = any, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = received(name, where);
          if (hit.length) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(hit[0]);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const seen = events.map((e) => e.name).join(", ") || "nothing";
          reject(new Error(`no "${name}" event matching within ${timeoutMs} ms (received: ${seen})`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async expectNone(name, where = any, ms = 400) {
      await sleep(ms);
      const hit = received(name, where);
      if (hit.length) throw new Error(`expected no "${name}" event, got ${hit.length}: ${JSON.stringify(hit).slice(0, 300)}`);
    },
    close() {
      socket.close();
      open.delete(socket);
    },
  };

  return new Promise((resolve, reject) => {
    socket.once("connect", () => {
      socket.off("connect_error");
      resolve(t);
    });
    socket.once("connect_error", (err) => {
      t.close();
      reject(err);
    });
  });
}

/** Connects expecting the handshake to be refused; resolves with the connect_error, fails if it connects. */
export function connectRefused(url: string, token?: string): Promise<ConnectError> {
  const socket = rawSocket(url, token);
  return new Promise((resolve, reject) => {
    socket.once("connect", () => {
      socket.close();
      open.delete(socket);
      reject(new Error("the handshake was accepted"));
    });
    socket.once("connect_error", (err) => {
      socket.close();
      open.delete(socket);
      resolve(err as ConnectError);
    });
  });
}

/** Closes every socket these helpers opened (afterEach / afterAll). */
export function closeAllSockets(): void {
  for (const s of open) s.close();
  open.clear();
}
