/** Helpers of the read-side tests (active alerts, acks, history, calendar, mutes, maintenance). */
import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import { startTestKernel, type TestKernel, type TestKernelOptions } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { alertsPlugin } from "../index.js";

/** inventory + polling (no embedded poller) + alerts. */
export function startAlertsKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  const { pluginConfig, ...rest } = options.overrides ?? {};
  return startTestKernel({
    ...options,
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin],
    overrides: { ...rest, pluginConfig: { ...(pluginConfig ?? {}), polling: { embeddedPoller: false } } },
  });
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function insertFolder(db: string, name: string, parent: string | null = null): Promise<string> {
  return (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.node_groups (name, parent_id) VALUES ($1, $2) RETURNING id", [name, parent]))[0].id;
}

let address = 0;
export async function insertNode(db: string, name: string, group: string | null = null, pool: string | null = null): Promise<string> {
  address++;
  return (
    await rawQuery<{ id: string }>(db, "INSERT INTO inventory.nodes (name, address, group_id, pool) VALUES ($1, $2::inet, $3, $4) RETURNING id", [
      name,
      `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}`,
      group,
      pool,
    ])
  )[0].id;
}

export interface HistoryFixture {
  id?: string;
  recorded_at?: string;
  at_unix_ms?: number;
  incident_key?: string;
  check_id?: string;
  direction?: string | null;
  ifindex?: number | null;
  if_name?: string | null;
  metric?: string | null;
  node_id?: string | null;
  observed_value?: number | null;
  threshold_value?: number | null;
  resolved?: boolean;
  row_key?: number | null;
  row_name?: string | null;
  severity?: string;
  state?: string;
  subject_kind?: string;
  subject_name?: string | null;
  title?: string | null;
}

const HISTORY_COLUMNS = [
  "id",
  "recorded_at",
  "at_unix_ms",
  "incident_key",
  "check_id",
  "direction",
  "ifindex",
  "if_name",
  "metric",
  "node_id",
  "observed_value",
  "threshold_value",
  "resolved",
  "row_key",
  "row_name",
  "severity",
  "state",
  "subject_kind",
  "subject_name",
  "title",
] as const;

/** A complete history row: a node fire of cpu_util unless told otherwise. */
export function historyRow(f: HistoryFixture): Required<HistoryFixture> {
  const recorded = f.recorded_at ?? new Date().toISOString();
  const node = f.node_id === undefined ? null : f.node_id;
  const check = f.check_id ?? randomUUID();
  const kind = f.subject_kind ?? (node ? "node" : "pool");
  return {
    id: f.id ?? randomUUID(),
    recorded_at: recorded,
    at_unix_ms: f.at_unix_ms ?? Date.parse(recorded),
    incident_key: f.incident_key ?? `${node ?? f.subject_name ?? "pool"}:${check}`,
    check_id: check,
    direction: f.direction === undefined ? "above" : f.direction,
    ifindex: f.ifindex ?? null,
    if_name: f.if_name ?? null,
    metric: f.metric === undefined ? "cpu_util" : f.metric,
    node_id: node,
    observed_value: f.observed_value === undefined ? 95 : f.observed_value,
    threshold_value: f.threshold_value === undefined ? 90 : f.threshold_value,
    resolved: f.resolved ?? false,
    row_key: f.row_key ?? null,
    row_name: f.row_name ?? null,
    severity: f.severity ?? "critical",
    state: f.state ?? "critical",
    subject_kind: kind,
    subject_name: f.subject_name === undefined ? (kind === "node" ? null : "default") : f.subject_name,
    title: f.title === undefined ? "CPU utilisation above 90" : f.title,
  };
}

/** Inserts history rows (multi-row, in chunks); returns the complete rows. */
export async function insertHistory(db: string, fixtures: HistoryFixture[]): Promise<Required<HistoryFixture>[]> {
  const rows = fixtures.map(historyRow);
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    const arrays = HISTORY_COLUMNS.map((c) => chunk.map((r) => r[c]));
    const types = [
      "uuid",
      "timestamptz",
      "bigint",
      "text",
      "uuid",
      "text",
      "int",
      "text",
      "text",
      "uuid",
      "float8",
      "float8",
      "bool",
      "int",
      "text",
      "text",
      "text",
      "text",
      "text",
      "text",
    ];
    await rawQuery(
      db,
      `INSERT INTO alerts.history (${HISTORY_COLUMNS.join(", ")}) SELECT * FROM unnest(${types.map((t, j) => `$${j + 1}::${t}[]`).join(", ")})`,
      arrays,
    );
  }
  return rows;
}

export interface ActiveFixture {
  incident_key?: string;
  subject_kind?: string;
  node_id?: string | null;
  subject_name?: string | null;
  check_id?: string;
  metric?: string | null;
  ifindex?: number | null;
  if_name?: string | null;
  row_key?: number | null;
  row_name?: string | null;
  severity?: string;
  state?: string;
  title?: string | null;
  fired_at?: string;
}

/** Inserts one open incident; returns its id and incident key. */
export async function insertActive(db: string, f: ActiveFixture): Promise<{ id: string; incident_key: string; check_id: string }> {
  const node = f.node_id ?? null;
  const kind = f.subject_kind ?? (node ? "node" : "pool");
  const check = f.check_id ?? randomUUID();
  const key = f.incident_key ?? `${node ?? `${kind}:${f.subject_name}`}:${check}:${f.ifindex ?? ""}:${f.row_key ?? ""}`;
  const rows = await rawQuery<{ id: string }>(
    db,
    `INSERT INTO alerts.active_alerts (incident_key, subject_kind, node_id, subject_name, check_id, metric, ifindex, if_name, row_key, row_name,
                                       severity, state, direction, observed_value, threshold_value, title, fired_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'above', 95, 90, $13, $14) RETURNING id`,
    [
      key,
      kind,
      node,
      f.subject_name ?? null,
      check,
      f.metric === undefined ? "cpu_util" : f.metric,
      f.ifindex ?? null,
      f.if_name ?? null,
      f.row_key ?? null,
      f.row_name ?? null,
      f.severity ?? "critical",
      f.state ?? f.severity ?? "critical",
      f.title === undefined ? "CPU utilisation above 90" : f.title,
      f.fired_at ?? new Date().toISOString(),
    ],
  );
  return { id: rows[0].id, incident_key: key, check_id: check };
}
