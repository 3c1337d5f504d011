import { createServer } from "node:net";
import { startHttpTarget, type HttpTarget } from "../../../test/support/httpTarget.js";
import { extractNumber, loggableUrl, MAX_REDIRECTS, runUrlCheck, UrlProbe, type CheckMetric } from "../checks/UrlProbe.js";
import type { UrlCheckSpec } from "../poller/types.js";

let http: HttpTarget;
let https: HttpTarget;
let otherHttp: HttpTarget;

const JSON_DOC = { status: "green", items: [{ value: 42 }, { value: "n/a" }], stats: { load: 0.75, name: "edge" }, count: 3 };

beforeAll(async () => {
  http = await startHttpTarget({ basic: { username: "monitor", password: "s3cret-pass" }, bearer: "tok-123456", json: JSON_DOC });
  https = await startHttpTarget({ tls: true, certDays: 30, json: JSON_DOC });
  otherHttp = await startHttpTarget();
});
afterAll(async () => {
  await http?.close();
  await https?.close();
  await otherHttp?.close();
});

function spec(url: string, over: Partial<UrlCheckSpec> = {}): UrlCheckSpec {
  return {
    url,
    method: "GET",
    timeout_ms: 5000,
    follow_redirects: true,
    verify_tls: true,
    expected_status: { kind: "two_xx" },
    body_match: null,
    body_max_bytes: 65536,
    json_extract: [],
    auth: null,
    ...over,
  };
}

const asMap = (metrics: CheckMetric[]) => Object.fromEntries(metrics.map((m) => [m.metric, m.value]));

describe("status and timing", () => {
  it("answers up with the status and response time, and reads no body when nothing needs it", async () => {
    const r = await runUrlCheck(spec(`${http.url}/ok`));
    const m = asMap(r.metrics);
    expect(r.reason).toBeNull();
    expect(m.url_up).toBe(1);
    expect(m.url_status_code).toBe(200);
    expect(m.url_response_ms).toBeGreaterThanOrEqual(0);
    expect(m).not.toHaveProperty("url_body_bytes");
    expect(m).not.toHaveProperty("url_body_match");
    expect(m).not.toHaveProperty("url_tls_expiry_days"); // http
  });

  it("two_xx: 204 is up, 500 is down with the reason", async () => {
    expect(asMap((await runUrlCheck(spec(`${http.url}/status/204`))).metrics).url_up).toBe(1);
    const r = await runUrlCheck(spec(`${http.url}/status/500`));
    expect(asMap(r.metrics)).toMatchObject({ url_up: 0, url_status_code: 500 });
    expect(r.reason).toBe("status 500, expected 2xx");
  });

  it("exact: only that code is up", async () => {
    expect(asMap((await runUrlCheck(spec(`${http.url}/status/404`, { expected_status: { kind: "exact", code: 404 } }))).metrics).url_up).toBe(1);
    expect(asMap((await runUrlCheck(spec(`${http.url}/ok`, { expected_status: { kind: "exact", code: 404 } }))).metrics).url_up).toBe(0);
  });

  it("range: bounds are inclusive", async () => {
    const range = { kind: "range", min: 400, max: 418 } as const;
    expect(asMap((await runUrlCheck(spec(`${http.url}/status/400`, { expected_status: range }))).metrics).url_up).toBe(1);
    expect(asMap((await runUrlCheck(spec(`${http.url}/status/418`, { expected_status: range }))).metrics).url_up).toBe(1);
    expect(asMap((await runUrlCheck(spec(`${http.url}/status/419`, { expected_status: range }))).metrics).url_up).toBe(0);
    expect(asMap((await runUrlCheck(spec(`${http.url}/ok`, { expected_status: range }))).metrics).url_up).toBe(0);
  });

  it("timeout_ms aborts a slow answer: down, named a timeout, and returns in time", async () => {
    const started = Date.now();
    const r = await runUrlCheck(spec(`${http.url}/slow/3000`, { timeout_ms: 300 }));
    expect(Date.now() - started).toBeLessThan(1500);
    expect(asMap(r.metrics)).toEqual({ url_up: 0 });
    expect(r.reason).toBe("timeout after 300 ms");
    // a slow answer within the timeout is fine
    expect(asMap((await runUrlCheck(spec(`${http.url}/slow/100`, { timeout_ms: 2000 }))).metrics).url_up).toBe(1);
  });

  it("a refused connection is down without throwing", async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const r = await runUrlCheck(spec(`http://127.0.0.1:${closed}/ok`));
    expect(asMap(r.metrics)).toEqual({ url_up: 0 });
    expect(r.reason).toBe("connection refused");
  });

  it("an unparsable URL or another scheme is down, never a throw", async () => {
    expect((await runUrlCheck(spec("not a url"))).reason).toBe("the URL does not parse");
    expect((await runUrlCheck(spec("ftp://127.0.0.1/x"))).reason).toBe("unsupported scheme ftp:");
  });
});

describe("method", () => {
  it("sends the configured method", async () => {
    const before = http.requests.length;
    const r = await runUrlCheck(spec(`${http.url}/echo`, { method: "POST", body_match: { mode: "contains", pattern: '"method":"POST"' } }));
    expect(asMap(r.metrics)).toMatchObject({ url_up: 1, url_body_match: 1 });
    expect(http.requests.slice(before).map((q) => q.method)).toEqual(["POST"]);
  });

  it("HEAD gets the status without a body", async () => {
    const before = http.requests.length;
    expect(asMap((await runUrlCheck(spec(`${http.url}/ok`, { method: "HEAD" }))).metrics)).toMatchObject({ url_up: 1, url_status_code: 200 });
    expect(http.requests[before].method).toBe("HEAD");
  });
});

describe("redirects", () => {
  it("follow_redirects on: the final answer counts", async () => {
    const before = http.requests.length;
    const r = await runUrlCheck(spec(`${http.url}/redirect/3`, { body_match: { mode: "contains", pattern: "redirected" } }));
    expect(asMap(r.metrics)).toMatchObject({ url_up: 1, url_status_code: 200, url_body_match: 1 });
    expect(http.requests.slice(before).map((q) => q.path)).toEqual(["/redirect/3", "/redirect/2", "/redirect/1", "/redirect/0"]);
  });

  it("follow_redirects off: the 302 itself is the answer", async () => {
    const before = http.requests.length;
    const r = await runUrlCheck(spec(`${http.url}/redirect/3`, { follow_redirects: false }));
    expect(asMap(r.metrics)).toMatchObject({ url_up: 0, url_status_code: 302 });
    expect(http.requests.length - before).toBe(1);
    const exact = await runUrlCheck(spec(`${http.url}/redirect/3`, { follow_redirects: false, expected_status: { kind: "exact", code: 302 } }));
    expect(asMap(exact.metrics).url_up).toBe(1);
  });

  it(`stops after ${MAX_REDIRECTS} redirects and judges the last 3xx`, async () => {
    const r = await runUrlCheck(spec(`${http.url}/redirect/${MAX_REDIRECTS + 2}`));
    expect(asMap(r.metrics)).toMatchObject({ url_up: 0, url_status_code: 302 });
  });

  it("does not carry the Authorization header to another origin", async () => {
    const before = otherHttp.requests.length;
    const target = encodeURIComponent(`${otherHttp.url}/echo`);
    const r = await runUrlCheck(spec(`${http.url}/redirect-to?url=${target}`, { auth: { mode: "bearer", token: "tok-123456" } }));
    expect(asMap(r.metrics).url_up).toBe(1);
    const seen = otherHttp.requests.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0].headers.authorization).toBeUndefined();
  });
});

describe("TLS", () => {
  it("verify_tls on refuses a self-signed certificate", async () => {
    const r = await runUrlCheck(spec(`${https.url}/ok`));
    expect(asMap(r.metrics).url_up).toBe(0);
    expect(r.reason).toMatch(/^TLS verification failed/);
  });

  it("verify_tls off accepts it and still reports the days until it expires", async () => {
    const r = await runUrlCheck(spec(`${https.url}/ok`, { verify_tls: false }));
    const m = asMap(r.metrics);
    expect(m.url_up).toBe(1);
    expect(m.url_tls_expiry_days).toBeGreaterThan(29);
    expect(m.url_tls_expiry_days).toBeLessThanOrEqual(30.01);
  });
});

describe("body", () => {
  const text = (body: string) => `${http.url}/text?body=${encodeURIComponent(body)}`;

  it("contains / not_contains / regex", async () => {
    const run = async (body: string, match: UrlCheckSpec["body_match"]) => asMap((await runUrlCheck(spec(text(body), { body_match: match }))).metrics);
    expect(await run("service healthy", { mode: "contains", pattern: "healthy" })).toMatchObject({ url_up: 1, url_body_match: 1, url_body_bytes: 15 });
    expect(await run("service degraded", { mode: "contains", pattern: "healthy" })).toMatchObject({ url_up: 0, url_body_match: 0 });
    expect(await run("all fine", { mode: "not_contains", pattern: "ERROR" })).toMatchObject({ url_up: 1, url_body_match: 1 });
    expect(await run("ERROR: disk", { mode: "not_contains", pattern: "ERROR" })).toMatchObject({ url_up: 0, url_body_match: 0 });
    expect(await run("build 4711 ok", { mode: "regex", pattern: "^build \\d+ ok$" })).toMatchObject({ url_up: 1, url_body_match: 1 });
    expect(await run("build x ok", { mode: "regex", pattern: "^build \\d+ ok$" })).toMatchObject({ url_up: 0, url_body_match: 0 });
  });

  it("reads at most body_max_bytes and stops reading the rest", async () => {
    const size = 32 * 1024 * 1024;
    const r = await runUrlCheck(spec(`${http.url}/large/${size}`, { body_max_bytes: 4096, body_match: { mode: "contains", pattern: "b" } }));
    expect(asMap(r.metrics)).toMatchObject({ url_up: 0, url_body_bytes: 4096, url_body_match: 0 });
    const stats = await http.largeSettled();
    expect(stats.aborted).toBe(true);
    expect(stats.written).toBeLessThan(size / 2);
  });

  it("a match beyond body_max_bytes is not seen", async () => {
    const body = "x".repeat(2000) + "NEEDLE";
    const r = await runUrlCheck(spec(text(body), { body_max_bytes: 1024, body_match: { mode: "contains", pattern: "NEEDLE" } }));
    expect(asMap(r.metrics)).toMatchObject({ url_body_bytes: 1024, url_body_match: 0 });
  });

  it("does not read the body when neither body_match nor json_extract is set", async () => {
    const size = 32 * 1024 * 1024;
    const r = await runUrlCheck(spec(`${http.url}/large/${size}`));
    expect(asMap(r.metrics)).toMatchObject({ url_up: 1, url_status_code: 200 });
    expect(asMap(r.metrics)).not.toHaveProperty("url_body_bytes");
    const stats = await http.largeSettled();
    expect(stats.aborted).toBe(true);
    expect(stats.written).toBeLessThan(size / 2);
  });
});

describe("json_extract", () => {
  it("records each numeric value at its path; missing and non-numeric values record nothing", async () => {
    const r = await runUrlCheck(
      spec(`${http.url}/json`, {
        json_extract: [
          { metric: "first_value", path: "items.0.value" },
          { metric: "first_value_brackets", path: "items[0].value" },
          { metric: "second_value", path: "items.1.value" },
          { metric: "load", path: "stats.load" },
          { metric: "count", path: "count" },
          { metric: "missing", path: "stats.nothing.here" },
          { metric: "out_of_range", path: "items.5.value" },
          { metric: "an_object", path: "stats" },
        ],
      }),
    );
    const m = asMap(r.metrics);
    expect(m).toMatchObject({ url_up: 1, first_value: 42, first_value_brackets: 42, load: 0.75, count: 3 });
    expect(m.url_body_bytes).toBe(Buffer.byteLength(JSON.stringify(JSON_DOC)));
    for (const absent of ["second_value", "missing", "out_of_range", "an_object", "url_body_match"]) expect(m).not.toHaveProperty(absent);
  });

  it("a body that is not JSON (or is cut at body_max_bytes) records no extracted metric", async () => {
    const r = await runUrlCheck(spec(`${http.url}/json`, { body_max_bytes: 20, json_extract: [{ metric: "count", path: "count" }] }));
    expect(asMap(r.metrics)).toMatchObject({ url_up: 1, url_body_bytes: 20 });
    expect(asMap(r.metrics)).not.toHaveProperty("count");
  });

  it("extractNumber walks objects and arrays only", () => {
    expect(extractNumber({ a: [{ b: 1.5 }] }, "a.0.b")).toBe(1.5);
    expect(extractNumber({ a: [{ b: 1.5 }] }, "a[0].b")).toBe(1.5);
    expect(extractNumber({ a: { 0: 7 } }, "a.0")).toBe(7);
    expect(extractNumber({ a: [1] }, "a.x")).toBeNull();
    expect(extractNumber({ a: "3" }, "a")).toBeNull();
    expect(extractNumber({ a: {} }, "a.toString")).toBeNull();
  });
});

describe("auth", () => {
  it("basic: the right credentials get in, wrong ones do not; the password is never in the reason", async () => {
    const ok = await runUrlCheck(spec(`${http.url}/auth/basic`, { auth: { mode: "basic", username: "monitor", password: "s3cret-pass" } }));
    expect(asMap(ok.metrics)).toMatchObject({ url_up: 1, url_status_code: 200 });
    const bad = await runUrlCheck(spec(`${http.url}/auth/basic`, { auth: { mode: "basic", username: "monitor", password: "wrong-pass" } }));
    expect(asMap(bad.metrics)).toMatchObject({ url_up: 0, url_status_code: 401 });
    expect(bad.reason).toBe("status 401, expected 2xx");
  });

  it("bearer: the token goes in the Authorization header", async () => {
    const before = http.requests.length;
    const ok = await runUrlCheck(spec(`${http.url}/auth/bearer`, { auth: { mode: "bearer", token: "tok-123456" } }));
    expect(asMap(ok.metrics).url_up).toBe(1);
    expect(http.requests[before].headers.authorization).toBe("Bearer tok-123456");
    expect(asMap((await runUrlCheck(spec(`${http.url}/auth/bearer`))).metrics).url_status_code).toBe(401);
  });
});

describe("UrlProbe (the poll loop's seam)", () => {
  it("answers the metrics and hands the reason, with a URL stripped of secrets, to onDown", async () => {
    const downs: [string, string][] = [];
    const probe = new UrlProbe((reason, url) => downs.push([reason, url]));
    const metrics = await probe.run(spec(`${http.url}/status/503?token=abc`));
    expect(asMap(metrics)).toMatchObject({ url_up: 0, url_status_code: 503 });
    expect(downs).toEqual([["status 503, expected 2xx", `${http.url}/status/503`]]);
    expect(loggableUrl("https://user:pw@example.test:8443/p?q=1#f")).toBe("https://example.test:8443/p");
  });
});
