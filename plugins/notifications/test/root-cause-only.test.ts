import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { startWebhookServer, type WebhookServer } from "../../../test/support/webhookServer.js";
import type { AlertTransition } from "../../alerts/contract.js";
import { alertsPlugin, LIVENESS_CHECK_ID } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { notificationsPlugin } from "../index.js";
import { sampleAlert } from "../services/ChannelService.js";

// Routing rules with root_cause_only: symptoms (alerts' symptom_of) skip them; an unreachable fire waits
// rootCauseSettleMs and is decided by what the store says then.
let k: TestKernel;
let hook: WebhookServer;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const SETTLE_MS = 600;

beforeAll(async () => {
  hook = await startWebhookServer();
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: false }, notifications: { pollMs: 100, rootCauseSettleMs: SETTLE_MS } } },
  });
});
afterAll(async () => {
  await k?.stop();
  await hook?.close();
});

const unreachable = (node: string, extra: Partial<AlertTransition> = {}): AlertTransition => ({
  ...sampleAlert(node),
  id: randomUUID(),
  incident_key: `node:${node}:${LIVENESS_CHECK_ID}`,
  check: LIVENESS_CHECK_ID,
  metric: null,
  state: "unreachable",
  severity: "critical",
  symptom_of: null,
  ...extra,
});

async function channelTo(path: string): Promise<string> {
  const res = await k.http
    .post("/api/v1/notification-channels")
    .set(bearer(k.adminToken))
    .send({ name: `c-${randomUUID()}`, kind: "webhook", config: { url: `${hook.url}${path}` } });
  expect(res.status).toBe(201);
  return res.body.id;
}
const emit = (t: AlertTransition) => k.kernel.context("alerts")!.bus.emit("alerts.fired", t);
const sentTo = (path: string, node: string) => hook.received.filter((r) => r.path === path && (r.body as { node?: string }).node === node).length;

describe("root_cause_only routing rules", () => {
  let rootPath: string;
  let allPath: string;

  beforeAll(async () => {
    rootPath = `/root-${randomUUID()}`;
    allPath = `/all-${randomUUID()}`;
    const root = await channelTo(rootPath);
    const all = await channelTo(allPath);
    const a = await k.http
      .post("/api/v1/routing-rules")
      .set(bearer(k.adminToken))
      .send({ name: "roots", severity: null, channel_ids: [root], root_cause_only: true });
    expect(a.status).toBe(201);
    expect((await k.http.get(`/api/v1/routing-rules/${a.body.id}`).set(bearer(k.adminToken))).body).toMatchObject({ root_cause_only: true });
    const b = await k.http
      .post("/api/v1/routing-rules")
      .set(bearer(k.adminToken))
      .send({ name: "all", severity: null, channel_ids: [all] });
    expect((await k.http.get(`/api/v1/routing-rules/${b.body.id}`).set(bearer(k.adminToken))).body).toMatchObject({ root_cause_only: false });
  });

  it("refuses a root_cause_only that is not a boolean", async () => {
    const ch = await channelTo("/x");
    const res = await k.http
      .post("/api/v1/routing-rules")
      .set(bearer(k.adminToken))
      .send({ name: "bad", severity: null, channel_ids: [ch], root_cause_only: "yes" });
    expectError(res, 400, "validation_failed");
  });

  it("sends a root cause after the settle time, and skips a symptom that a plain rule still sends", async () => {
    const cause = randomUUID();
    const symptom = randomUUID();
    const causeKey = `node:${cause}:${LIVENESS_CHECK_ID}`;
    const started = Date.now();
    await emit(unreachable(cause));
    await emit(unreachable(symptom, { symptom_of: { incident_key: causeKey, node: cause, node_name: "core" } }));
    await until("the plain rule sends both", async () => sentTo(allPath, symptom) === 1 && sentTo(allPath, cause) === 1);
    await until("the root-cause rule sends the cause", async () => sentTo(rootPath, cause) === 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(SETTLE_MS);
    await new Promise((r) => setTimeout(r, SETTLE_MS + 300));
    expect(sentTo(rootPath, symptom)).toBe(0);
  });

  it("skips an unreachable fire that the store marks a symptom within the settle time", async () => {
    const node = randomUUID();
    const cause = randomUUID();
    const t = unreachable(node);
    await emit(t);
    // What the alerts engine writes when the upstream's incident fires a moment later: the fire row's cause.
    await rawQuery(
      k.databaseUrl!,
      `INSERT INTO alerts.history (id, at_unix_ms, incident_key, check_id, node_id, resolved, severity, state, subject_kind, cause_incident_key, cause_node_id)
       VALUES ($1, 0, $2, $3, $4, false, 'critical', 'unreachable', 'node', $5, $6)`,
      [t.id, t.incident_key, LIVENESS_CHECK_ID, node, `node:${cause}:${LIVENESS_CHECK_ID}`, cause],
    );
    await until("the plain rule sends it", async () => sentTo(allPath, node) === 1);
    await new Promise((r) => setTimeout(r, SETTLE_MS + 500));
    expect(sentTo(rootPath, node)).toBe(0);
  });
});
