/**
 * Two core replicas on one database: the in-process test kernel and a second service process. Both run a delivery
 * worker. Exactly one delivery row per (transition, channel), each sent by one replica at a time; a replica killed
 * mid-send leaves its lease to run out and the other one sends again, with the same Idempotency-Key.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import { spawnKernel, type SpawnedKernel } from "../../../test/support/spawnKernel.js";
import { BOOTSTRAP_TOKEN, startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { startWebhookServer, type WebhookServer } from "../../../test/support/webhookServer.js";
import type { AlertTransition } from "../../alerts/contract.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { notificationsPlugin } from "../index.js";
import { sampleAlert } from "../services/ChannelService.js";

const SECRET_KEY = randomBytes(32).toString("hex");
const SETTINGS = { pollMs: 100, leaseMs: 3000, sendTimeoutMs: 2500, concurrency: 4, retryBaseMs: 100, retryMaxMs: 500, breakerFailures: 1000 };

let k: TestKernel;
let replica: SpawnedKernel;
let hook: WebhookServer;

function transition(): AlertTransition {
  const node = randomUUID();
  return { ...sampleAlert(node), id: randomUUID(), incident_key: `node:${node}:cpu` };
}

const ids = (path: string) => hook.received.filter((r) => r.path === path).map((r) => (r.body as { id: string }).id);

beforeAll(async () => {
  hook = await startWebhookServer();
  k = await startTestKernel({
    env: { NMS_SECRET_KEY: SECRET_KEY },
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin],
    overrides: { pluginConfig: { notifications: SETTINGS } },
  });
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: k.databaseUrl!,
    NMS_SECRET_KEY: SECRET_KEY,
    NMS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    NMS_BUILTIN_PLUGINS: "true",
    NMS_LOG_LEVEL: "warn",
    NMS__pluginConfig__polling__embeddedPoller: "false",
  };
  for (const [key, value] of Object.entries(SETTINGS)) env[`NMS__pluginConfig__notifications__${key}`] = String(value);
  replica = await spawnKernel({ env, timeoutMs: 45000 });
  const channel = await k.http
    .post("/api/v1/notification-channels")
    .set({ Authorization: `Bearer ${k.adminToken}` })
    .send({ name: "shared", kind: "webhook", config: { url: `${hook.url}/shared`, bearer_token: "replica-bearer-0123456789" } });
  expect(channel.status).toBe(201);
  const rule = await k.http
    .post("/api/v1/routing-rules")
    .set({ Authorization: `Bearer ${k.adminToken}` })
    .send({ name: "all", severity: null, channel_ids: [channel.body.id] });
  expect(rule.status).toBe(201);
}, 90000);

afterAll(async () => {
  await replica?.stop("SIGKILL");
  await k?.stop();
  await hook?.close();
});

describe("two replicas", () => {
  it("send every delivery once between them, both taking part", async () => {
    hook.otherwise = { status: 200, delayMs: 50 };
    const sent = Array.from({ length: 120 }, transition);
    const bus = k.kernel.context("alerts")!.bus;
    // The transitions are seen on both sides (as when both replicas would emit them): still one row each.
    for (const t of sent) await bus.emit("alerts.fired", t);
    await until(
      "every delivery delivered",
      async () =>
        (await rawQuery<{ n: number }>(k.databaseUrl!, "SELECT count(*)::int AS n FROM notifications.deliveries WHERE status = 'delivered' AND NOT test"))[0]
          .n >= sent.length,
      60000,
    );
    const rows = await rawQuery<{ transition_id: string; sent_by: string }>(
      k.databaseUrl!,
      "SELECT transition_id, sent_by FROM notifications.deliveries WHERE NOT test",
    );
    expect(rows).toHaveLength(sent.length);
    const got = ids("/shared");
    expect(got.sort()).toEqual(sent.map((t) => t.id).sort());
    expect(new Set(rows.map((r) => r.sent_by)).size).toBe(2);
  }, 90000);

  it("resend what a replica killed mid-send held, once its lease has run out, with the same Idempotency-Key", async () => {
    hook.received.length = 0;
    hook.otherwise = { status: 200, delayMs: 1500 };
    const sent = Array.from({ length: 24 }, transition);
    for (const t of sent) await k.kernel.context("alerts")!.bus.emit("alerts.fired", t);
    const replicaPid = String(replica.child.pid);
    await until(
      "the second replica sending some",
      async () =>
        (
          await rawQuery<{ n: number }>(
            k.databaseUrl!,
            "SELECT count(*)::int AS n FROM notifications.deliveries WHERE status = 'sending' AND sent_by LIKE '%:' || $1",
            [replicaPid],
          )
        )[0].n > 0,
      20000,
    );
    await replica.stop("SIGKILL");
    hook.otherwise = { status: 200 };
    await until(
      "every delivery delivered after the kill",
      async () =>
        (
          await rawQuery<{ n: number }>(
            k.databaseUrl!,
            "SELECT count(*)::int AS n FROM notifications.deliveries WHERE status = 'delivered' AND transition_id = ANY($1)",
            [sent.map((t) => t.id)],
          )
        )[0].n === sent.length,
      60000,
    );
    const rows = await rawQuery<{ transition_id: string; sent_by: string }>(
      k.databaseUrl!,
      "SELECT transition_id, sent_by FROM notifications.deliveries WHERE transition_id = ANY($1)",
      [sent.map((t) => t.id)],
    );
    expect(rows).toHaveLength(sent.length);
    expect(rows.every((r) => !r.sent_by.endsWith(`:${replicaPid}`))).toBe(true);
    // Every transition reached the receiver; those the killed replica had in flight arrived twice, under one key.
    const byId = new Map<string, Set<string>>();
    for (const r of hook.received) {
      const id = (r.body as { id: string }).id;
      byId.set(id, (byId.get(id) ?? new Set()).add(String(r.headers["idempotency-key"])));
    }
    expect([...byId.keys()].sort()).toEqual(sent.map((t) => t.id).sort());
    expect([...byId.values()].every((keys) => keys.size === 1)).toBe(true);
  }, 90000);
});
