import type { PluginManifest } from "../../core/index.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { flowsPlugin } from "../../plugins/flows/index.js";
import { forwardingPlugin } from "../../plugins/forwarding/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import type { TestKernel } from "../support/testKernel.js";

/** Every built-in plugin that declares bundle tables (and those holding secrets the bundle must not carry). */
export const BUNDLE_PLUGINS: PluginManifest[] = [
  inventoryPlugin,
  pollingPlugin,
  alertsPlugin,
  eventsPlugin,
  notificationsPlugin,
  flowsPlugin,
  forwardingPlugin,
];

export type Bundle = Record<string, unknown> & { notes: Note[] };
export interface Note {
  table: string;
  code: string;
  count: number;
  field: string | null;
}
export interface Outcome {
  ok: boolean;
  dry_run: boolean;
  mode: string;
  version: number;
  tables: Record<string, { created: number; updated: number; skipped: number; deleted: number }>;
  notes: Note[];
}

/** POST that must answer `status` (default 201), giving the body. */
export async function must(
  k: TestKernel,
  method: string,
  path: string,
  body?: unknown,
  status = method === "POST" ? 201 : 200,
): Promise<Record<string, unknown>> {
  const res = await k.request(method, path, { body });
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

export async function exportBundle(k: TestKernel, token = k.adminToken): Promise<{ status: number; text: string; bundle: Bundle }> {
  const res = await fetch(`${k.url}/api/v1/config/bundle`, { headers: { Authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, text, bundle: JSON.parse(text) as Bundle };
}

export async function importBundle(k: TestKernel, bundle: unknown, query = "", token = k.adminToken): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${k.url}/api/v1/config/bundle/import${query}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(bundle),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export const note = (notes: Note[], table: string, code: string, field?: string | null) =>
  notes.find((n) => n.table === table && n.code === code && (field === undefined || n.field === field));

/** Row counts of the bundle's tables, straight from the store. */
export async function tableCounts(k: TestKernel): Promise<Record<string, number>> {
  const q = async (sql: string) => ((await k.context("inventory").store.query<{ n: number }>(sql)).rows[0] as { n: number }).n;
  const out: Record<string, number> = {};
  for (const [name, table] of Object.entries({
    node_groups: "inventory.node_groups",
    nodes: "inventory.nodes",
    profiles: "inventory.profiles",
    classification_rules: "inventory.classification_rules",
    url_checks: "inventory.url_checks",
    dns_checks: "inventory.dns_checks",
    collection_templates: "polling.collection_templates",
    collection_template_items: "polling.collection_template_items",
    profile_collection_templates: "polling.profile_collection_templates",
    thresholds: "alerts.thresholds",
    event_rules: "events.rules",
    event_sources: "events.sources",
    forward_destinations: "forwarding.destinations",
  }))
    out[name] = await q(`SELECT count(*)::int AS n FROM ${table}`);
  return out;
}

/** An empty bundle of this version with the given arrays. */
export function bundleOf(arrays: Record<string, unknown[]>, version = 2): Record<string, unknown> {
  return {
    format: "service.config-bundle",
    version,
    service_version: "0.0.0",
    exported_at: new Date().toISOString(),
    secrets: "references",
    notes: [],
    ...arrays,
  };
}
