/** Crafted inventory and stored data for the analysis tests (SQL into the owners' tables, in tests only). */
import { randomUUID } from "node:crypto";
import { DayPartitions } from "../../../core/index.js";
import type { TestKernel } from "../../../test/support/testKernel.js";

export const HOUR = 3_600_000;

export interface Fixture {
  folders: { siteA: string; rackA1: string; siteB: string };
  nodes: Record<"coreA1" | "edgeA2" | "a3" | "a4" | "a5" | "coreB1" | "root", string>;
}

async function created(res: { status: number; body: unknown }): Promise<string> {
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

/** Folders Site A (10.1.0.0/29) > Rack A1, Site B (10.2.0.0/24); seven nodes; samples, alert history and events. */
export async function seed(k: TestKernel): Promise<Fixture> {
  const folder = (body: object) => k.request("POST", "/node-groups", { body }).then(created);
  const siteA = await folder({ name: "Site A", ip_ranges: ["10.1.0.0/29"] });
  const rackA1 = await folder({ name: "Rack A1", parent_id: siteA });
  const siteB = await folder({ name: "Site B", ip_ranges: ["10.2.0.0/24"] });
  const node = (name: string, address: string, group_id: string | null) => k.request("POST", "/nodes", { body: { name, address, group_id } }).then(created);
  const nodes = {
    coreA1: await node("core-a1", "10.1.0.1", siteA),
    edgeA2: await node("edge-a2", "10.1.0.2", rackA1),
    a3: await node("a3", "10.1.0.3", siteA),
    a4: await node("a4", "10.1.0.4", siteA),
    a5: await node("a5", "10.1.0.5", siteA),
    coreB1: await node("core-b1", "10.2.0.1", siteB),
    root: await node("root-node", "192.0.2.9", null),
  };
  const now = Date.now();
  const polling = k.context("polling").store;
  const samples: [string, string, number, number, number][] = []; // node, metric, ifindex, at ms, value
  const interfaces: [string, number, string, number][] = [
    [nodes.coreA1, 1, "Gi0/1", 1e9],
    [nodes.coreA1, 2, "Gi0/2", 1e9],
    [nodes.coreA1, 3, "Gi0/3", 1e9],
    [nodes.coreA1, 4, "Gi0/4", 1e9],
    [nodes.edgeA2, 7, "Fa0/7", 1e8],
    [nodes.edgeA2, 8, "Fa0/8", 1e8],
  ];
  // 7 days of hourly traffic, one sample in the middle of each hour, the last one 30 minutes ago.
  for (let h = 167; h >= 0; h--) {
    const at = now - h * HOUR - HOUR / 2;
    const f = (167 - h) / 167; // 0 → 1 over the week
    samples.push([nodes.coreA1, "if_in_bps", 1, at, 100e6 + f * 500e6]); // Gi0/1: 100 → 600 Mb/s: 80 % in ~2.8 days (critical)
    samples.push([nodes.coreA1, "if_out_bps", 1, at, 50e6]);
    samples.push([nodes.coreA1, "if_in_bps", 2, at, 100e6]); // Gi0/2: flat (never)
    samples.push([nodes.coreA1, "if_in_bps", 3, at, 100e6 + f * 30e6]); // Gi0/3: ~156 days (past the 90-day horizon)
    samples.push([nodes.coreA1, "if_out_bps", 4, at, 300e6 + f * 200e6]); // Gi0/4 out: ~10.5 days (warning)
  }
  // Errors and discards over the last 6 hours.
  for (let h = 0; h < 6; h++) {
    const at = now - h * HOUR - 60_000;
    samples.push([nodes.coreA1, "if_in_errors_ps", 1, at, 5]); // 5/s ≥ 1: warning
    samples.push([nodes.coreA1, "if_in_errors_ps", 2, at, 0.1]); // below
    samples.push([nodes.coreA1, "if_in_discards_ps", 4, at, 150]); // 150/s ≥ 10 × 10: critical
    samples.push([nodes.coreA1, "if_out_discards_ps", 4, at, 50]);
  }
  // Oper status: Fa0/7 changes 6 times in the last 24 h (warning), Fa0/8 once (no); core-b1 reachability 12 times (critical).
  for (let i = 0; i < 13; i++) {
    const at = now - 20 * HOUR + i * HOUR;
    if (i < 7) samples.push([nodes.edgeA2, "if_oper_up", 7, at, i % 2 === 0 ? 1 : 0]);
    samples.push([nodes.edgeA2, "if_oper_up", 8, at, i < 6 ? 1 : 0]);
    samples.push([nodes.coreB1, "reachable", -1, at, i % 2 === 0 ? 1 : 0]);
  }
  // Flapping in the older past (outside a 24 h window): Fa0/8 flapped 10 times 3 days ago.
  for (let i = 0; i < 10; i++) samples.push([nodes.edgeA2, "if_oper_up", 8, now - 72 * HOUR + i * 60_000, i % 2]);
  // a4: heard from 50 h ago only (silent, warning).
  samples.push([nodes.a4, "reachable", -1, now - 50 * HOUR, 1]);
  await new DayPartitions(polling, "samples").ensure(samples.map((s) => s[3]));
  await polling.query(
    `INSERT INTO polling.samples (node_id, metric, ifindex, at, value)
     SELECT x.node_id, x.metric, x.ifindex, to_timestamp(x.at / 1000.0), x.value
       FROM jsonb_to_recordset($1::jsonb) AS x(node_id uuid, metric text, ifindex integer, at double precision, value double precision)`,
    [JSON.stringify(samples.map(([node_id, metric, ifindex, at, value]) => ({ node_id, metric, ifindex, at, value })))],
  );
  for (const [node_id, ifindex, if_name, speed] of interfaces) {
    await polling.query(`INSERT INTO polling.interfaces (node_id, ifindex, if_name, if_speed_bps) VALUES ($1, $2, $3, $4)`, [node_id, ifindex, if_name, speed]);
  }
  // core-a1: 3 fires and 3 clears in the last 24 h (flapping through alerts, warning); edge-a2: 2 rows (no).
  const alerts = k.context("alerts").store;
  const history = async (nodeId: string, resolved: boolean, agoMs: number) =>
    alerts.query(
      `INSERT INTO alerts.history (recorded_at, at_unix_ms, incident_key, check_id, resolved, severity, state, subject_kind, node_id)
       VALUES (to_timestamp($1 / 1000.0), $1, $2, $3, $4, 'warning', 'warning', 'node', $5)`,
      [now - agoMs, `node:${nodeId}`, randomUUID(), resolved, nodeId],
    );
  for (let i = 0; i < 3; i++) {
    await history(nodes.coreA1, false, (10 - 2 * i) * HOUR);
    await history(nodes.coreA1, true, (9 - 2 * i) * HOUR);
  }
  await history(nodes.edgeA2, false, 2 * HOUR);
  await history(nodes.edgeA2, true, HOUR);
  // a3: no sample, but a syslog event 2 h ago (not silent).
  const events = k.context("events").store;
  await new DayPartitions(events, "events").ensure([now - 2 * HOUR]);
  await events.query(
    `INSERT INTO events.events (id, received_at, kind, transport, listener, node_id, message, action)
     VALUES ($1, now() - interval '2 hours', 'syslog', 'udp', 'syslog.udp', $2, 'link up', 'stored')`,
    [randomUUID(), nodes.a3],
  );
  return { folders: { siteA, rackA1, siteB }, nodes };
}

/** Runs a tool through the API and waits for the job to finish; answers the job. */
export async function runTool(
  k: TestKernel,
  body: { tool: string; scope_kind?: string; scope_id?: string | null; params?: object },
  token = k.adminToken,
): Promise<{ id: string; status: string; counts: Record<string, number | boolean> }> {
  const res = await k.request("POST", "/analysis/jobs", { token, body: { scope_kind: "all", ...body } });
  if (res.status !== 202) throw new Error(`run failed: ${res.status} ${JSON.stringify(res.body)}`);
  const id = (res.body as { id: string }).id;
  const deadline = Date.now() + 30000;
  for (;;) {
    const job = await k.request("GET", `/analysis/jobs/${id}`, { token });
    const body = job.body as { status: string; id: string; counts: Record<string, number | boolean> };
    if (body.status === "succeeded" || body.status === "failed") return body;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${body.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Finding {
  id: string;
  job_id: string;
  at: string;
  tool: string;
  severity: string;
  subject: { kind: string; id: string; name: string };
  node_id: string | null;
  ifindex: number | null;
  folder_id: string | null;
  message: string;
  data: Record<string, unknown>;
}

export async function jobFindings(k: TestKernel, jobId: string, token = k.adminToken): Promise<Finding[]> {
  const res = await k.request("GET", `/analysis/jobs/${jobId}/findings?limit=1000`, { token });
  if (res.status !== 200) throw new Error(`findings: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Finding[];
}
