// The servicedesk kind against a local Table-API-style service (test/support/servicedeskServer.ts): a fire opens a
// record (Basic auth, urgency/impact, correlation id) and answers its sys_id; a resolve closes it through that
// incidentRef, or finds it by correlation id when there is none; a repeated fire updates the open record instead of
// opening a second; suppress sends nothing; each failure as its DeliveryError, none naming the URL, the user or the
// password; and the config checks.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { Ajv } from "ajv";
import { startServicedeskServer, type ServicedeskServer } from "../../../test/support/servicedeskServer.js";
import { DeliveryError, type ChannelForSend, type OutboundNotification } from "../contract.js";
import { correlationId, servicedeskKind } from "../kinds/servicedesk.js";
import { alert, NODE, KEY } from "./fixtures.js";

const USER = "nms.integration";
const PASSWORD = "Sn0w-Pa55word!";
const BODY = "CPU load above 90%\nNode: core-sw1 (10.0.0.1)\nSeverity: critical (state critical)";

function notification(over: Partial<OutboundNotification> = {}): OutboundNotification {
  return {
    event: "fire",
    alert: alert(),
    subject: "[CRITICAL] core-sw1: CPU load above 90%",
    body: BODY,
    dedupKey: KEY,
    idempotencyKey: "0d9a6c55-8f7e-4b1c-9a0e-3e1f2d4c5b6a:1",
    test: false,
    incidentRef: null,
    ...over,
  };
}

function resolveOf(over: Partial<OutboundNotification> = {}): OutboundNotification {
  return notification({
    event: "resolve",
    alert: alert({ resolved: true, state: "ok" }),
    subject: "[RESOLVED CRITICAL] core-sw1: CPU load above 90%",
    body: "CPU load back below 90%",
    idempotencyKey: "0d9a6c55-8f7e-4b1c-9a0e-3e1f2d4c5b6a:2",
    ...over,
  });
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const checkConfig = ajv.compile(servicedeskKind.configSchema);

/** A channel as the kernel hands it to send(): config validated, defaults filled in. */
function channel(config: Record<string, unknown>): ChannelForSend {
  const copy = structuredClone(config);
  if (!checkConfig(copy)) throw new Error(`test config invalid: ${JSON.stringify(checkConfig.errors)}`);
  servicedeskKind.validate?.(copy);
  return { id: "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b", name: "itsm", config: copy };
}

let server: ServicedeskServer;
let ch: ChannelForSend;

beforeAll(async () => {
  server = await startServicedeskServer({ username: USER, password: PASSWORD });
  ch = channel({ url: server.url, username: USER, password: PASSWORD, caller: "nms.integration", assignment_group: "Network Operations", timeout_ms: 1000 });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.requests.length = 0;
  for (const t of server.tables.values()) t.clear();
});

const never = () => new AbortController().signal;

/** The failure send() throws, checked to be a DeliveryError that names neither the URL, the user nor the password. */
async function failure(p: Promise<unknown>): Promise<DeliveryError> {
  const err = await p.then(
    () => {
      throw new Error("send succeeded");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryError);
  const d = err as DeliveryError;
  for (const secret of [server.url, "127.0.0.1", String(new URL(server.url).port), USER, PASSWORD, "/api/now"]) expect(d.message).not.toContain(secret);
  return d;
}

describe("servicedesk kind: the Table API protocol", () => {
  it("a fire creates a record with Basic auth and answers its sys_id; a resolve through that incidentRef resolves it", async () => {
    const fired = await servicedeskKind.send(notification(), ch, never());
    const [rec] = server.records();
    expect(rec).toBeDefined();
    expect(fired).toEqual({ status: 201, incidentRef: rec!.sys_id });
    expect(rec).toMatchObject({
      number: "INC0010001",
      state: "1",
      active: "true",
      short_description: "[CRITICAL] core-sw1: CPU load above 90%",
      description: BODY,
      urgency: "1",
      impact: "1",
      correlation_id: KEY,
      caller_id: "nms.integration",
      assignment_group: "Network Operations",
    });
    const post = server.requests.find((r) => r.method === "POST")!;
    expect(post.path).toBe("/api/now/table/incident");
    expect(post.headers.authorization).toBe(`Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`);
    expect(post.headers["x-nms-idempotency-key"]).toBe("0d9a6c55-8f7e-4b1c-9a0e-3e1f2d4c5b6a:1");
    expect(post.headers["content-type"]).toBe("application/json");

    server.requests.length = 0;
    const resolved = await servicedeskKind.send(resolveOf({ incidentRef: rec!.sys_id }), ch, never());
    expect(resolved).toEqual({ status: 200, incidentRef: rec!.sys_id });
    expect(server.records()[0]).toMatchObject({ state: "6", active: "false", close_code: "Resolved by caller", close_notes: "CPU load back below 90%" });
    expect(server.requests.map((r) => [r.method, r.path])).toEqual([["PATCH", `/api/now/table/incident/${rec!.sys_id}`]]);
    expect(server.requests[0]!.headers["x-nms-idempotency-key"]).toBe("0d9a6c55-8f7e-4b1c-9a0e-3e1f2d4c5b6a:2");
  });

  it("a resolve without an incidentRef finds the open record by correlation id and resolves it", async () => {
    const { incidentRef } = await servicedeskKind.send(notification(), ch, never());
    await servicedeskKind.send(notification({ dedupKey: "node:other:cpu", alert: alert({ incident_key: "node:other:cpu" }) }), ch, never());
    server.requests.length = 0;

    const resolved = await servicedeskKind.send(resolveOf({ incidentRef: null }), ch, never());
    expect(resolved).toEqual({ status: 200, incidentRef });
    const byId = new Map(server.records().map((r) => [r.correlation_id, r]));
    expect(byId.get(KEY)).toMatchObject({ sys_id: incidentRef, state: "6", active: "false" });
    expect(byId.get("node:other:cpu")).toMatchObject({ state: "1", active: "true" });
    expect(server.requests.map((r) => r.method)).toEqual(["GET", "PATCH"]);
    expect(server.requests[0]!.query).toMatchObject({ sysparm_query: `correlation_id=${KEY}^active=true^ORDERBYDESCsys_created_on`, sysparm_limit: "1" });
  });

  it("a resolve with nothing open is delivered: there is nothing to resolve", async () => {
    const outcome = await servicedeskKind.send(resolveOf({ incidentRef: null }), ch, never());
    expect(outcome).toEqual({ status: 200 });
    expect(server.requests.map((r) => r.method)).toEqual(["GET"]);
    expect(server.records()).toHaveLength(0);
  });

  it("a resolve whose incidentRef is gone (404) falls back to the lookup", async () => {
    const { incidentRef } = await servicedeskKind.send(notification(), ch, never());
    server.requests.length = 0;
    const outcome = await servicedeskKind.send(resolveOf({ incidentRef: "0123456789abcdef0123456789abcdef" }), ch, never());
    expect(outcome).toEqual({ status: 200, incidentRef });
    expect(server.requests.map((r) => r.method)).toEqual(["PATCH", "GET", "PATCH"]);
    expect(server.records()[0]).toMatchObject({ state: "6" });
  });

  it("a second fire of an open incident (or a repeat after a lost answer) updates that record instead of opening another", async () => {
    const first = await servicedeskKind.send(notification({ alert: alert({ severity: "warning", state: "warning" }) }), ch, never());
    const second = await servicedeskKind.send(notification({ idempotencyKey: "x:3", subject: "[CRITICAL] core-sw1: CPU load above 95%" }), ch, never());
    expect(server.records()).toHaveLength(1);
    expect(second).toEqual({ status: 200, incidentRef: first.incidentRef });
    expect(server.records()[0]).toMatchObject({
      urgency: "1",
      impact: "1",
      short_description: "[CRITICAL] core-sw1: CPU load above 95%",
      work_notes_log: [BODY],
    });

    // Once resolved, the next fire of the same key opens a new record.
    await servicedeskKind.send(resolveOf({ incidentRef: first.incidentRef! }), ch, never());
    const third = await servicedeskKind.send(notification(), ch, never());
    expect(third.status).toBe(201);
    expect(third.incidentRef).not.toBe(first.incidentRef);
    expect(server.records().map((r) => r.state)).toEqual(["6", "1"]);
  });

  it("a lost answer to the create is retried without a duplicate record", async () => {
    // The create lands but its answer comes after the send's deadline; the retry finds the record.
    server.next({ status: 200, body: { result: [] } }, { delayMs: 1500 });
    const err = await failure(servicedeskKind.send(notification(), ch, never()));
    expect(err.message).toBe("timeout");
    await new Promise((r) => setTimeout(r, 700));
    expect(server.records()).toHaveLength(1);
    const retry = await servicedeskKind.send(notification(), ch, never());
    expect(retry).toEqual({ status: 200, incidentRef: server.records()[0]!.sys_id });
    expect(server.records()).toHaveLength(1);
  });

  it("severity maps to urgency and impact: warning 2, info 3; caller and group are left out when null", async () => {
    const plain = channel({ url: `${server.url}/`, username: USER, password: PASSWORD });
    await servicedeskKind.send(notification({ alert: alert({ severity: "warning" }), dedupKey: "a" }), plain, never());
    await servicedeskKind.send(notification({ alert: alert({ severity: "info" }), dedupKey: "b" }), plain, never());
    expect(server.records().map((r) => [r.urgency, r.impact])).toEqual([
      ["2", "2"],
      ["3", "3"],
    ]);
    const post = server.requests.find((r) => r.method === "POST")!;
    expect(post.path).toBe("/api/now/table/incident");
    expect(post.body).not.toHaveProperty("caller_id");
    expect(post.body).not.toHaveProperty("assignment_group");
  });

  it("writes to the configured table", async () => {
    const other = await startServicedeskServer({ username: USER, password: PASSWORD, tables: ["incident", "u_network_incident"] });
    try {
      const c = channel({ url: other.url, username: USER, password: PASSWORD, table: "u_network_incident" });
      const out = await servicedeskKind.send(notification(), c, never());
      expect(other.records("u_network_incident")).toHaveLength(1);
      expect(other.records("incident")).toHaveLength(0);
      await servicedeskKind.send(resolveOf({ incidentRef: out.incidentRef! }), c, never());
      expect(other.records("u_network_incident")[0]).toMatchObject({ state: "6" });
    } finally {
      await other.close();
    }
  });

  it("a suppress touches nothing: no request, status null", async () => {
    expect(await servicedeskKind.send(notification({ event: "suppress" }), ch, never())).toEqual({ status: null });
    expect(server.requests).toHaveLength(0);
  });

  it("a test send opens a record and its resolve closes it", async () => {
    const out = await servicedeskKind.send(notification({ test: true }), ch, never());
    await servicedeskKind.send(resolveOf({ test: true, incidentRef: out.incidentRef! }), ch, never());
    expect(server.records().map((r) => r.state)).toEqual(["6"]);
  });

  it("a long incident key is shortened to the 100-character correlation id, the same on create and lookup", async () => {
    const long = `node:${NODE}:${"c".repeat(120)}`;
    expect(correlationId(long)).toHaveLength(100);
    expect(correlationId(long)).not.toBe(correlationId(`${long}x`));
    expect(correlationId("a^b")).toBe("a_b");
    await servicedeskKind.send(notification({ dedupKey: long }), ch, never());
    await servicedeskKind.send(resolveOf({ dedupKey: long, incidentRef: null }), ch, never());
    expect(server.records()).toEqual([expect.objectContaining({ correlation_id: correlationId(long), state: "6" })]);
  });

  it("opens incidents, keeps the password secret and uses the named text templates", () => {
    expect(servicedeskKind.opensIncidents).toBe(true);
    expect(servicedeskKind.secretFields).toEqual(["password"]);
    expect(servicedeskKind.builtinTemplates.fire.body).toContain("Severity:");
    expect(servicedeskKind.builtinTemplates.fire.subject).toContain("node.name");
  });
});

describe("servicedesk kind: failures", () => {
  it("wrong credentials are a 401 that ends the delivery", async () => {
    const bad = channel({ url: server.url, username: USER, password: "wrong-password" });
    const err = await failure(servicedeskKind.send(notification(), bad, never()));
    expect(err.message).toBe("HTTP 401");
    expect(err.message).not.toContain("wrong-password");
    expect(err.options).toEqual({ retryable: false, status: 401, retryAfterMs: null });
    expect(server.records()).toHaveLength(0);
  });

  it("an unknown table is a 400 that ends the delivery", async () => {
    const bad = channel({ url: server.url, username: USER, password: PASSWORD, table: "u_nope" });
    const err = await failure(servicedeskKind.send(notification(), bad, never()));
    expect(err.options).toEqual({ retryable: false, status: 400, retryAfterMs: null });
  });

  it.each([403, 404])("HTTP %i ends the delivery", async (status) => {
    server.next({ status });
    const err = await failure(servicedeskKind.send(notification(), ch, never()));
    expect(err.options).toEqual({ retryable: false, status, retryAfterMs: null });
  });

  it("429 with Retry-After seconds on the create is retryable after that long", async () => {
    server.next({ status: 200, body: { result: [] } }, { status: 429, retryAfter: "12" });
    const err = await failure(servicedeskKind.send(notification(), ch, never()));
    expect(err.message).toBe("HTTP 429");
    expect(err.options).toEqual({ retryable: true, status: 429, retryAfterMs: 12_000 });
    expect(server.records()).toHaveLength(0);
  });

  it("503 with Retry-After as an HTTP date on a resolve is retryable until then", async () => {
    const { incidentRef } = await servicedeskKind.send(notification(), ch, never());
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
    server.next({ status: 503, retryAfter: at.toUTCString() });
    const err = await failure(servicedeskKind.send(resolveOf({ incidentRef }), ch, never()));
    expect(err.options.retryable).toBe(true);
    expect(err.options.status).toBe(503);
    expect(err.options.retryAfterMs).toBeGreaterThan(55_000);
    expect(err.options.retryAfterMs).toBeLessThanOrEqual(61_000);
    expect(server.records()[0]).toMatchObject({ state: "1" });
  });

  it("500 is retryable with no hint", async () => {
    server.next({ status: 500 });
    const err = await failure(servicedeskKind.send(notification(), ch, never()));
    expect(err.options).toEqual({ retryable: true, status: 500, retryAfterMs: null });
  });

  it("an answer slower than timeout_ms is a retryable timeout", async () => {
    server.next({ delayMs: 2500 });
    const started = Date.now();
    const err = await failure(servicedeskKind.send(notification(), ch, never()));
    expect(Date.now() - started).toBeLessThan(2400);
    expect(err.message).toBe("timeout");
    expect(err.options).toEqual({ retryable: true, status: null });
  });

  it("a dropped connection is a retryable connection reset", async () => {
    server.next({ drop: true });
    const err = await failure(servicedeskKind.send(notification(), ch, never()));
    expect(err.message).toBe("connection reset");
    expect(err.options.retryable).toBe(true);
  });

  it("a 2xx create without a sys_id is a protocol error that ends the delivery", async () => {
    server.next({ status: 200, body: { result: [] } }, { status: 201, body: { result: {} } });
    const err = await failure(servicedeskKind.send(notification(), ch, never()));
    expect(err.errorClass).toBe("protocol");
    expect(err.options.retryable).toBe(false);
  });
});

describe("servicedesk kind: config", () => {
  function errors(config: Record<string, unknown>): string[] {
    const copy = structuredClone(config);
    if (checkConfig(copy)) {
      try {
        servicedeskKind.validate?.(copy);
        return [];
      } catch (err) {
        return [(err as Error).message];
      }
    }
    return (checkConfig.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }

  it("a valid config gets its defaults", () => {
    const copy: Record<string, unknown> = { url: "https://example.service-now.com", username: USER, password: PASSWORD };
    expect(checkConfig(copy)).toBe(true);
    expect(copy).toEqual({
      url: "https://example.service-now.com",
      username: USER,
      password: PASSWORD,
      table: "incident",
      caller: null,
      assignment_group: null,
      timeout_ms: 10000,
    });
  });

  it.each([
    ["no url", { username: USER, password: PASSWORD }],
    ["no username", { url: "https://example.service-now.com", password: PASSWORD }],
    ["no password", { url: "https://example.service-now.com", username: USER }],
    ["a non-http url", { url: "ftp://example.service-now.com", username: USER, password: PASSWORD }],
    ["credentials in the url", { url: "https://a:b@example.service-now.com", username: USER, password: PASSWORD }],
    ["a query in the url", { url: "https://example.service-now.com/?x=1", username: USER, password: PASSWORD }],
    ["a table name with a slash", { url: "https://example.service-now.com", username: USER, password: PASSWORD, table: "incident/../sys_user" }],
    ["a colon in the username", { url: "https://example.service-now.com", username: "a:b", password: PASSWORD }],
    ["a timeout out of range", { url: "https://example.service-now.com", username: USER, password: PASSWORD, timeout_ms: 100 }],
    ["an unknown field", { url: "https://example.service-now.com", username: USER, password: PASSWORD, token: "x" }],
  ])("refuses %s", (_what, config) => {
    expect(errors(config).length).toBeGreaterThan(0);
    expect(errors(config).join(" ")).not.toContain(PASSWORD);
  });
});
