import { createHash, randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { selfSignedCert } from "../../../test/support/httpTarget.js";
import { startIpamServer, type IpamTestServer } from "../../../test/support/ipamServer.js";
import type { TestResponse } from "../../../core/testing/index.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { ipamPlugin } from "../index.js";
import { SyncService } from "../services/SyncService.js";

const TOKEN = "ipam-sync-t0ken-9f8e7d6c5b";
const WRONG = "ipam-wrong-t0ken-1a2b3c4d";
const cert = selfSignedCert();

let k: TestKernel;
let ipam: IpamTestServer;
let other: IpamTestServer;
const answered: string[] = [];

async function call(method: string, path: string, body?: unknown, token: string | null = k.adminToken): Promise<TestResponse> {
  const res = await k.request(method, path, { body, token });
  answered.push(JSON.stringify(res.body));
  return res;
}

async function addServer(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await call("POST", "/ipam/servers", {
    name: `ipam ${randomUUID().slice(0, 8)}`,
    base_url: ipam.url,
    token: TOKEN,
    ca_cert_pem: cert.cert,
    // Synced by the tests themselves (the dispatcher only starts enabled servers).
    enabled: false,
    ...extra,
  });
  expect(res.status).toBe(201);
  return (res.body as { id: string }).id;
}

const sync = (id: string) => k.context("ipam").get(SyncService).sync(id);
const status = async (id: string) => ((await call("GET", `/ipam/servers/${id}`)).body as { status: Record<string, unknown> }).status;
const overlapKey = (lo: string, hi: string) => createHash("sha256").update(`${lo} ${hi}`).digest("hex").slice(0, 32);

interface Overlap {
  key: string;
  prefixes: string[];
  sites: { key: string; kind: string; name: string | null; site_id: string | null; folder_id: string | null; server_id: string | null }[];
  ack: { acked: boolean; note: string | null; acked_at: string | null; by: string | null; sites: string[] };
}
const overlaps = async (): Promise<Overlap[]> => {
  const res = await call("GET", "/subnet-overlaps?limit=1000");
  expect(res.status).toBe(200);
  return res.body as Overlap[];
};

async function folder(name: string, ip_ranges: string[] = []): Promise<string> {
  const res = await call("POST", "/node-groups", { name, ip_ranges });
  expect(res.status).toBe(201);
  return (res.body as { id: string }).id;
}
const folderRanges = async (id: string) => ((await call("GET", `/node-groups/${id}`)).body as { ip_ranges: string[] }).ip_ranges;

beforeAll(async () => {
  ipam = await startIpamServer({
    token: TOKEN,
    cert,
    sites: [
      { id: 1, name: "Paris" },
      { id: 2, name: "Lyon" },
      { id: 3, name: "Nice" },
    ],
    prefixes: [
      { id: 10, prefix: "10.1.0.0/16", site: 1 },
      { id: 11, prefix: "10.1.2.0/24", site: 2 },
      { id: 12, prefix: "10.3.0.0/16", site: 3 },
      { id: 13, prefix: "2001:db8:1::/48", site: 1 },
      { id: 14, prefix: "192.0.2.0/24", site: null },
    ],
  });
  other = await startIpamServer({ token: TOKEN, cert });
  k = await startTestKernel({
    plugins: [inventoryPlugin, ipamPlugin],
    overrides: { pluginConfig: { ipam: { requestTimeoutMs: 1500, pageSize: 2 } } },
  });
});

afterAll(async () => {
  await k?.stop();
  await ipam?.close();
  await other?.close();
  // The tokens never reach a response or a log line.
  const everything = [...answered, ...(k?.logs ?? [])].join("\n");
  expect(everything).not.toContain(TOKEN);
  expect(everything).not.toContain(WRONG);
});

beforeEach(() => {
  ipam.delayMs = 0;
  ipam.redirectTo = null;
  ipam.nextOrigin = null;
  ipam.token = TOKEN;
});

describe("sync", () => {
  it("pulls sites and prefixes page by page through the next links, with the token header, and stores them", async () => {
    const id = await addServer();
    ipam.requests.length = 0;
    const result = await sync(id);
    expect(result).toMatchObject({ ok: true, error_class: null, sites: 3, prefixes: 5, skipped: 0 });
    // 3 sites in pages of 2, 5 prefixes in pages of 2: offsets 0, 2 (sites) and 0, 2, 4 (prefixes).
    expect(ipam.requests.map((r) => r.path)).toEqual([
      "/api/dcim/sites/?limit=2&offset=0",
      "/api/dcim/sites/?limit=2&offset=2",
      "/api/ipam/prefixes/?limit=2&offset=0",
      "/api/ipam/prefixes/?limit=2&offset=2",
      "/api/ipam/prefixes/?limit=2&offset=4",
    ]);
    expect(ipam.requests.every((r) => r.authorization === `Token ${TOKEN}`)).toBe(true);
    expect(await status(id)).toMatchObject({
      last_error_class: null,
      site_count: 3,
      prefix_count: 5,
      last_sync_at: expect.any(String),
      last_success_at: expect.any(String),
    });
    const { rows } = await k
      .context("ipam")
      .store.query<{ prefix: string; site_id: string | null; t: string }>(
        "SELECT prefix::text AS prefix, site_id, pg_typeof(prefix)::text AS t FROM ipam.prefixes WHERE server_id = $1 ORDER BY prefix",
        [id],
      );
    expect(rows).toEqual([
      { prefix: "10.1.0.0/16", site_id: "1", t: "cidr" },
      { prefix: "10.1.2.0/24", site_id: "2", t: "cidr" },
      { prefix: "10.3.0.0/16", site_id: "3", t: "cidr" },
      { prefix: "192.0.2.0/24", site_id: null, t: "cidr" },
      { prefix: "2001:db8:1::/48", site_id: "1", t: "cidr" },
    ]);
    const sites = await call("GET", `/ipam/servers/${id}/sites`);
    expect(sites.body).toEqual([
      { site_id: "2", name: "Lyon", slug: "site-2", prefix_count: 1, folder_id: null },
      { site_id: "3", name: "Nice", slug: "site-3", prefix_count: 1, folder_id: null },
      { site_id: "1", name: "Paris", slug: "site-1", prefix_count: 2, folder_id: null },
    ]);
    // A second sync of the same data writes no prefix; a prefix that moves to another site is rewritten.
    expect(await sync(id)).toMatchObject({ ok: true, prefixes: 5 });
    expect(k.logs.filter((l) => l.includes("ipam sync done") && l.includes(id)).pop()).toContain('"changed":0');
    const moved = ipam.prefixes.find((p) => p.id === 12)!;
    moved.site = 2;
    try {
      expect(await sync(id)).toMatchObject({ ok: true, prefixes: 5 });
      expect(k.logs.filter((l) => l.includes("ipam sync done") && l.includes(id)).pop()).toContain('"changed":2');
      const site = await k.context("ipam").store.query<{ site_id: string }>("SELECT site_id FROM ipam.prefixes WHERE server_id = $1 AND ipam_id = '12'", [id]);
      expect(site.rows).toEqual([{ site_id: "2" }]);
    } finally {
      moved.site = 3;
    }
    expect((await k.context("ipam").store.query("SELECT 1 FROM ipam.prefixes WHERE server_id = $1", [id])).rowCount).toBe(5);
    await call("DELETE", `/ipam/servers/${id}`);
  });

  it("site_id_field: a prefix's custom field names its site", async () => {
    const saved = ipam.prefixes;
    ipam.prefixes = [
      { id: 1, prefix: "10.50.0.0/16", site: 1, custom_fields: { site_ref: 3 } },
      { id: 2, prefix: "10.51.0.0/16", site: null, custom_fields: { site_ref: { id: 2, name: "Lyon" } } },
      { id: 3, prefix: "10.52.0.0/16", site: 1, custom_fields: { site_ref: null } },
    ];
    try {
      const id = await addServer({ site_id_field: "site_ref" });
      expect(await sync(id)).toMatchObject({ ok: true, prefixes: 3 });
      const { rows } = await k
        .context("ipam")
        .store.query<{ prefix: string; site_id: string | null }>(
          "SELECT prefix::text AS prefix, site_id FROM ipam.prefixes WHERE server_id = $1 ORDER BY prefix",
          [id],
        );
      expect(rows).toEqual([
        { prefix: "10.50.0.0/16", site_id: "3" },
        { prefix: "10.51.0.0/16", site_id: "2" },
        { prefix: "10.52.0.0/16", site_id: null },
      ]);
      await call("DELETE", `/ipam/servers/${id}`);
    } finally {
      ipam.prefixes = saved;
    }
  });

  it("a refused token: auth_refused recorded and logged in detail, the previous data kept, no upstream text answered", async () => {
    const id = await addServer();
    expect(await sync(id)).toMatchObject({ ok: true });
    ipam.token = WRONG; // the server now refuses the stored token
    expect(await sync(id)).toMatchObject({ ok: false, error_class: "auth_refused" });
    const st = await status(id);
    expect(st).toMatchObject({ last_error_class: "auth_refused", prefix_count: 5 });
    expect(st.last_success_at).not.toBe(st.last_sync_at);
    expect((await k.context("ipam").store.query("SELECT 1 FROM ipam.prefixes WHERE server_id = $1", [id])).rowCount).toBe(5);
    const logged = k.logs.filter((l) => l.includes("ipam sync failed") && l.includes(id));
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.join("\n")).toContain("Invalid token.");
    expect(answered.join("\n")).not.toContain("Invalid token.");
    await call("DELETE", `/ipam/servers/${id}`);
  });

  it("an upstream that answers too late: timeout", async () => {
    const id = await addServer();
    ipam.delayMs = 3000;
    const t0 = Date.now();
    expect(await sync(id)).toMatchObject({ ok: false, error_class: "timeout" });
    expect(Date.now() - t0).toBeLessThan(2900);
    expect((await status(id)).last_error_class).toBe("timeout");
    await call("DELETE", `/ipam/servers/${id}`);
  });

  it("a redirect to another host is not followed (the token never goes there)", async () => {
    const id = await addServer();
    ipam.redirectTo = `${other.url}/api/dcim/sites/?limit=2&offset=0`;
    other.requests.length = 0;
    expect(await sync(id)).toMatchObject({ ok: false, error_class: "redirect" });
    expect(other.requests).toEqual([]);
    // Even a redirect to the same host is not followed.
    ipam.redirectTo = `${ipam.url}/api/dcim/sites/?limit=2&offset=0`;
    expect(await sync(id)).toMatchObject({ ok: false, error_class: "redirect" });
    await call("DELETE", `/ipam/servers/${id}`);
  });

  it("a next link on another origin is not followed", async () => {
    const id = await addServer();
    ipam.nextOrigin = other.url;
    other.requests.length = 0;
    expect(await sync(id)).toMatchObject({ ok: false, error_class: "foreign_next" });
    expect(other.requests).toEqual([]);
    await call("DELETE", `/ipam/servers/${id}`);
  });

  it("the server's self-signed certificate needs ca_cert_pem: without it, tls; cleared by PUT null, tls again", async () => {
    const id = await addServer({ ca_cert_pem: null });
    expect(await sync(id)).toMatchObject({ ok: false, error_class: "tls" });
    const name = ((await call("GET", `/ipam/servers/${id}`)).body as { name: string }).name;
    expect((await call("PUT", `/ipam/servers/${id}`, { name, base_url: ipam.url, enabled: false, ca_cert_pem: cert.cert })).status).toBe(200);
    expect(await sync(id)).toMatchObject({ ok: true });
    expect((await call("PUT", `/ipam/servers/${id}`, { name, base_url: ipam.url, enabled: false })).status).toBe(200);
    expect(await sync(id)).toMatchObject({ ok: true }); // absent keeps the CA
    expect((await call("PUT", `/ipam/servers/${id}`, { name, base_url: ipam.url, enabled: false, ca_cert_pem: null })).status).toBe(200);
    expect(await sync(id)).toMatchObject({ ok: false, error_class: "tls" });
    await call("DELETE", `/ipam/servers/${id}`);
  });

  it("an unreachable server: connect", async () => {
    const id = await addServer({ base_url: "https://127.0.0.1:1" });
    expect(await sync(id)).toMatchObject({ ok: false, error_class: "connect" });
    await call("DELETE", `/ipam/servers/${id}`);
  });

  it("POST /ipam/servers/{id}/sync runs the ipam.sync job; an enabled server is synced by the dispatcher", async () => {
    const id = await addServer();
    expect(await call("POST", `/ipam/servers/${id}/sync`)).toMatchObject({ status: 202, body: { ok: true } });
    await until("the job's sync", async () => (await status(id)).last_success_at);
    const enabled = await addServer({ enabled: true });
    await until("the dispatcher's sync", async () => (await status(enabled)).last_success_at, 45000);
    const st = await status(enabled);
    expect(Date.parse(st.next_sync_at as string)).toBeGreaterThan(Date.now() + 3000 * 1000 - 120000);
    await call("DELETE", `/ipam/servers/${id}`);
    await call("DELETE", `/ipam/servers/${enabled}`);
  }, 60000);
});

describe("site mappings and folder ranges", () => {
  it("a mapped folder's ip_ranges follow its site's prefixes (now and after each sync); discovery files by them", async () => {
    const id = await addServer();
    await sync(id);
    const paris = await folder("Paris folder", ["198.51.100.0/24"]);
    expectError(await call("PUT", `/ipam/servers/${id}/site-mappings`, { mappings: [{ site_id: "99", folder_id: paris }] }), 400, "unknown_reference");
    expectError(await call("PUT", `/ipam/servers/${id}/site-mappings`, { mappings: [{ site_id: "1", folder_id: randomUUID() }] }), 400, "unknown_reference");
    expectError(
      await call("PUT", `/ipam/servers/${id}/site-mappings`, {
        mappings: [
          { site_id: "1", folder_id: paris },
          { site_id: "1", folder_id: paris },
        ],
      }),
      400,
      "validation_failed",
    );
    expect(await folderRanges(paris)).toEqual(["198.51.100.0/24"]);
    const set = await call("PUT", `/ipam/servers/${id}/site-mappings`, { mappings: [{ site_id: "1", folder_id: paris }] });
    expect(set).toMatchObject({ status: 200, body: [{ site_id: "1", site_name: "Paris", folder_id: paris }] });
    expect(await call("GET", `/ipam/servers/${id}/site-mappings`)).toMatchObject({ status: 200, body: [{ site_id: "1", folder_id: paris }] });
    expect(await folderRanges(paris)).toEqual(["10.1.0.0/16", "2001:db8:1::/48"]);

    // The site gains a prefix upstream: the next sync brings it to the folder.
    ipam.prefixes.push({ id: 15, prefix: "10.9.0.0/16", site: 1 });
    try {
      await sync(id);
      expect(await folderRanges(paris)).toEqual(["10.1.0.0/16", "10.9.0.0/16", "2001:db8:1::/48"]);
      // Discovery filing by prefix uses them.
      const imported = await call("POST", "/discovery/import", { nodes: [{ name: "paris-sw", address: "10.9.1.1" }], file_by_prefix: true });
      expect(imported).toMatchObject({ status: 200, body: { created: 1 } });
      const nodes = await k.context("ipam").store.query<{ group_id: string }>("SELECT group_id FROM inventory.node_directory WHERE address = '10.9.1.1'");
      expect(nodes.rows[0].group_id).toBe(paris);
    } finally {
      ipam.prefixes = ipam.prefixes.filter((p) => p.id !== 15);
    }
    // An empty mapping list unmaps; the folder keeps the ranges it had.
    expect(await call("PUT", `/ipam/servers/${id}/site-mappings`, { mappings: [] })).toMatchObject({ status: 200, body: [] });
    await sync(id);
    expect(await folderRanges(paris)).toEqual(["10.1.0.0/16", "10.9.0.0/16", "2001:db8:1::/48"]);
    // Unmapped, the folder is a site of its own: its ranges now overlap the IPAM's Paris and Lyon prefixes.
    const own = (await overlaps()).find((o) => o.key === overlapKey("10.1.0.0/16", "10.1.2.0/24"));
    expect(own?.sites.map((s) => s.key)).toEqual([`folder:${paris}`, `ipam:${id}:1`, `ipam:${id}:2`]);
    await call("DELETE", `/ipam/servers/${id}`);
    const node = (await k.context("ipam").store.query<{ id: string }>("SELECT id FROM inventory.node_directory WHERE address = '10.9.1.1'")).rows[0].id;
    expect((await call("DELETE", `/nodes/${node}`)).status).toBe(204);
    expect((await call("DELETE", `/node-groups/${paris}`)).status).toBe(204);
  });
});

describe("subnet overlaps", () => {
  it("an overlap appears, is acked, and reopens when a third site joins it; a gone overlap is overlap_not_found", async () => {
    const id = await addServer({ name: "overlaps" });
    await sync(id);
    const nice = await folder("Nice branch", ["172.16.0.0/12"]);
    ipam.prefixes.push({ id: 20, prefix: "172.16.5.0/24", site: 3 });
    await sync(id);

    const key = overlapKey("10.1.0.0/16", "10.1.2.0/24");
    let list = await overlaps();
    const first = list.find((o) => o.key === key);
    expect(first).toEqual({
      key,
      prefixes: ["10.1.0.0/16", "10.1.2.0/24"],
      sites: [
        { key: `ipam:${id}:1`, kind: "ipam", server_id: id, site_id: "1", folder_id: null, name: "Paris" },
        { key: `ipam:${id}:2`, kind: "ipam", server_id: id, site_id: "2", folder_id: null, name: "Lyon" },
      ],
      ack: { acked: false, note: null, acked_at: null, by: null, sites: [] },
    });
    // A folder's own ranges are a site of their own.
    const folderKey = overlapKey("172.16.0.0/12", "172.16.5.0/24");
    expect(list.find((o) => o.key === folderKey)?.sites.map((s) => s.key)).toEqual([`folder:${nice}`, `ipam:${id}:3`]);
    // A prefix without a site takes part in nothing; prefixes of one site never overlap each other.
    expect(list.some((o) => o.prefixes.includes("192.0.2.0/24"))).toBe(false);

    expectError(await call("PUT", "/subnet-overlaps/acks", { key, note: "é".repeat(1001) }), 400, "text_too_long");
    const acked = await call("PUT", "/subnet-overlaps/acks", { key, note: "Lyon borrows from Paris on purpose" });
    expect(acked.status).toBe(200);
    expect((acked.body as Overlap).ack).toEqual({
      acked: true,
      note: "Lyon borrows from Paris on purpose",
      acked_at: expect.any(String),
      by: expect.any(String),
      sites: [`ipam:${id}:1`, `ipam:${id}:2`],
    });
    expect((await overlaps()).find((o) => o.key === key)?.ack.acked).toBe(true);
    // A sync that changes nothing keeps the key and the ack.
    await sync(id);
    expect((await overlaps()).find((o) => o.key === key)?.ack.acked).toBe(true);

    // A third site joins: Nice gets 10.1.2.0/24 as well.
    ipam.prefixes.push({ id: 21, prefix: "10.1.2.0/24", site: 3 });
    await sync(id);
    list = await overlaps();
    const reopened = list.find((o) => o.key === key)!;
    expect(reopened.sites.map((s) => s.site_id)).toEqual(["1", "2", "3"]);
    expect(reopened.ack).toMatchObject({ acked: false, note: "Lyon borrows from Paris on purpose", sites: [`ipam:${id}:1`, `ipam:${id}:2`] });
    // Acking again covers the three.
    expect(((await call("PUT", "/subnet-overlaps/acks", { key })).body as Overlap).ack).toMatchObject({ acked: true, note: null });

    // Keyset pagination by key.
    const page1 = await k.request("GET", "/subnet-overlaps?limit=1");
    const cursor = page1.headers.get("x-next-cursor");
    expect(cursor).toBeTruthy();
    const page2 = await k.request("GET", `/subnet-overlaps?limit=1&cursor=${cursor}`);
    expect((page2.body as Overlap[])[0].key > (page1.body as Overlap[])[0].key).toBe(true);
    expectError(await k.request("GET", "/subnet-overlaps?cursor=nope"), 400, "invalid_cursor");

    // The folder overlap goes away when Nice's prefix does: its key is then overlap_not_found.
    ipam.prefixes = ipam.prefixes.filter((p) => p.id !== 20 && p.id !== 21);
    await sync(id);
    expect((await overlaps()).some((o) => o.key === folderKey)).toBe(false);
    expectError(await call("PUT", "/subnet-overlaps/acks", { key: folderKey }), 404, "overlap_not_found");
    await call("DELETE", `/ipam/servers/${id}`);
    expect(await overlaps()).toEqual([]);
  });

  it("a folder mapped to a site is that site (no overlap with itself); two folders' own ranges overlap each other", async () => {
    const id = await addServer({ name: "mapped" });
    await sync(id);
    const lyon = await folder("Lyon mapped");
    expect((await call("PUT", `/ipam/servers/${id}/site-mappings`, { mappings: [{ site_id: "2", folder_id: lyon }] })).status).toBe(200);
    expect(await folderRanges(lyon)).toEqual(["10.1.2.0/24"]);
    const keys = (await overlaps()).map((o) => o.sites.map((s) => s.key).join(","));
    expect(keys.some((k2) => k2.includes(`folder:${lyon}`))).toBe(false);
    const a = await folder("Own A", ["203.0.113.0/24"]);
    const b = await folder("Own B", ["203.0.113.128/25"]);
    const both = (await overlaps()).find((o) => o.key === overlapKey("203.0.113.0/24", "203.0.113.128/25"));
    expect(both?.sites.map((s) => [s.kind, s.folder_id, s.name])).toEqual(
      [
        ["folder", a, "Own A"],
        ["folder", b, "Own B"],
      ].sort((x, y) => (`folder:${x[1]}` < `folder:${y[1]}` ? -1 : 1)),
    );
    // Deleting a mapped folder drops its mapping.
    await call("DELETE", `/node-groups/${lyon}`);
    await until("the mapping dropped", async () => ((await call("GET", `/ipam/servers/${id}/site-mappings`)).body as unknown[]).length === 0);
    await call("DELETE", `/ipam/servers/${id}`);
  });
});
