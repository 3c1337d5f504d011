import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { closeAllSockets, connectSocket } from "../../../test/support/socketClient.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { startWebhookServer, type WebhookServer } from "../../../test/support/webhookServer.js";
import type { AlertTransition } from "../../alerts/contract.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { notificationsPlugin } from "../index.js";
import { webhookSignature } from "../kinds/webhook.js";
import { sampleAlert } from "../services/ChannelService.js";

let k: TestKernel;
let hook: WebhookServer;
const BEARER = "bearer-secret-0123456789";
const HMAC = "hmac-key-0123456789abcdef";
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

function transition(extra: Partial<AlertTransition> = {}): AlertTransition {
  const node = randomUUID();
  return { ...sampleAlert(node), id: randomUUID(), incident_key: `node:${node}:threshold:cpu`, ...extra };
}

async function channel(body: Record<string, unknown>): Promise<string> {
  const res = await k.http.post("/api/v1/notification-channels").set(bearer(k.adminToken)).send(body);
  expect(res.status).toBe(201);
  return res.body.id;
}

async function rule(channelIds: string[], severity: string | null = null): Promise<string> {
  const res = await k.http
    .post("/api/v1/routing-rules")
    .set(bearer(k.adminToken))
    .send({ name: `r-${randomUUID()}`, severity, channel_ids: channelIds });
  expect(res.status).toBe(201);
  return res.body.id;
}

const deliveries = async (query = "") =>
  (await k.http.get(`/api/v1/notification-deliveries${query}`).set(bearer(k.adminToken))).body as Record<string, unknown>[];

beforeAll(async () => {
  hook = await startWebhookServer();
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin],
    overrides: { pluginConfig: { notifications: { retryBaseMs: 100, retryMaxMs: 400, pollMs: 100, maxAttempts: 3, breakerFailures: 50 } } },
  });
});
afterAll(async () => {
  closeAllSockets();
  await k?.stop();
  await hook?.close();
});

describe("channels", () => {
  it("creates a webhook channel whose secrets are sealed, never answered, and kept when omitted", async () => {
    const id = await channel({ name: "Ops hook", kind: "webhook", config: { url: `${hook.url}/ops`, bearer_token: BEARER, hmac_key: HMAC } });
    const got = await k.http.get(`/api/v1/notification-channels/${id}`).set(bearer(k.adminToken));
    expect(got.body).toEqual({
      id,
      name: "Ops hook",
      kind: "webhook",
      enabled: true,
      config: { url: `${hook.url}/ops` },
      secrets_set: ["bearer_token", "hmac_key"],
      template: {},
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const patched = await k.http
      .patch(`/api/v1/notification-channels/${id}`)
      .set(bearer(k.adminToken))
      .send({ config: { url: `${hook.url}/ops2`, hmac_key: null } });
    expect(patched.status).toBe(200);
    expect(patched.body.secrets_set).toEqual(["bearer_token"]);
    expect(patched.body.config).toEqual({ url: `${hook.url}/ops2` });
    const raw = JSON.stringify((await k.http.get("/api/v1/notification-channels").set(bearer(k.adminToken))).body);
    expect(raw).not.toContain(BEARER);
    expect(raw).not.toContain(HMAC);
  });

  it("refuses an unknown kind, a config its kind refuses, a template that does not parse, a taken name", async () => {
    const post = (body: unknown) =>
      k.http
        .post("/api/v1/notification-channels")
        .set(bearer(k.adminToken))
        .send(body as object);
    expectError(await post({ name: "x", kind: "carrier-pigeon", config: {} }), 400, "unknown_channel_kind");
    expectError(await post({ name: "x", kind: "webhook", config: { url: "ftp://nope" } }), 400, "invalid_channel_config");
    expectError(await post({ name: "x", kind: "webhook", config: {} }), 400, "invalid_channel_config");
    // A URL is answered in the channel's view: a password in it would leak, so it goes in a secret field instead.
    expectError(await post({ name: "x", kind: "webhook", config: { url: "https://u:p@hooks.example/x" } }), 400, "invalid_channel_config");
    expectError(await post({ name: "x", kind: "webhook", config: { url: hook.url }, template: { fire: { subject: "{% if %}" } } }), 400, "invalid_template");
    expectError(await post({ name: "  ", kind: "webhook", config: { url: hook.url } }), 400, "validation_failed");
    await channel({ name: "Taken", kind: "webhook", config: { url: hook.url } });
    expectError(await post({ name: "taken", kind: "webhook", config: { url: hook.url } }), 409, "name_taken");
  });

  it("enables and disables with the spec's PUT, and 404s an unknown channel", async () => {
    const id = await channel({ name: `toggle-${randomUUID()}`, kind: "webhook", config: { url: hook.url } });
    const put = (cid: string, body: unknown) =>
      k.http
        .put(`/api/v1/notification-channels/${cid}`)
        .set(bearer(k.adminToken))
        .send(body as object);
    expect((await put(id, { enabled: false })).status).toBe(200);
    expect((await k.http.get(`/api/v1/notification-channels/${id}`).set(bearer(k.adminToken))).body.enabled).toBe(false);
    expectError(await put(id, {}), 400, "validation_failed");
    expectError(await put(randomUUID(), { enabled: true }), 404, "not_found");
  });

  it("answers the built-in templates of each kind, rendered for a node alert", async () => {
    const res = await k.http.get("/api/v1/notification-channels/builtin-template").set(bearer(k.adminToken));
    expect(res.status).toBe(200);
    expect(res.body.map((i: { event: string }) => i.event)).toEqual(["fire", "resolve", "suppress"]);
    expect(res.body.every((i: { body: unknown }) => i.body === null)).toBe(true);
    const email = await k.http.get("/api/v1/notification-channels/builtin-template?kind=email").set(bearer(k.adminToken));
    expect(email.body[0].body).toEqual(expect.any(String));
    expectError(await k.http.get("/api/v1/notification-channels/builtin-template?kind=nope").set(bearer(k.adminToken)), 400, "unknown_channel_kind");
  });
});

describe("routing rules", () => {
  it("refuses an empty name, a severity outside the vocabulary and an unknown channel; lists, gets, replaces and deletes", async () => {
    const ch = await channel({ name: `rr-${randomUUID()}`, kind: "webhook", config: { url: hook.url } });
    const post = (body: unknown) =>
      k.http
        .post("/api/v1/routing-rules")
        .set(bearer(k.adminToken))
        .send(body as object);
    expectError(await post({ name: " ", severity: null, channel_ids: [ch] }), 400, "validation_failed");
    expectError(await post({ name: "r", severity: "major", channel_ids: [ch] }), 400, "validation_failed");
    expectError(await post({ name: "r", severity: null, channel_ids: [randomUUID()] }), 400, "unknown_reference");
    expectError(await post({ name: "r", severity: null }), 400, "validation_failed");
    const id = await rule([ch], "warning");
    const got = await k.http.get(`/api/v1/routing-rules/${id}`).set(bearer(k.adminToken));
    expect(got.body).toMatchObject({ id, severity: "warning", channel_ids: [ch], enabled: true });
    const put = await k.http
      .put(`/api/v1/routing-rules/${id}`)
      .set(bearer(k.adminToken))
      .send({ name: "renamed", severity: null, channel_ids: [ch], enabled: false });
    expect(put.body).toMatchObject({ name: "renamed", severity: null, enabled: false });
    expect((await k.http.delete(`/api/v1/routing-rules/${id}`).set(bearer(k.adminToken))).status).toBe(204);
    expectError(await k.http.get(`/api/v1/routing-rules/${id}`).set(bearer(k.adminToken)), 404, "not_found");
  });
});

describe("routing rules limited to folders", () => {
  // Rules made here are removed after: the delivery tests below count what every rule sends.
  afterAll(async () => {
    const rows = (await k.http.get("/api/v1/routing-rules?limit=1000").set(bearer(k.adminToken))).body as { id: string }[];
    for (const r of rows) await k.http.delete(`/api/v1/routing-rules/${r.id}`).set(bearer(k.adminToken));
  });
  const folder = async (name: string, parent_id?: string): Promise<string> => {
    const res = await k.http
      .post("/api/v1/node-groups")
      .set(bearer(k.adminToken))
      .send({ name, ...(parent_id ? { parent_id } : {}) });
    expect(res.status).toBe(201);
    return res.body.id;
  };

  it("checks folder_ids (uuids, no repeats, existing folders), stores and replaces them; omitted = none", async () => {
    const ch = await channel({ name: `rf-${randomUUID()}`, kind: "webhook", config: { url: hook.url } });
    const a = await folder(`rf-a-${randomUUID()}`);
    const post = (body: object) => k.http.post("/api/v1/routing-rules").set(bearer(k.adminToken)).send(body);
    expectError(await post({ name: "r", severity: null, channel_ids: [ch], folder_ids: ["nope"] }), 400, "validation_failed");
    expectError(await post({ name: "r", severity: null, channel_ids: [ch], folder_ids: [a, a] }), 400, "validation_failed");
    const unknown = randomUUID();
    const res = await post({ name: "r", severity: null, channel_ids: [ch], folder_ids: [unknown] });
    expectError(res, 400, "unknown_reference");
    expect(res.body.error.message).toContain(unknown);
    const id = (await post({ name: "r", severity: null, channel_ids: [ch], folder_ids: [a.toUpperCase()] })).body.id as string;
    expect((await k.http.get(`/api/v1/routing-rules/${id}`).set(bearer(k.adminToken))).body).toMatchObject({ folder_ids: [a] });
    const put = await k.http
      .put(`/api/v1/routing-rules/${id}`)
      .set(bearer(k.adminToken))
      .send({ name: "r", severity: null, channel_ids: [ch] });
    expect(put.body).toMatchObject({ folder_ids: [] });
    expect((await k.http.get(`/api/v1/routing-rules/${await rule([ch])}`).set(bearer(k.adminToken))).body.folder_ids).toEqual([]);
  });

  it("routes an alert of a node in the folder or beneath it, not one of another folder nor of a pool", async () => {
    const a = await folder(`route-a-${randomUUID()}`);
    const child = await folder(`route-a-child-${randomUUID()}`, a);
    const b = await folder(`route-b-${randomUUID()}`);
    const ch = await channel({ name: `folder-a-${randomUUID()}`, kind: "webhook", config: { url: `${hook.url}/folder-a` } });
    const res = await k.http
      .post("/api/v1/routing-rules")
      .set(bearer(k.adminToken))
      .send({ name: "site a only", severity: null, channel_ids: [ch], folder_ids: [a] });
    expect(res.status).toBe(201);
    const bus = k.kernel.context("alerts")!.bus;
    const inA = transition({ folder_path: [a] });
    const inChild = transition({ folder_path: [a, child] });
    const inB = transition({ folder_path: [b] });
    const pool = transition({ subject_kind: "pool", node: null, subject_name: "edge", folder_path: [] });
    for (const t of [inA, inChild, inB, pool]) await bus.emit("alerts.fired", t);
    const to = (t: AlertTransition) => hook.received.some((r) => r.path === "/folder-a" && (r.body as { id?: string }).id === t.id);
    await until("both alerts of folder A's tree at its channel", async () => (to(inA) && to(inChild) ? true : null));
    // The other two were dispatched before these and would have been sent by now.
    await new Promise((r) => setTimeout(r, 300));
    expect(to(inB)).toBe(false);
    expect(to(pool)).toBe(false);
  });
});

describe("delivery", () => {
  let ch: string;
  beforeAll(async () => {
    ch = await channel({ name: "signed", kind: "webhook", config: { url: `${hook.url}/signed`, bearer_token: BEARER, hmac_key: HMAC } });
    await rule([ch], "critical");
    await rule([ch], null); // the same channel twice: one delivery
  });

  it("posts the whole alert as JSON, signed, once per transition and channel, and logs it", async () => {
    const t = transition();
    const ctx = k.kernel.context("alerts")!;
    await ctx.bus.emit("alerts.fired", t);
    await ctx.bus.emit("alerts.fired", t); // seen twice (two replicas): still one delivery
    const req = await until("the webhook post", async () => hook.received.find((r) => (r.body as { id?: string }).id === t.id));
    expect(req.path).toBe("/signed");
    expect(req.headers.authorization).toBe(`Bearer ${BEARER}`);
    const ts = String(req.headers["x-nms-timestamp"]);
    expect(req.headers["x-nms-signature"]).toBe(webhookSignature(HMAC, ts, req.raw));
    expect(req.body).toEqual({ ...t, event: "fire", subject: `[CRITICAL] ${t.title} (node ${t.node})` });
    const logged = await until("delivered in the log", async () => {
      const rows = await deliveries(`?alert=${encodeURIComponent(t.incident_key)}`);
      return rows.length === 1 && rows[0].status === "delivered" ? rows : null;
    });
    expect(logged[0]).toMatchObject({ channel_id: ch, event: "fire", attempts: 1, last_status: 200, test: false });
    await new Promise((r) => setTimeout(r, 300));
    expect(hook.received.filter((r) => (r.body as { id?: string }).id === t.id)).toHaveLength(1);
  });

  it("shows deliveries live on notifications.deliveries, to ManageSystem sockets only", async () => {
    const admin = await connectSocket(k.url, k.adminToken);
    expect(await admin.subscribe("notifications.deliveries")).toEqual({ ok: true, channel: "notifications.deliveries" });
    const viewer = await connectSocket(k.url, await k.token("viewer"));
    expect(await viewer.subscribe("notifications.deliveries")).toMatchObject({ ok: false });
    const t = transition();
    await k.kernel.context("alerts")!.bus.emit("alerts.fired", t);
    const seen = (await admin.waitFor("notifications.delivery", (p) => (p as { transition_id: string }).transition_id === t.id, 10000)) as Record<
      string,
      unknown
    >;
    expect(seen).toMatchObject({ channel_id: ch, event: "fire", status: "delivered", attempts: 1, last_status: 200 });
    admin.close();
    viewer.close();
  });

  it("retries a 429 after its Retry-After and a 500 with backoff, then delivers; gives up after maxAttempts", async () => {
    hook.queue({ status: 429, retryAfter: "1" }, { status: 500 });
    const t = transition();
    await k.kernel.context("alerts")!.bus.emit("alerts.resolved", { ...t, resolved: true });
    const done = await until(
      "delivered after retries",
      async () => (await deliveries(`?alert=${encodeURIComponent(t.incident_key)}&status=delivered`))[0],
      15000,
    );
    expect(done).toMatchObject({ event: "resolve", attempts: 3, last_status: 200 });
    const detail = (await k.http.get(`/api/v1/notification-deliveries/${done.id}`).set(bearer(k.adminToken))).body;
    expect(detail.attempt_log.map((a: { status: number; error_class: string | null }) => [a.status, a.error_class])).toEqual([
      [429, expect.any(String)],
      [500, expect.any(String)],
      [200, null],
    ]);
    const gap = Date.parse(detail.attempt_log[1].at) - Date.parse(detail.attempt_log[0].at);
    expect(gap).toBeGreaterThanOrEqual(1000);

    hook.otherwise = { status: 500 };
    try {
      const u = transition();
      await k.kernel.context("alerts")!.bus.emit("alerts.fired", u);
      const failed = await until(
        "failed after maxAttempts",
        async () => (await deliveries(`?alert=${encodeURIComponent(u.incident_key)}&status=failed`))[0],
        15000,
      );
      expect(failed).toMatchObject({ attempts: 3, last_status: 500 });
      expect(String(failed.last_error)).not.toContain(hook.url.replace("http://", ""));
    } finally {
      hook.otherwise = { status: 200 };
    }
  });

  it("routes by severity: a rule for critical does not take an info alert, and a disabled channel gets nothing", async () => {
    const only = await channel({ name: `crit-only-${randomUUID()}`, kind: "webhook", config: { url: `${hook.url}/crit` } });
    await rule([only], "critical");
    const info = transition({ severity: "info" });
    await k.kernel.context("alerts")!.bus.emit("alerts.fired", info);
    await until(
      "the info alert delivered to the any-severity rule's channel",
      async () => (await deliveries(`?alert=${encodeURIComponent(info.incident_key)}&status=delivered`))[0],
    );
    expect((await deliveries(`?alert=${encodeURIComponent(info.incident_key)}`)).map((d) => d.channel_id)).toEqual([ch]);
  });

  it("test-sends the sample alert once, [TEST] subject and test: true, even on a disabled channel; a failure is a 200 without the URL", async () => {
    const id = await channel({ name: `t-${randomUUID()}`, kind: "webhook", config: { url: `${hook.url}/test-send` } });
    await k.http.put(`/api/v1/notification-channels/${id}`).set(bearer(k.adminToken)).send({ enabled: false });
    const ok = await k.http.post(`/api/v1/notification-channels/${id}/test`).set(bearer(k.adminToken));
    expect(ok.body).toEqual({ delivered: true, closed: null, error: null });
    const got = hook.received.filter((r) => r.path === "/test-send");
    expect(got).toHaveLength(1);
    expect(got[0].body).toMatchObject({ test: true, event: "fire", subject: expect.stringMatching(/^\[TEST\] /) });
    hook.queue({ status: 500 });
    const bad = await k.http.post(`/api/v1/notification-channels/${id}/test`).set(bearer(k.adminToken));
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({ delivered: false, closed: null, error: "HTTP 500" });
    expect(hook.received.filter((r) => r.path === "/test-send")).toHaveLength(2);
    const log = await deliveries(`?channel_id=${id}`);
    expect(log.map((d) => [d.test, d.status])).toEqual([
      [true, "failed"],
      [true, "delivered"],
    ]);
    expectError(await k.http.post(`/api/v1/notification-channels/${randomUUID()}/test`).set(bearer(k.adminToken)), 404, "not_found");
  });
});

describe("access", () => {
  it("needs ManageSystem and an unrestricted account on every route", async () => {
    const routes: [string, string][] = [
      ["get", "/api/v1/notification-channels"],
      ["get", "/api/v1/notification-channels/builtin-template"],
      ["get", "/api/v1/routing-rules"],
      ["get", "/api/v1/notification-deliveries"],
      ["post", "/api/v1/routing-rules"],
    ];
    const operator = await k.token("operator");
    const viewer = await k.session("viewer");
    const scopedAdmin = await k.token("admin", { folders: [randomUUID()] });
    for (const [method, path] of routes) {
      const call = (token?: string) => {
        const r = (k.http as unknown as Record<string, (p: string) => import("supertest").Test>)[method](path);
        return token ? r.set(bearer(token)) : r;
      };
      expectError(await call(), 401, "unauthorized");
      expectError(await call("not-a-token"), 401, "unauthorized");
      expectError(await call(operator), 403, "permission_denied");
      expectError(await call(viewer), 403, "permission_denied");
      expectError(await call(scopedAdmin), 403, "scope_unsupported");
    }
  });

  it("never writes a channel secret to the log", () => {
    const all = k.logs.join("\n");
    expect(all).not.toContain(BEARER);
    expect(all).not.toContain(HMAC);
  });
});
