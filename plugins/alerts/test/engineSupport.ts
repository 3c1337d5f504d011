/** Helpers of the engine and threshold tests: a kernel with the engine running, inventory rows, samples, bus waits. */
import type { PluginContext, PluginManifest } from "../../../core/index.js";
import type { BusEvents } from "../../../core/bus/EventBus.js";
import { rawQuery } from "../../../test/support/db.js";
import { startTestKernel, type TestKernel, type TestKernelOptions } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin, type Sample } from "../../polling/index.js";
import { alertsPlugin } from "../index.js";
import { AlertEngine } from "../services/AlertEngine.js";
import type { HistoryInsert } from "../repositories/IncidentRepository.js";

export interface EngineKernel extends TestKernel {
  db: string;
  ctx: PluginContext;
  engine: AlertEngine;
  /** Every bus event of the alerts plugin, in order. */
  seen: { name: string; payload: unknown }[];
}

const ALERT_EVENTS = ["alerts.fired", "alerts.resolved", "alerts.suppressed", "alerts.node.state"] as const;

/** inventory + polling (no embedded poller) + alerts, the engine started (idempotent if the manifest starts it too). */
export async function startEngineKernel(options: TestKernelOptions & { flushMs?: number; extraPlugins?: PluginManifest[] } = {}): Promise<EngineKernel> {
  const { pluginConfig, ...rest } = options.overrides ?? {};
  const k = await startTestKernel({
    ...options,
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, ...(options.extraPlugins ?? [])],
    overrides: {
      ...rest,
      pluginConfig: { ...(pluginConfig ?? {}), polling: { embeddedPoller: false }, alerts: { flushMs: options.flushMs ?? 50 } },
    },
  });
  const ctx = k.kernel.context("alerts")!;
  await ctx.get(AlertEngine).start();
  const seen: { name: string; payload: unknown }[] = [];
  for (const name of ALERT_EVENTS) ctx.bus.on(name, (payload) => void seen.push({ name, payload }));
  const stop = k.stop;
  return Object.assign(k, {
    db: k.databaseUrl!,
    ctx,
    engine: k.kernel.context("alerts")!.get(AlertEngine),
    seen,
    stop: async () => {
      await ctx
        .get(AlertEngine)
        .stop()
        .catch(() => undefined);
      await stop();
    },
  });
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function insertFolder(db: string, name: string, parent: string | null = null): Promise<string> {
  return (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.node_groups (name, parent_id) VALUES ($1, $2) RETURNING id", [name, parent]))[0].id;
}

export async function insertProfile(db: string, name: string): Promise<string> {
  return (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.profiles (name) VALUES ($1) RETURNING id", [name]))[0].id;
}

let address = 0;
export async function insertNode(
  db: string,
  name: string,
  opts: { group?: string | null; profile?: string | null; pool?: string | null } = {},
): Promise<string> {
  address++;
  return (
    await rawQuery<{ id: string }>(
      db,
      "INSERT INTO inventory.nodes (name, address, group_id, profile_id, pool) VALUES ($1, $2::inet, $3, $4, $5) RETURNING id",
      [name, `10.77.${(address >> 8) & 255}.${address & 255}`, opts.group ?? null, opts.profile ?? null, opts.pool ?? null],
    )
  )[0].id;
}

/** A sample of a node (defaults: no port, no row, now, pool default, not backfilled). */
export function sample(node: string, metric: string, value: number, extra: Partial<Sample> = {}): Sample {
  return {
    node_id: node,
    metric,
    value,
    at_unix_ms: Date.now(),
    ifindex: null,
    if_name: null,
    row: null,
    row_name: null,
    pool: "default",
    poller_id: "embedded",
    backfill: false,
    ...extra,
  };
}

/** Publishes samples the way the polling plugin does. */
export async function publish(k: EngineKernel, ...samples: Sample[]): Promise<void> {
  await k.ctx.bus.emit("polling.sample", { samples });
}

/** Publishes samples one event at a time. */
export async function publishEach(k: EngineKernel, ...samples: Sample[]): Promise<void> {
  for (const s of samples) await publish(k, s);
}

type AlertEvent = (typeof ALERT_EVENTS)[number];

/** Resolves with the first event `name` (recorded since `from`) that matches `where`, waiting up to timeoutMs. */
export async function waitForEvent<E extends AlertEvent>(
  k: EngineKernel,
  name: E,
  where: (p: BusEvents[E]) => boolean = () => true,
  timeoutMs = 5000,
): Promise<BusEvents[E]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = k.seen.find((e) => e.name === name && where(e.payload as BusEvents[E]));
    if (hit) return hit.payload as BusEvents[E];
    if (Date.now() > deadline) throw new Error(`no ${name} event within ${timeoutMs} ms; seen: ${JSON.stringify(k.seen.map((e) => e.name))}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Writes what the engine holds now and returns the events recorded since the mark. */
export async function settle(k: EngineKernel): Promise<void> {
  await k.engine.flushNow();
}

/** Events of these names recorded so far (optionally for one node). */
export function events<E extends AlertEvent>(k: EngineKernel, name: E, node?: string): BusEvents[E][] {
  return k.seen
    .filter((e) => e.name === name)
    .map((e) => e.payload as BusEvents[E])
    .filter((p) => node === undefined || (p as { node?: string | null; node_id?: string }).node === node || (p as { node_id?: string }).node_id === node);
}

export function clearSeen(k: EngineKernel): void {
  k.seen.length = 0;
}

/** A history row as read raw: the engine's insert, plus recorded_at (text, microseconds) and at_unix_ms as bigint text. */
export type HistoryRowRaw = Omit<HistoryInsert, "at_unix_ms"> & { recorded_at: string; at_unix_ms: string };

/** History rows (oldest first by the keyset), recorded_at as text with microseconds. */
export async function history(k: EngineKernel, where = "true", params: unknown[] = []): Promise<HistoryRowRaw[]> {
  return rawQuery<HistoryRowRaw>(
    k.db,
    `SELECT id, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS recorded_at, at_unix_ms::text, incident_key, check_id,
            direction, ifindex, if_name, metric, node_id, observed_value, threshold_value, resolved, row_key, row_name, severity, state,
            subject_kind, subject_name, title
       FROM alerts.history WHERE ${where} ORDER BY recorded_at, id`,
    params,
  );
}

export async function activeAlerts(k: EngineKernel, where = "true", params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return rawQuery(k.db, `SELECT * FROM alerts.active_alerts WHERE ${where} ORDER BY fired_at, incident_key`, params);
}

export async function nodeState(k: EngineKernel, node: string): Promise<string | null> {
  const rows = await rawQuery<{ state: string }>(k.db, "SELECT state FROM alerts.node_states WHERE node_id = $1", [node]);
  return rows[0]?.state ?? null;
}

/** Creates a threshold through the API as admin; returns its id. */
export async function createThreshold(k: EngineKernel, body: Record<string, unknown>): Promise<string> {
  const res = await k.http.post("/api/v1/thresholds").set(bearer(k.adminToken)).send(body);
  if (res.status !== 201) throw new Error(`threshold create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}
