// The session (a bearer token kept in memory only: never localStorage, so a reload signs out), the typed API client,
// and the one Socket.IO connection every view shares.
import { useEffect, useState } from "preact/hooks";
import {
  connectRealtime,
  createClient,
  isErrorEnvelope,
  login as apiLogin,
  NmsApiError,
  type NmsRealtime,
  type RealtimeEvents,
  type Schemas,
} from "../../../../clients/typescript/src/index.ts";

export type Identity = Schemas["Identity"];

let token: string | null = null;
let identity: Identity | null = null;
let publicMode = false;
let live: NmsRealtime | null = null;
const listeners = new Set<() => void>();

export const api = createClient({ baseUrl: "", token: () => token });

export function sessionState() {
  return { identity, publicMode, signedIn: token !== null };
}

function changed() {
  for (const l of listeners) l();
}

/** Re-renders the caller when the session changes. */
export function useSession() {
  const [, bump] = useState(0);
  useEffect(() => {
    const l = () => bump((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return sessionState();
}

/** What the deployment is (public-dashboard mode or not), read once at start. */
export async function probe(): Promise<void> {
  const { data } = await api.GET("/api/v1/health");
  publicMode = Boolean((data as { public_dashboard?: boolean } | undefined)?.public_dashboard);
  if (publicMode) connectLive();
  changed();
}

export async function login(username: string, password: string): Promise<void> {
  const session = await apiLogin(api, username, password);
  token = session.token;
  identity = await unwrapped(api.GET("/api/v1/auth/me"));
  connectLive();
  changed();
}

export async function logout(): Promise<void> {
  if (token) await api.DELETE("/api/v1/auth/sessions/current").catch(() => undefined);
  token = null;
  identity = null;
  live?.close();
  live = null;
  if (publicMode) connectLive();
  changed();
}

function connectLive() {
  live?.close();
  live = connectRealtime({ baseUrl: "", token });
  live.socket.on("session_ended", () => void logout());
  for (const ch of ["alerts.active", "alerts.acks", "inventory.changes"] as const) void live.subscribe(ch).catch(() => undefined);
  if (identity && identity.role !== "viewer" && identity.scope === "All") void live.subscribe("polling.sweeps").catch(() => undefined);
}

export function realtime(): NmsRealtime | null {
  return live;
}

/** Calls `handler` for each event named, while the component is mounted. */
export function useLive<E extends keyof RealtimeEvents>(events: E[], handler: (payload: RealtimeEvents[E], event: E) => void, deps: unknown[] = []) {
  useEffect(() => {
    const socket = live;
    if (!socket) return;
    const offs = events.map((e) => socket.on(e, (p) => handler(p, e)));
    return () => offs.forEach((off) => off());
  }, [live, ...deps]);
}

/** The data of an answer, or a thrown NmsApiError. */
export async function unwrapped<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    if (response.status === 401 && token) void logout();
    throw isErrorEnvelope(error)
      ? new NmsApiError(response.status, error.error.code, error.error.message)
      : new NmsApiError(response.status, `http_${response.status}`, `The service answered ${response.status}.`);
  }
  return data as T;
}

export type Loaded<T> = { data: T | null; error: NmsApiError | null; loading: boolean; reload: () => void };

/** Loads data with `load`, again on `reload()` or when deps change; keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: NmsApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let gone = false;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => !gone && setState({ data, error: null, loading: false }),
      (error: unknown) =>
        !gone &&
        setState((s) => ({
          data: s.data,
          error: error instanceof NmsApiError ? error : new NmsApiError(0, "network_error", "The service could not be reached."),
          loading: false,
        })),
    );
    return () => {
      gone = true;
    };
  }, [tick, ...deps]);
  return { ...state, reload: () => setTick((n) => n + 1) };
}

/** A reload at most every `ms` (bursts of live events cost one request). */
export function throttled(fn: () => void, ms = 300): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, ms);
  };
}

export function can(permission: "AckAlerts" | "ManageConfig" | "ManageSystem"): boolean {
  const role = identity?.role;
  if (!role) return false;
  if (permission === "AckAlerts") return role === "operator" || role === "admin";
  if (permission === "ManageConfig") return role === "operator" || role === "admin";
  return role === "admin";
}
