import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import { startPagerServer, type PagerServer } from "../../../test/support/pagerServer.js";
import { startServicedeskServer, type ServicedeskServer } from "../../../test/support/servicedeskServer.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { startWebhookServer, type WebhookServer } from "../../../test/support/webhookServer.js";
import type { AlertTransition } from "../../alerts/contract.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { notificationsPlugin } from "../index.js";
import { emailKind } from "../kinds/email.js";
import { pagerKind } from "../kinds/pager.js";
import { servicedeskKind } from "../kinds/servicedesk.js";
import { webhookKind } from "../kinds/webhook.js";
import { render } from "../lib/render.js";
import { sampleAlert } from "../services/ChannelService.js";

let k: TestKernel;
let hook: WebhookServer;
let pager: PagerServer;
let desk: ServicedeskServer;
const ROUTING_KEY = "routing-key-0123456789abcdef";
const DESK_PASSWORD = "desk-password-0123456789";
const auth = () => ({ Authorization: `Bearer ${k.adminToken}` });

function transition(extra: Partial<AlertTransition> = {}): AlertTransition {
  const node = randomUUID();
  return { ...sampleAlert(node), id: randomUUID(), incident_key: `node:${node}:cpu`, ...extra };
}

/** A webhook channel at `path`, and a routing rule sending every alert there, and nowhere else (earlier rules removed). */
async function routedChannel(path: string): Promise<string> {
  for (const r of (await k.http.get("/api/v1/routing-rules?limit=1000").set(auth())).body as { id: string }[]) {
    await k.http.delete(`/api/v1/routing-rules/${r.id}`).set(auth());
  }
  const ch = await k.http
    .post("/api/v1/notification-channels")
    .set(auth())
    .send({ name: `c-${randomUUID()}`, kind: "webhook", config: { url: `${hook.url}${path}` } });
  await k.http
    .post("/api/v1/routing-rules")
    .set(auth())
    .send({ name: `r-${randomUUID()}`, severity: null, channel_ids: [ch.body.id] });
  return ch.body.id;
}

beforeAll(async () => {
  hook = await startWebhookServer();
  pager = await startPagerServer([ROUTING_KEY]);
  desk = await startServicedeskServer({ username: "nms", password: DESK_PASSWORD });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin],
    overrides: {
      pluginConfig: { notifications: { pollMs: 100, retryBaseMs: 100, retryMaxMs: 200, maxAttempts: 10, breakerFailures: 2, breakerOpenMs: 1500 } },
    },
  });
});
afterAll(async () => {
  await k?.stop();
  await Promise.all([hook?.close(), pager?.close(), desk?.close()]);
});

describe("delivery policy", () => {
  it("opens a channel's circuit after consecutive failures: the next try waits breakerOpenMs, not the backoff", async () => {
    hook.queue({ status: 500 }, { status: 500 }, { status: 500 });
    const ch = await routedChannel("/breaker");
    const t = transition();
    await k.kernel.context("alerts")!.bus.emit("alerts.fired", t);
    const delivery = await until(
      "delivered after the circuit closed again",
      async () => {
        const rows = (await k.http.get(`/api/v1/notification-deliveries?channel_id=${ch}&status=delivered`).set(auth())).body;
        return rows[0] as { id: string } | undefined;
      },
      15000,
    );
    const detail = (await k.http.get(`/api/v1/notification-deliveries/${delivery.id}`).set(auth())).body as { attempt_log: { at: string; status: number }[] };
    const at = detail.attempt_log.map((a) => Date.parse(a.at));
    expect(detail.attempt_log.map((a) => a.status)).toEqual([500, 500, 500, 200]);
    // Backoff alone would retry within retryMaxMs (200 ms); the open circuit holds the third try back ~1.5 s.
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(1400);
  });

  it("expires a delivery older than maxAgeSecs instead of sending it", async () => {
    const ch = await routedChannel("/late");
    hook.queue({ status: 503, retryAfter: "3" });
    const t = transition();
    await k.kernel.context("alerts")!.bus.emit("alerts.fired", t);
    await until("the first attempt", async () => hook.received.some((r) => r.path === "/late"));
    await rawQuery(k.databaseUrl!, "UPDATE notifications.deliveries SET created_at = now() - interval '2 days' WHERE channel_id = $1", [ch]);
    const expired = await until(
      "expired",
      async () => (await k.http.get(`/api/v1/notification-deliveries?channel_id=${ch}&status=expired`).set(auth())).body[0],
      10000,
    );
    expect(expired).toMatchObject({ last_error_class: "expired", finished_at: expect.any(String) });
    expect(hook.received.filter((r) => r.path === "/late")).toHaveLength(1);
  });

  it("filters the log by time, and refuses an empty window", async () => {
    const now = new Date();
    const future = new Date(now.getTime() + 3600_000).toISOString();
    expect((await k.http.get(`/api/v1/notification-deliveries?since=${encodeURIComponent(future)}`).set(auth())).body).toEqual([]);
    const all = (await k.http.get(`/api/v1/notification-deliveries?until=${encodeURIComponent(future)}`).set(auth())).body as unknown[];
    expect(all.length).toBeGreaterThan(0);
    expectError(
      await k.http.get(`/api/v1/notification-deliveries?since=${encodeURIComponent(future)}&until=${encodeURIComponent(now.toISOString())}`).set(auth()),
      400,
      "validation_failed",
    );
    expectError(await k.http.get("/api/v1/notification-deliveries?since=yesterday").set(auth()), 400, "validation_failed");
    expectError(await k.http.get("/api/v1/notification-deliveries?status=lost").set(auth()), 400, "validation_failed");
  });
});

describe("test sends that open incidents", () => {
  it("pager: triggers, then resolves the incident it opened (closed: true), body carries test: true", async () => {
    const ch = await k.http
      .post("/api/v1/notification-channels")
      .set(auth())
      .send({ name: "pager", kind: "pager", config: { url: pager.enqueueUrl, routing_key: ROUTING_KEY } });
    expect(ch.status).toBe(201);
    const res = await k.http.post(`/api/v1/notification-channels/${ch.body.id}/test`).set(auth());
    expect(res.body).toEqual({ delivered: true, closed: true, error: null });
    const [incident] = [...pager.incidents.values()];
    expect(incident).toMatchObject({ status: "resolved", actions: ["trigger", "resolve"], summary: expect.stringMatching(/^\[TEST\] /) });
    expect(incident.customDetails).toMatchObject({ test: true });
    expect(JSON.stringify((await k.http.get(`/api/v1/notification-channels/${ch.body.id}`).set(auth())).body)).not.toContain(ROUTING_KEY);
  });

  it("servicedesk: creates, then resolves the incident it opened; the body's first line says it is a test", async () => {
    const ch = await k.http
      .post("/api/v1/notification-channels")
      .set(auth())
      .send({ name: "desk", kind: "servicedesk", config: { url: desk.url, username: "nms", password: DESK_PASSWORD } });
    expect(ch.status).toBe(201);
    const res = await k.http.post(`/api/v1/notification-channels/${ch.body.id}/test`).set(auth());
    expect(res.body).toEqual({ delivered: true, closed: true, error: null });
    const [record] = desk.records();
    expect(record.state).toBe("6");
    expect(String(record.short_description)).toMatch(/^\[TEST\] \[CRITICAL\] sample-node: /);
    expect(String(record.description).split("\n")[0]).toBe("This is a test notification from nms-core: no alert fired.");
  });

  it("a failed test send is a 200 with the first error, never the URL or the secret", async () => {
    const ch = await k.http
      .post("/api/v1/notification-channels")
      .set(auth())
      .send({ name: "bad pager", kind: "pager", config: { url: pager.enqueueUrl, routing_key: "wrong-key-0123456789" } });
    const res = await k.http.post(`/api/v1/notification-channels/${ch.body.id}/test`).set(auth());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: false, closed: null, error: expect.stringMatching(/^HTTP 4\d\d/) });
    expect(res.body.error).not.toContain(pager.url.replace("http://", ""));
    expect(k.logs.join("\n")).not.toContain("wrong-key-0123456789");
    expect(k.logs.join("\n")).not.toContain(DESK_PASSWORD);
  });
});

describe("built-in templates", () => {
  const node = { id: "9f0c5a52-3b8e-4f7d-9a41-2c5e8b7d9f10", name: "core-sw1", address: "10.0.0.1", folder_names: ["east", "dc1"] };
  const alert = { ...sampleAlert(node.id), title: "CPU load above 90% on core-sw1" };
  const subject = (kind: typeof webhookKind, a: AlertTransition, n: typeof node | null) =>
    render(kind.builtinTemplates.fire.subject, { alert: a, node: n, event: "fire", test: false });

  it("name the node in email and servicedesk subjects, and carry its id in webhook and pager ones", async () => {
    expect(await subject(emailKind, alert, node)).toBe("[CRITICAL] core-sw1: CPU load above 90% on core-sw1");
    expect(await subject(servicedeskKind, alert, node)).toBe("[CRITICAL] core-sw1: CPU load above 90% on core-sw1");
    expect(await subject(webhookKind, alert, node)).toBe(`[CRITICAL] CPU load above 90% on core-sw1 (node ${node.id})`);
    expect(await subject(pagerKind, alert, node)).toBe(`[CRITICAL] CPU load above 90% on core-sw1 (node ${node.id})`);
    const body = await render(emailKind.builtinTemplates.fire.body!, { alert, node, event: "fire", test: false });
    expect(body).toContain("Node: core-sw1 (10.0.0.1)");
    expect(body).toContain("Folder: east / dc1");
  });

  it("word pool and cloud-organization alerts their own way", async () => {
    const pool = { ...alert, subject_kind: "pool" as const, subject_name: "east", node: null, title: "poller pool east unreachable" };
    expect(await subject(emailKind, pool, null)).toBe("[CRITICAL] poller pool east unreachable");
    const org = {
      ...alert,
      subject_kind: "netcloud_org" as const,
      subject_name: "Acme",
      node: null,
      title: "12 devices offline",
      severity: "warning" as const,
    };
    expect(await subject(webhookKind, org, null)).toBe("[WARNING] cloud organization Acme: 12 devices offline");
  });
});

describe("access on every route", () => {
  it("401 without a token or with a bad one, 403 below ManageSystem and for folder-scoped accounts", async () => {
    const id = randomUUID();
    const routes: [string, string, object?][] = [
      ["get", "/api/v1/notification-channels"],
      ["post", "/api/v1/notification-channels", { name: "x", kind: "webhook", config: { url: hook.url } }],
      ["get", "/api/v1/notification-channels/kinds"],
      ["get", "/api/v1/notification-channels/builtin-template"],
      ["get", `/api/v1/notification-channels/${id}`],
      ["patch", `/api/v1/notification-channels/${id}`, { name: "y" }],
      ["put", `/api/v1/notification-channels/${id}`, { enabled: true }],
      ["delete", `/api/v1/notification-channels/${id}`],
      ["post", `/api/v1/notification-channels/${id}/test`],
      ["get", "/api/v1/routing-rules"],
      ["post", "/api/v1/routing-rules", { name: "r", severity: null, channel_ids: [] }],
      ["get", `/api/v1/routing-rules/${id}`],
      ["put", `/api/v1/routing-rules/${id}`, { name: "r", severity: null, channel_ids: [] }],
      ["delete", `/api/v1/routing-rules/${id}`],
      ["get", "/api/v1/notification-deliveries"],
      ["get", `/api/v1/notification-deliveries/${id}`],
    ];
    const who: [string | undefined, number, string][] = [
      [undefined, 401, "unauthorized"],
      ["not-a-token", 401, "unauthorized"],
      [await k.token("viewer"), 403, "permission_denied"],
      [await k.session("operator"), 403, "permission_denied"],
      [await k.token("admin", { folders: [randomUUID()] }), 403, "scope_unsupported"],
    ];
    for (const [method, path, body] of routes) {
      for (const [token, status, code] of who) {
        let req = (k.http as unknown as Record<string, (p: string) => import("supertest").Test>)[method](path);
        if (token) req = req.set({ Authorization: `Bearer ${token}` });
        if (body) req = req.send(body);
        const res = await req;
        expect({ method, path, status: res.status, code: res.body?.error?.code }).toEqual({ method, path, status, code });
      }
    }
    // An admin session (a person) and an admin API token both may.
    const session = await k.session("admin");
    expect((await k.http.get("/api/v1/notification-channels").set({ Authorization: `Bearer ${session}` })).status).toBe(200);
    expect((await k.http.get("/api/v1/notification-channels").set({ Authorization: `Bearer ${await k.token("admin")}` })).status).toBe(200);
  });
});

describe("settings", () => {
  it("refuse a lease no longer than a send, at boot, naming both keys", async () => {
    await k.stop();
    await expect(
      startTestKernel({
        plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin],
        overrides: { pluginConfig: { notifications: { leaseMs: 5000, sendTimeoutMs: 5000 } } },
      }),
    ).rejects.toThrow('plugin "notifications": start failed: pluginConfig.notifications.leaseMs (5000) must be longer than sendTimeoutMs (5000)');
  });
});
