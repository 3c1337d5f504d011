// The pager kind against a local Events-API-v2-style service (test/support/pagerServer.ts): trigger and resolve on one
// dedup key, the event's shape, test sends, suppress; each failure (429/5xx with Retry-After, a bad routing key, 4xx,
// a slow answer, a dropped or refused connection) as its DeliveryError, none naming the URL or the routing key; the
// shared Retry-After parsing; and the config checks.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { Ajv } from "ajv";
import { createServer, type AddressInfo } from "node:net";
import { startPagerServer, type PagerServer } from "../../../test/support/pagerServer.js";
import { DeliveryError, type ChannelForSend, type OutboundNotification } from "../contract.js";
import { httpFailure, networkFailure, parseRetryAfter } from "../kinds/http.js";
import { PAGER_SUMMARY_MAX, pagerKind } from "../kinds/pager.js";
import { alert, NODE, KEY } from "./fixtures.js";

const ROUTING_KEY = "R0ut1ngKeyR0ut1ngKeyR0ut1ngKey42";

function notification(over: Partial<OutboundNotification> = {}): OutboundNotification {
  return {
    event: "fire",
    alert: alert(),
    subject: `[CRITICAL] CPU load above 90% (node ${NODE})`,
    body: null,
    dedupKey: KEY,
    idempotencyKey: "0d9a6c55-8f7e-4b1c-9a0e-3e1f2d4c5b6a:1",
    test: false,
    incidentRef: null,
    ...over,
  };
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const checkConfig = ajv.compile(pagerKind.configSchema);

/** A channel as the kernel hands it to send(): config validated, defaults filled in. */
function channel(config: Record<string, unknown>): ChannelForSend {
  const copy = structuredClone(config);
  if (!checkConfig(copy)) throw new Error(`test config invalid: ${JSON.stringify(checkConfig.errors)}`);
  pagerKind.validate?.(copy);
  return { id: "5b1d6a8e-3c2f-4e7a-9b0d-1f2e3d4c5b6a", name: "on-call", config: copy };
}

let server: PagerServer;
let ch: ChannelForSend;

beforeAll(async () => {
  server = await startPagerServer([ROUTING_KEY]);
  ch = channel({ url: server.enqueueUrl, routing_key: ROUTING_KEY, timeout_ms: 1000 });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.requests.length = 0;
  server.incidents.clear();
});

const never = () => new AbortController().signal;

/** The failure send() throws, checked to be a DeliveryError that names neither the URL nor the routing key. */
async function failure(p: Promise<unknown>): Promise<DeliveryError> {
  const err = await p.then(
    () => {
      throw new Error("send succeeded");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryError);
  const d = err as DeliveryError;
  for (const secret of [server.url, server.enqueueUrl, "127.0.0.1", ROUTING_KEY, String(new URL(server.url).port)]) expect(d.message).not.toContain(secret);
  return d;
}

describe("pager kind: the Events API v2 protocol", () => {
  it("a fire triggers an incident on the dedup key, and a resolve resolves that same incident", async () => {
    const fired = await pagerKind.send(notification(), ch, never());
    expect(fired).toEqual({ status: 202 });
    expect(server.incidents.get(KEY)).toMatchObject({ status: "triggered", severity: "critical", source: NODE });

    const resolved = await pagerKind.send(
      notification({ event: "resolve", alert: alert({ resolved: true, severity: "critical", state: "ok" }), idempotencyKey: "0d9a6c55:2" }),
      ch,
      never(),
    );
    expect(resolved).toEqual({ status: 202 });
    expect(server.incidents.get(KEY)).toMatchObject({ status: "resolved", actions: ["trigger", "resolve"] });
    expect(server.incidents.size).toBe(1);

    expect(
      server.requests.map((r) => [r.method, r.path, (r.body as { event_action: string }).event_action, (r.body as { dedup_key: string }).dedup_key]),
    ).toEqual([
      ["POST", "/v2/enqueue", "trigger", KEY],
      ["POST", "/v2/enqueue", "resolve", KEY],
    ]);
    expect(server.requests.map((r) => r.headers["idempotency-key"])).toEqual(["0d9a6c55-8f7e-4b1c-9a0e-3e1f2d4c5b6a:1", "0d9a6c55:2"]);
    expect(server.requests[0]!.headers["content-type"]).toBe("application/json");
  });

  it("the event carries routing_key, the summary, source, mapped severity, the transition's timestamp and the whole alert as custom_details", async () => {
    await pagerKind.send(notification({ alert: alert({ severity: "warning", state: "warning" }) }), ch, never());
    expect(server.requests[0]!.body).toEqual({
      routing_key: ROUTING_KEY,
      event_action: "trigger",
      dedup_key: KEY,
      payload: {
        summary: `[CRITICAL] CPU load above 90% (node ${NODE})`,
        source: NODE,
        severity: "warning",
        timestamp: "2026-11-24T02:00:00.000Z",
        custom_details: alert({ severity: "warning", state: "warning" }),
      },
    });
  });

  it("info maps to info; source is config.source, else the node id, else nms-core", async () => {
    const withSource = channel({ url: server.enqueueUrl, routing_key: ROUTING_KEY, source: "nms-prod-1" });
    await pagerKind.send(notification({ alert: alert({ severity: "info" }) }), withSource, never());
    const pool = alert({ subject_kind: "pool", node: null, subject_name: "east", incident_key: "pool:east" });
    await pagerKind.send(notification({ alert: pool, dedupKey: "pool:east", subject: "[CRITICAL] poller pool east unreachable" }), ch, never());
    const payloads = server.requests.map((r) => (r.body as { payload: { source: string; severity: string } }).payload);
    expect(payloads.map((p) => [p.source, p.severity])).toEqual([
      ["nms-prod-1", "info"],
      ["nms-core", "critical"],
    ]);
    expect(server.incidents.get("pool:east")?.status).toBe("triggered");
  });

  it("a summary longer than 1024 characters is cut to 1024", async () => {
    await pagerKind.send(notification({ subject: "x".repeat(3000) }), ch, never());
    const summary = (server.requests[0]!.body as { payload: { summary: string } }).payload.summary;
    expect(summary).toHaveLength(PAGER_SUMMARY_MAX);
    expect(server.incidents.get(KEY)?.status).toBe("triggered");
  });

  it("a test send carries test: true in custom_details (and a real one does not)", async () => {
    await pagerKind.send(notification({ test: true }), ch, never());
    await pagerKind.send(notification({ test: true, event: "resolve" }), ch, never());
    await pagerKind.send(notification({ dedupKey: "other" }), ch, never());
    const details = server.requests.map((r) => (r.body as { payload: { custom_details: Record<string, unknown> } }).payload.custom_details);
    expect(details[0]).toMatchObject({ test: true, incident_key: KEY, title: "CPU load above 90%" });
    expect(details[1]).toMatchObject({ test: true });
    expect(details[2]).not.toHaveProperty("test");
    expect(server.incidents.get(KEY)?.status).toBe("resolved");
  });

  it("a suppress pages nobody: nothing is sent and the outcome's status is null", async () => {
    expect(await pagerKind.send(notification({ event: "suppress" }), ch, never())).toEqual({ status: null });
    expect(server.requests).toHaveLength(0);
  });

  it("opens incidents, keeps routing_key secret and uses the id/JSON templates", () => {
    expect(pagerKind.opensIncidents).toBe(true);
    expect(pagerKind.secretFields).toEqual(["routing_key"]);
    expect(pagerKind.builtinTemplates.fire.body).toBeNull();
    expect(pagerKind.builtinTemplates.fire.subject).toContain("alert.node");
  });
});

describe("pager kind: failures", () => {
  it("429 with Retry-After in seconds is retryable after that long", async () => {
    server.next({ status: 429, retryAfter: "7" });
    const err = await failure(pagerKind.send(notification(), ch, never()));
    expect(err.message).toBe("HTTP 429");
    expect(err.errorClass).toBe("http_status");
    expect(err.options).toEqual({ retryable: true, status: 429, retryAfterMs: 7000 });
    expect(server.incidents.size).toBe(0);
  });

  it("503 with Retry-After as an HTTP date is retryable until that date", async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 30_000);
    server.next({ status: 503, retryAfter: at.toUTCString() });
    const err = await failure(pagerKind.send(notification(), ch, never()));
    expect(err.message).toBe("HTTP 503");
    expect(err.options.retryable).toBe(true);
    expect(err.options.status).toBe(503);
    expect(err.options.retryAfterMs).toBeGreaterThan(25_000);
    expect(err.options.retryAfterMs).toBeLessThanOrEqual(31_000);
  });

  it("500 without Retry-After is retryable with no hint", async () => {
    server.next({ status: 500 });
    const err = await failure(pagerKind.send(notification(), ch, never()));
    expect(err.options).toEqual({ retryable: true, status: 500, retryAfterMs: null });
  });

  it("an unknown routing key is a 400 that ends the delivery", async () => {
    const bad = channel({ url: server.enqueueUrl, routing_key: "WrongKeyWrongKeyWrongKeyWrongKey" });
    const err = await failure(pagerKind.send(notification(), bad, never()));
    expect(err.message).toBe("HTTP 400");
    expect(err.message).not.toContain("WrongKey");
    expect(err.options).toEqual({ retryable: false, status: 400, retryAfterMs: null });
    expect(server.incidents.size).toBe(0);
  });

  it.each([401, 403, 404])("HTTP %i ends the delivery (not retryable), even with a Retry-After", async (status) => {
    server.next({ status, retryAfter: "5" });
    const err = await failure(pagerKind.send(notification(), ch, never()));
    expect(err.message).toBe(`HTTP ${status}`);
    expect(err.options).toEqual({ retryable: false, status, retryAfterMs: null });
  });

  it("a wrong path on the server is a 404 that ends the delivery", async () => {
    const wrong = channel({ url: `${server.url}/v1/enqueue?token=${ROUTING_KEY}`, routing_key: ROUTING_KEY });
    const err = await failure(pagerKind.send(notification(), wrong, never()));
    expect(err.options).toMatchObject({ retryable: false, status: 404 });
  });

  it("an answer slower than timeout_ms is a retryable timeout", async () => {
    server.next({ delayMs: 2500 });
    const started = Date.now();
    const err = await failure(pagerKind.send(notification(), ch, never()));
    expect(Date.now() - started).toBeLessThan(2400);
    expect(err.message).toBe("timeout");
    expect(err.errorClass).toBe("timeout");
    expect(err.options).toEqual({ retryable: true, status: null });
  });

  it("a dropped connection is a retryable connection reset", async () => {
    server.next({ drop: true });
    const err = await failure(pagerKind.send(notification(), ch, never()));
    expect(err.message).toBe("connection reset");
    expect(err.options.retryable).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it("a refused connection is retryable and names neither host nor port", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const closed = channel({ url: `http://127.0.0.1:${port}/v2/enqueue`, routing_key: ROUTING_KEY });
    const err = await failure(pagerKind.send(notification(), closed, never()));
    expect(err.message).toBe("connection refused");
    expect(err.message).not.toContain(String(port));
    expect(err.options.retryable).toBe(true);
  });

  it("the caller's abort (shutdown) stops the send, retryable", async () => {
    server.next({ delayMs: 2000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const err = await failure(pagerKind.send(notification(), channel({ url: server.enqueueUrl, routing_key: ROUTING_KEY }), ac.signal));
    expect(err.message).toBe("aborted");
    expect(err.options.retryable).toBe(true);
  });
});

describe("the HTTP kinds' shared failure mapping (kinds/http.ts)", () => {
  const now = Date.parse("2026-11-24T03:00:00.000Z");

  it("parseRetryAfter reads delay-seconds and HTTP dates, and nothing else", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Tue, 24 Nov 2026 03:00:45 GMT", now)).toBe(45_000);
    expect(parseRetryAfter("Tue, 24 Nov 2026 02:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(["3", "9"], now)).toBe(3000);
    for (const bad of [null, undefined, "", "soon", "-5", "1.5", "12:00", "next week"]) expect(parseRetryAfter(bad, now)).toBeNull();
  });

  it("httpFailure: 408, 429 and 5xx are retryable with their Retry-After; other statuses are not", () => {
    expect(httpFailure(408, null, now).options).toEqual({ retryable: true, status: 408, retryAfterMs: null });
    expect(httpFailure(502, "Tue, 24 Nov 2026 03:01:00 GMT", now).options).toEqual({ retryable: true, status: 502, retryAfterMs: 60_000 });
    expect(httpFailure(302, null, now).message).toBe("HTTP 302 (redirects are not followed)");
    expect(httpFailure(302, null, now).options.retryable).toBe(false);
    expect(httpFailure(422, "10", now).options).toEqual({ retryable: false, status: 422, retryAfterMs: null });
  });

  it("networkFailure names the failure by its code, never by the error's message", () => {
    const coded = (code: string, name = "Error") =>
      Object.assign(new Error(`connect ${code} 10.9.8.7:8443 https://secret.example/path?key=abc`), { code, name });
    expect(networkFailure(coded("ECONNREFUSED")).message).toBe("connection refused");
    expect(networkFailure(coded("ECONNRESET")).message).toBe("connection reset");
    expect(networkFailure(coded("UND_ERR_HEADERS_TIMEOUT")).message).toBe("timeout");
    expect(networkFailure(coded("ENOTFOUND")).message).toBe("name not resolved");
    const tls = networkFailure(coded("DEPTH_ZERO_SELF_SIGNED_CERT"));
    expect([tls.message, tls.options.retryable]).toEqual(["TLS error (DEPTH_ZERO_SELF_SIGNED_CERT)", false]);
    expect(networkFailure(coded("EWHATEVER")).message).toBe("network error (EWHATEVER)");
    expect(networkFailure(new Error("https://secret.example/")).message).toBe("network error");
    expect(networkFailure(new Error("x"), true).message).toBe("timeout");
    const passed = new DeliveryError("HTTP 418", "http_status", { retryable: false });
    expect(networkFailure(passed)).toBe(passed);
  });
});

describe("pager kind: config", () => {
  function errors(config: Record<string, unknown>): string[] {
    const copy = structuredClone(config);
    if (checkConfig(copy)) {
      try {
        pagerKind.validate?.(copy);
        return [];
      } catch (err) {
        return [(err as Error).message];
      }
    }
    return (checkConfig.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }

  it("a valid config gets its defaults", () => {
    const copy: Record<string, unknown> = { url: "https://events.pagerduty.com/v2/enqueue", routing_key: ROUTING_KEY };
    expect(checkConfig(copy)).toBe(true);
    expect(copy).toEqual({ url: "https://events.pagerduty.com/v2/enqueue", routing_key: ROUTING_KEY, source: null, timeout_ms: 10000 });
  });

  it.each([
    ["no url", { routing_key: ROUTING_KEY }],
    ["no routing key", { url: "https://events.pagerduty.com/v2/enqueue" }],
    ["an empty routing key", { url: "https://events.pagerduty.com/v2/enqueue", routing_key: "" }],
    ["a non-http url", { url: "ftp://events.example/v2/enqueue", routing_key: ROUTING_KEY }],
    ["a url that is not one", { url: "https://", routing_key: ROUTING_KEY }],
    ["credentials in the url", { url: "https://u:p@events.example/v2/enqueue", routing_key: ROUTING_KEY }],
    ["a timeout below 1 s", { url: "https://events.example/v2/enqueue", routing_key: ROUTING_KEY, timeout_ms: 500 }],
    ["a timeout above 60 s", { url: "https://events.example/v2/enqueue", routing_key: ROUTING_KEY, timeout_ms: 60001 }],
    ["a source that is not a string", { url: "https://events.example/v2/enqueue", routing_key: ROUTING_KEY, source: 5 }],
    ["an unknown field", { url: "https://events.example/v2/enqueue", routing_key: ROUTING_KEY, service_key: "x" }],
  ])("refuses %s", (_what, config) => {
    expect(errors(config).length).toBeGreaterThan(0);
    expect(errors(config).join(" ")).not.toContain(ROUTING_KEY);
  });
});
