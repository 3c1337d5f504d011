/**
 * Who may scrape GET /metrics (config metrics.access): loopback callers (default), a bearer token compared in constant
 * time, anyone, or nobody (404). Real kernels for each mode; the endpoint's handler called directly for a caller that is
 * not on this machine (tests only use loopback, so no real remote caller exists here).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { JsonLogger } from "../../core/logging/Logger.js";
import { KernelMetrics } from "../../core/metrics/KernelMetrics.js";
import { checkMetricsConfig, isLoopback, metricsAccess } from "../../core/metrics/metricsAccess.js";
import { metricsEndpoint } from "../../core/metrics/metricsEndpoint.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { parseExposition } from "./exposition.js";

const TOKEN = "metrics-token-0123456789abcdef";

describe("the access decision", () => {
  it("knows loopback addresses, in IPv4, IPv6 and IPv4-mapped form", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"])
      expect({ a, loopback: isLoopback(a) }).toEqual({ a, loopback: true });
    for (const a of ["192.0.2.7", "10.0.0.1", "::ffff:10.0.0.1", "fd00::2", "::", "0.0.0.0", "128.0.0.1", "", undefined])
      expect({ a, loopback: isLoopback(a) }).toEqual({ a, loopback: false });
  });

  it("loopback: callers on this machine only (forwarding headers are not consulted)", () => {
    expect(metricsAccess({ access: "loopback", token: null }, "127.0.0.1", undefined)).toEqual({ allow: true });
    expect(metricsAccess({ access: "loopback", token: null }, "::1", undefined)).toEqual({ allow: true });
    expect(metricsAccess({ access: "loopback", token: TOKEN }, "192.0.2.7", `Bearer ${TOKEN}`)).toMatchObject({
      allow: false,
      status: 403,
      code: "metrics_loopback_only",
    });
  });

  it("token: only the exact bearer token, from anywhere", () => {
    const cfg = { access: "token" as const, token: TOKEN };
    expect(metricsAccess(cfg, "192.0.2.7", `Bearer ${TOKEN}`)).toEqual({ allow: true });
    expect(metricsAccess(cfg, "192.0.2.7", `bearer ${TOKEN}`)).toEqual({ allow: true });
    for (const auth of [undefined, "", TOKEN, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, "Bearer ", `Bearer ${TOKEN} extra`]) {
      expect({ auth, d: metricsAccess(cfg, "127.0.0.1", auth) }).toEqual({
        auth,
        d: { allow: false, status: 401, code: "unauthorized", message: expect.any(String), headers: { "WWW-Authenticate": 'Bearer realm="metrics"' } },
      });
    }
  });

  it("open lets anyone in; off answers 404 as for an unknown route", () => {
    expect(metricsAccess({ access: "open", token: null }, "192.0.2.7", undefined)).toEqual({ allow: true });
    expect(metricsAccess({ access: "off", token: TOKEN }, "127.0.0.1", `Bearer ${TOKEN}`)).toMatchObject({
      allow: false,
      status: 404,
      code: "route_not_found",
    });
  });

  it("token mode needs a token of at least 16 characters", () => {
    expect(() => checkMetricsConfig({ access: "token", token: null })).toThrow(/metrics.token \(NMS_METRICS_TOKEN\) is not set/);
    expect(() => checkMetricsConfig({ access: "token", token: "short" })).toThrow(/shorter than 16/);
    expect(() => checkMetricsConfig({ access: "token", token: TOKEN })).not.toThrow();
    expect(() => checkMetricsConfig({ access: "loopback", token: null })).not.toThrow();
  });

  it("the endpoint refuses a caller from another machine in loopback mode, and serves it in open mode", async () => {
    const metrics = new KernelMetrics(new JsonLogger("error", "test", () => undefined), "0.0.0");
    const call = async (access: "loopback" | "open", remoteAddress: string) => {
      const out: { status?: number; headers?: Record<string, unknown>; body?: string; next: boolean } = { next: false };
      const done = new Promise<void>((resolve) => {
        const res = {
          writeHead(status: number, headers: Record<string, unknown>) {
            out.status = status;
            out.headers = headers;
          },
          end(body?: string) {
            out.body = body;
            resolve();
          },
        } as unknown as ServerResponse;
        const req = { url: "/metrics", method: "GET", headers: { "x-forwarded-for": "127.0.0.1" }, socket: { remoteAddress } } as unknown as IncomingMessage;
        metricsEndpoint(metrics, { access, token: null }, new JsonLogger("error", "test", () => undefined))(req, res, () => {
          out.next = true;
          resolve();
        });
      });
      await done;
      return out;
    };
    const refused = await call("loopback", "192.0.2.7");
    expect({ status: refused.status, body: JSON.parse(refused.body!) }).toEqual({
      status: 403,
      body: { error: { code: "metrics_loopback_only", message: expect.any(String) } },
    });
    const open = await call("open", "192.0.2.7");
    expect(open.status).toBe(200);
    expect(parseExposition(open.body!).has("nms_build_info")).toBe(true);
  });
});

describe("access modes on a real kernel", () => {
  let k: TestKernel | undefined;
  afterEach(async () => {
    await k?.stop();
    k = undefined;
  });

  it("loopback (the default) serves a caller on 127.0.0.1 (skeleton mode: the store is none)", async () => {
    k = await startTestKernel({ skeleton: true });
    expect(k.kernel.config.metrics.access).toBe("loopback");
    const res = await fetch(`${k.url}/metrics`);
    expect(res.status).toBe(200);
    const families = parseExposition(await res.text());
    // Skeleton mode: no store, so no pool and no embedded server.
    expect(families.get("nms_store_info")!.samples).toEqual([{ name: "nms_store_info", labels: { kind: "none" }, value: 1 }]);
    expect(families.has("nms_db_pool_connections")).toBe(false);
    expect(families.has("nms_store_embedded_up")).toBe(false);
  });

  it("token: 401 with the envelope without or with a wrong token, 200 with it; the token never appears in the answer or the log", async () => {
    k = await startTestKernel({ skeleton: true, env: { NMS_METRICS_ACCESS: "token", NMS_METRICS_TOKEN: TOKEN } });
    for (const headers of [{}, { Authorization: "Bearer wrong-token-0123456789" }, { Authorization: `Bearer ${TOKEN}0` }] as Record<string, string>[]) {
      const res = await fetch(`${k.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(await res.json()).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
    }
    const ok = await fetch(`${k.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    const text = await ok.text();
    parseExposition(text);
    expect(text).not.toContain(TOKEN);
    expect(k.logs.join("\n")).not.toContain(TOKEN);
    // An API token of the service is not the metrics token.
    expect((await fetch(`${k.url}/metrics`, { headers: { Authorization: `Bearer ${k.adminToken}` } })).status).toBe(401);
  });

  it("off: 404 route_not_found, even with a token", async () => {
    k = await startTestKernel({ skeleton: true, overrides: { metrics: { access: "off", token: TOKEN } } });
    const res = await fetch(`${k.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "route_not_found", message: expect.any(String) } });
  });

  it("open: served to anyone", async () => {
    k = await startTestKernel({ skeleton: true, overrides: { metrics: { access: "open", token: null } } });
    expect((await fetch(`${k.url}/metrics`)).status).toBe(200);
  });

  it("token mode without a token stops the boot with a sentence naming the key", async () => {
    await expect(startTestKernel({ skeleton: true, env: { NMS_METRICS_ACCESS: "token" } })).rejects.toThrow(/metrics.token \(NMS_METRICS_TOKEN\) is not set/);
  });
});
