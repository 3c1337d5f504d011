import { selfSignedCert } from "../../../test/support/httpTarget.js";
import { startIpamServer, type IpamTestServer } from "../../../test/support/ipamServer.js";
import { IpamClient, IpamSyncError, prefixSiteId, type IpamClientOptions } from "../lib/ipamClient.js";
import { apiUrl, baseUrlProblem, originKey } from "../lib/origin.js";

const TOKEN = "client-t0ken-77aa";
const cert = selfSignedCert();
let ipam: IpamTestServer;

beforeAll(async () => {
  ipam = await startIpamServer({
    token: TOKEN,
    cert,
    sites: [{ id: 1, name: "A" }],
    prefixes: Array.from({ length: 7 }, (_, i) => ({ id: i + 1, prefix: `10.0.${i}.0/24`, site: 1 })),
  });
});
afterAll(async () => ipam?.close());

const client = (extra: Partial<IpamClientOptions> = {}) =>
  new IpamClient({
    baseUrl: ipam.url,
    token: TOKEN,
    caCertPem: cert.cert,
    timeoutMs: 2000,
    pageSize: 3,
    maxObjects: 1000,
    maxResponseBytes: 1 << 20,
    ...extra,
  });

async function failure(fn: () => Promise<unknown>): Promise<IpamSyncError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(IpamSyncError);
    return err as IpamSyncError;
  }
  throw new Error("expected a failure");
}

describe("IpamClient", () => {
  it("reads every page, stopping at a null next", async () => {
    const c = client();
    try {
      const prefixes = await c.prefixes(null);
      expect(prefixes.map((p) => p.prefix)).toEqual(Array.from({ length: 7 }, (_, i) => `10.0.${i}.0/24`));
      expect(prefixes.every((p) => p.site_id === "1")).toBe(true);
    } finally {
      await c.close();
    }
  });

  it("too_many_objects past maxObjects; bad_response past maxResponseBytes; the message never holds the token", async () => {
    const c = client({ maxObjects: 5 });
    const e = await failure(() => c.prefixes(null));
    expect(e.errorClass).toBe("too_many_objects");
    await c.close();
    const small = client({ maxResponseBytes: 200, pageSize: 100 });
    const big = await failure(() => small.prefixes(null));
    expect(big.errorClass).toBe("bad_response");
    await small.close();
    for (const err of [e, big]) expect(`${err.message} ${err.detail}`).not.toContain(TOKEN);
  });

  it("http_status for a non-2xx answer that is not an auth refusal (a base path the server does not serve)", async () => {
    const c = client({ baseUrl: `${ipam.url}/nothing-here` });
    const e = await failure(() => c.sites());
    expect({ cls: e.errorClass, status: e.status }).toEqual({ cls: "http_status", status: 404 });
    expect(e.detail).not.toContain(TOKEN);
    await c.close();
  });
});

describe("prefixSiteId", () => {
  it("reads site, scope (dcim.site) or the custom field", () => {
    expect(prefixSiteId({ site: { id: 4 } }, null)).toBe("4");
    expect(prefixSiteId({ site: null, scope_type: "dcim.site", scope_id: 9, scope: { id: 9 } }, null)).toBe("9");
    expect(prefixSiteId({ site: null, scope_type: "dcim.region", scope_id: 9 }, null)).toBeNull();
    expect(prefixSiteId({ site: { id: 4 }, custom_fields: { ref: "x-7" } }, "ref")).toBe("x-7");
    expect(prefixSiteId({ site: { id: 4 }, custom_fields: {} }, "ref")).toBeNull();
    expect(prefixSiteId({ site: { id: 4 } }, "ref")).toBeNull();
  });
});

describe("origin rules", () => {
  it("https only, no credentials, query or fragment; origin keys spell the default port", () => {
    expect(baseUrlProblem("https://ipam.example.net/netbox")).toBeNull();
    expect(baseUrlProblem("http://ipam.example.net")).toMatch(/https/);
    expect(baseUrlProblem("https://a:b@ipam.example.net")).toMatch(/user/);
    expect(baseUrlProblem("https://ipam.example.net/#x")).toMatch(/fragment/);
    expect(originKey("https://IPAM.example.net/x")).toBe("https://ipam.example.net:443");
    expect(originKey("https://ipam.example.net:8443")).toBe("https://ipam.example.net:8443");
    expect(apiUrl("https://h/netbox/", "/api/ipam/prefixes/").toString()).toBe("https://h/netbox/api/ipam/prefixes/");
  });
});
