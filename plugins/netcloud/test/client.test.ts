import { startNetcloudServer, type NetcloudServer } from "../../../test/support/netcloudServer.js";
import { checkBaseUrl, hostAllowed, NetcloudClient, NetcloudError, netcloudAgent, nextLink, retryAfterMs } from "../lib/client.js";

describe("helpers", () => {
  it("reads the rel=next target of a Link header (RFC 5988), whatever the other links", () => {
    expect(nextLink("<https://a.example/x?startingAfter=1>; rel=first, <https://a.example/x?startingAfter=9>; rel=next")).toBe(
      "https://a.example/x?startingAfter=9",
    );
    expect(nextLink('<https://a.example/p2>; rel="next"')).toBe("https://a.example/p2");
    expect(nextLink('<https://a.example/p2>; rel="prev next"')).toBe("https://a.example/p2");
    expect(nextLink(["<https://a.example/p0>; rel=prev", "<https://a.example/p2>; rel=next"])).toBe("https://a.example/p2");
    expect(nextLink("<https://a.example/p0>; rel=prev, <https://a.example/last>; rel=last")).toBeNull();
    expect(nextLink("<https://a.example/p0>; rel=nextish")).toBeNull();
    expect(nextLink(undefined)).toBeNull();
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs("Wed, 21 Oct 2026 07:28:10 GMT", Date.parse("Wed, 21 Oct 2026 07:28:00 GMT"))).toBe(10000);
    expect(retryAfterMs("Wed, 21 Oct 2026 07:28:00 GMT", Date.parse("Wed, 21 Oct 2026 08:00:00 GMT"))).toBe(0);
    expect(retryAfterMs("soon")).toBeNull();
    expect(retryAfterMs(undefined)).toBeNull();
  });

  it("matches hosts on the allow-list: exact, with a port, and *.domain", () => {
    const u = (s: string) => new URL(s);
    expect(hostAllowed(u("https://api.example.com/x"), ["API.example.com"])).toBe(true);
    expect(hostAllowed(u("https://api.example.com:8443/x"), ["api.example.com"])).toBe(true);
    expect(hostAllowed(u("https://api.example.com:8443/x"), ["api.example.com:443"])).toBe(false);
    expect(hostAllowed(u("https://api.example.com/x"), ["api.example.com:443"])).toBe(true);
    expect(hostAllowed(u("https://n12.example.com/x"), ["*.example.com"])).toBe(true);
    expect(hostAllowed(u("https://example.com/x"), ["*.example.com"])).toBe(false);
    expect(hostAllowed(u("https://evil-example.com/x"), ["*.example.com"])).toBe(false);
    expect(hostAllowed(u("https://api.example.com.evil.net/x"), ["api.example.com"])).toBe(false);
    expect(hostAllowed(u("https://[::1]:8443/x"), ["[::1]"])).toBe(true);
  });

  it("checks a base URL: https, on the list, no credentials, query or fragment; trailing slashes dropped", () => {
    const ok = checkBaseUrl("https://api.example.com/api/v1/", ["api.example.com"]);
    expect(ok instanceof URL && ok.href).toBe("https://api.example.com/api/v1");
    expect(checkBaseUrl("http://api.example.com/api/v1", ["api.example.com"])).toBe("base_url must be an https URL.");
    expect(typeof checkBaseUrl("https://other.example.com/", ["api.example.com"])).toBe("string");
    expect(typeof checkBaseUrl("https://k:s@api.example.com/", ["api.example.com"])).toBe("string");
    expect(typeof checkBaseUrl("https://api.example.com/?a=1", ["api.example.com"])).toBe("string");
    expect(typeof checkBaseUrl("::", ["api.example.com"])).toBe("string");
  });
});

describe("client against the local platform", () => {
  let cloud: NetcloudServer;
  const KEY = "client-test-key-99c1";
  beforeAll(async () => {
    cloud = await startNetcloudServer();
    cloud.addOrg(
      {
        id: "o-1",
        name: "One",
        networks: Array.from({ length: 7 }, (_, i) => ({ id: `N${i}`, name: `net ${i}` })),
        devices: Array.from({ length: 25 }, (_, i) => ({
          serial: `S${String(i).padStart(2, "0")}`,
          name: `d${i}`,
          networkId: `N${i % 7}`,
          model: "MX68",
          lanIp: `192.0.2.${i + 1}`,
          status: i % 5 === 0 ? "offline" : "online",
        })),
      },
      KEY,
    );
  });
  afterAll(() => cloud?.stop());
  afterEach(() => {
    cloud.linkBase = null;
  });
  const client = (o: Partial<ConstructorParameters<typeof NetcloudClient>[0]> = {}) =>
    new NetcloudClient({
      baseUrl: new URL(cloud.url),
      apiKey: KEY,
      dispatcher: netcloudAgent(cloud.cert.cert, 2000),
      timeoutMs: 2000,
      maxRetryWaitMs: 2000,
      maxRetries: 2,
      pageSize: 3,
      maxPages: 100,
      ...o,
    });

  it("follows every page of a list (perPage, startingAfter)", async () => {
    const c = client();
    const devices = await c.devices("o-1");
    expect(devices.map((d) => d.serial)).toEqual(Array.from({ length: 25 }, (_, i) => `S${String(i).padStart(2, "0")}`));
    expect(devices[3]).toEqual({ serial: "S03", name: "d3", networkId: "N3", model: "MX68", lanIp: "192.0.2.4" });
    expect(c.requests).toBe(9);
    const statuses = await c.statuses("o-1");
    expect(statuses.filter((s) => s.status === "offline").map((s) => s.serial)).toEqual(["S00", "S05", "S10", "S15", "S20"]);
    expect((await c.networks("o-1")).map((n) => n.id)).toEqual(["N0", "N1", "N2", "N3", "N4", "N5", "N6"]);
  });

  it("refuses a next link to another origin, and a list longer than maxPages", async () => {
    cloud.linkBase = "https://127.0.0.2:1";
    await expect(client().devices("o-1")).rejects.toMatchObject({ kind: "redirect_refused" });
    cloud.linkBase = null;
    await expect(client({ maxPages: 2 }).devices("o-1")).rejects.toMatchObject({ kind: "bad_response" });
  });

  it("counts every 429 attempt and waits Retry-After between them", async () => {
    const slept: number[] = [];
    const c = client({ sleep: async (ms) => void slept.push(ms) });
    cloud.rateLimit(2, "2");
    expect(await c.organizations()).toEqual([{ id: "o-1", name: "One" }]);
    expect(slept).toEqual([2000, 2000]);
    cloud.rateLimit(3, "1");
    await expect(client({ sleep: async () => undefined }).organizations()).rejects.toMatchObject({ kind: "rate_limited", status: 429 });
    cloud.rateLimit(0, "1");
  });

  it("maps a refused key, an unknown organization and an untrusted certificate; never naming the key", async () => {
    const errors: NetcloudError[] = [];
    for (const call of [
      () => client({ apiKey: "wrong" }).organizations(),
      () => client().devices("o-404"),
      () => client({ dispatcher: netcloudAgent(null, 2000) }).organizations(),
    ]) {
      errors.push(
        await call().then(
          () => {
            throw new Error("resolved");
          },
          (e: NetcloudError) => e,
        ),
      );
    }
    expect(errors.map((e) => [e.kind, e.status])).toEqual([
      ["key_refused", 401],
      ["not_found", 404],
      ["tls", null],
    ]);
    for (const e of errors) expect(`${e.message} ${e.detail} ${e.stack}`).not.toContain(KEY);
  });
});
