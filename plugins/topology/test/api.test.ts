/**
 * The topology routes: who may call them (no token, bad token, each role, API token and session, a folder-scoped
 * account), folder scope, keyset paging, errors with stable codes, and the scoped live channel. The discovery input
 * is seeded (what walks would have read), so no agent is needed here; test/discovery.test.ts walks real ones.
 */
import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { closeAllSockets, connectSocket } from "../../../test/support/socketClient.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { topologyPlugin } from "../index.js";
import type { Observation, WalkedNode } from "../lib/mibs.js";
import { DiscoveryService } from "../services/DiscoveryService.js";

let k: TestKernel;
let folder: string;
let other: string;
const n: Record<string, string> = {};
const tokens: Record<string, string> = {};

const obs = (o: Partial<Observation> & Pick<Observation, "localPortKey" | "remoteKey">): Observation => ({
  protocol: "lldp",
  localIfindex: null,
  localPort: o.localPortKey,
  chassisId: null,
  sysName: null,
  portKey: null,
  port: null,
  mgmtAddresses: [],
  platform: null,
  ...o,
});

async function created(res: { status: number; body: unknown }): Promise<string> {
  expect(res.status).toBe(201);
  return (res.body as { id: string }).id;
}

const walked = (entries: [string, WalkedNode][]) => k.context("topology").get(DiscoveryService).apply(new Map(entries));

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, topologyPlugin],
    overrides: { pluginConfig: { topology: { seeds: { default: "127.0.1.3" } } } },
  });
  folder = await created(await k.request("POST", "/node-groups", { body: { name: "site A" } }));
  other = await created(await k.request("POST", "/node-groups", { body: { name: "site B" } }));
  n.n1 = await created(await k.request("POST", "/nodes", { body: { name: "n1", address: "127.0.1.1", group_id: folder } }));
  n.n2 = await created(await k.request("POST", "/nodes", { body: { name: "n2", address: "127.0.1.2", group_id: folder } }));
  n.n3 = await created(await k.request("POST", "/nodes", { body: { name: "n3", address: "127.0.1.3", group_id: other } }));
  // n1 sees n2 (and a phone), n2 sees n3, n3 sees something without an address.
  await walked([
    [
      n.n1,
      {
        chassisKey: null,
        sysName: "n1",
        observations: [
          obs({ localPortKey: "gi0/1", localIfindex: 1, remoteKey: "n2", sysName: "n2", mgmtAddresses: ["127.0.1.2"], portKey: "gi0/1", port: "Gi0/1" }),
          obs({ localPortKey: "gi0/2", localIfindex: 2, remoteKey: "phone", sysName: "phone-1", mgmtAddresses: ["127.0.1.50"] }),
        ],
      },
    ],
    [
      n.n2,
      { chassisKey: null, sysName: "n2", observations: [obs({ localPortKey: "gi0/2", remoteKey: "n3", mgmtAddresses: ["127.0.1.3"], portKey: "gi0/9" })] },
    ],
    [n.n3, { chassisKey: null, sysName: "n3", observations: [obs({ localPortKey: "gi0/3", remoteKey: "mystery", sysName: "mystery" })] }],
  ]);
  for (const role of ["viewer", "operator", "admin"] as const) {
    tokens[role] = await k.token(role);
    tokens[`${role}-session`] = await k.session(role);
  }
  tokens.scopedViewer = await k.session("viewer", { folders: [folder] });
  tokens.scopedOperator = await k.token("operator", { folders: [folder] });
});

afterAll(async () => {
  closeAllSockets();
  await k?.stop();
});

type Route = { name: string; method: string; path: () => string; body?: () => unknown; write: boolean };
const routes: Route[] = [
  { name: "GET /topology/links", method: "GET", path: () => "/topology/links", write: false },
  { name: "GET /topology/neighbors/unknown", method: "GET", path: () => "/topology/neighbors/unknown", write: false },
  { name: "GET /nodes/{id}/neighbors", method: "GET", path: () => `/nodes/${n.n1}/neighbors`, write: false },
  { name: "GET /nodes/{id}/upstream", method: "GET", path: () => `/nodes/${n.n1}/upstream`, write: false },
  { name: "POST /topology/discover", method: "POST", path: () => "/topology/discover", body: () => ({ node_id: n.n1 }), write: true },
  { name: "PUT /nodes/{id}/parent", method: "PUT", path: () => `/nodes/${n.n1}/parent`, body: () => ({ parent_id: n.n2 }), write: true },
  { name: "DELETE /nodes/{id}/parent", method: "DELETE", path: () => `/nodes/${n.n1}/parent`, write: true },
  {
    name: "POST /topology/neighbors/unknown/{id}/import",
    method: "POST",
    path: () => `/topology/neighbors/unknown/${randomUUID()}/import`,
    body: () => ({}),
    write: true,
  },
];

describe("topology routes: who may call them", () => {
  it.each(routes.map((r) => [r.name, r] as const))("%s", async (_name, r) => {
    const call = (token: string | null) => k.request(r.method, r.path(), { token, body: r.body?.() });
    expectError(await call(null), 401, "unauthorized");
    expectError(await call("not-a-token"), 401, "unauthorized");
    for (const who of ["viewer", "viewer-session"]) {
      const res = await call(tokens[who]);
      if (r.write) expectError(res, 403, "permission_denied");
      else expect(res.status).toBe(200);
    }
    for (const who of ["operator", "operator-session", "admin", "admin-session"]) {
      const res = await call(tokens[who]);
      // The import names an unknown id: 404 once past the permission check.
      expect(res.status).toBe(r.path().includes("/import") ? 404 : 200);
    }
  });
});

describe("topology routes: content, scope and errors", () => {
  it("lists links with both ends, paged by a keyset cursor", async () => {
    const first = await k.request("GET", "/topology/links?limit=1");
    expect(first.status).toBe(200);
    const cursor = first.headers.get("x-next-cursor");
    expect(cursor).toBeTruthy();
    const second = await k.request("GET", `/topology/links?limit=1&cursor=${cursor}`);
    expect(second.headers.get("x-next-cursor")).toBeNull();
    const links = [...(first.body as { a: { node_id: string }; b: { node_id: string } }[]), ...(second.body as typeof first.body as never[])] as {
      a: { node_id: string; node_name: string; ifindex: number | null; port: string | null };
      b: { node_id: string; node_name: string; ifindex: number | null; port: string | null };
    }[];
    const names = links.map((l) => [l.a.node_name, l.b.node_name].sort().join("-")).sort();
    expect(names).toEqual(["n1-n2", "n2-n3"]);
    const n1n2 = links.find((l) => [l.a.node_name, l.b.node_name].includes("n1"))!;
    const end = n1n2.a.node_name === "n1" ? n1n2.a : n1n2.b;
    expect(end).toEqual({ node_id: n.n1, node_name: "n1", ifindex: 1, port: "gi0/1" });
    expect((await k.request("GET", "/topology/links?state=gone")).body).toEqual([]);
  });

  it("a folder-scoped account sees only links with both ends in its folders, and 404 for nodes outside", async () => {
    const t = tokens.scopedViewer;
    const links = (await k.request("GET", "/topology/links", { token: t })).body as { a: { node_name: string }; b: { node_name: string } }[];
    expect(links.map((l) => [l.a.node_name, l.b.node_name].sort().join("-"))).toEqual(["n1-n2"]);
    const neighbors = (await k.request("GET", `/nodes/${n.n2}/neighbors`, { token: t })).body as { node_name: string }[];
    expect(neighbors.map((x) => x.node_name)).toEqual(["n1"]);
    expectError(await k.request("GET", `/nodes/${n.n3}/neighbors`, { token: t }), 404, "not_found");
    expectError(await k.request("GET", `/nodes/${n.n3}/upstream`, { token: t }), 404, "not_found");
    const unknown = (await k.request("GET", "/topology/neighbors/unknown", { token: t })).body as { sys_name: string }[];
    expect(unknown.map((u) => u.sys_name)).toEqual(["phone-1"]);
    // n1's path runs n2, then n3 (the seed, outside the scope): cut there.
    expect((await k.request("GET", `/nodes/${n.n1}/upstream`, { token: t })).body).toEqual({
      node_id: n.n1,
      pool: "default",
      parent_id: n.n2,
      via: "link",
      seed_id: null,
      path: [{ node_id: n.n2, name: "n2" }],
      truncated: true,
    });
    expect((await k.request("GET", `/nodes/${n.n1}/upstream`)).body).toMatchObject({ seed_id: n.n3, truncated: false, path: [{ name: "n2" }, { name: "n3" }] });
  });

  it("a folder-scoped operator cannot reach outside its folders", async () => {
    const t = tokens.scopedOperator;
    expectError(await k.request("PUT", `/nodes/${n.n1}/parent`, { token: t, body: { parent_id: n.n3 } }), 400, "unknown_reference");
    expectError(await k.request("PUT", `/nodes/${n.n3}/parent`, { token: t, body: { parent_id: n.n1 } }), 404, "not_found");
    expectError(await k.request("DELETE", `/nodes/${n.n3}/parent`, { token: t }), 404, "not_found");
    expectError(await k.request("POST", "/topology/discover", { token: t, body: { node_id: n.n3 } }), 404, "not_found");
    const mystery = ((await k.request("GET", "/topology/neighbors/unknown")).body as { id: string; sys_name: string }[]).find((u) => u.sys_name === "mystery")!;
    expectError(await k.request("POST", `/topology/neighbors/unknown/${mystery.id}/import`, { token: t, body: {} }), 404, "not_found");
    const all = await k.request("POST", "/topology/discover", { token: t, body: {} });
    expect(all.status).toBe(202);
    expect(all.body).toMatchObject({ queued: true, nodes: 0 });
  });

  it("answers 400 with stable codes for bad input, 404 for unknown ids", async () => {
    expectError(await k.request("GET", "/topology/links?cursor=garbage"), 400, "invalid_cursor");
    expectError(await k.request("GET", "/topology/links?state=sideways"), 400, "validation_failed");
    expectError(await k.request("GET", "/topology/links?limit=0"), 400, "validation_failed");
    expectError(await k.request("GET", "/nodes/not-a-uuid/neighbors"), 400, "validation_failed");
    expectError(await k.request("GET", `/nodes/${n.n1}/neighbors?cursor=${Buffer.from('["x","y"]').toString("base64url")}`), 400, "invalid_cursor");
    expectError(await k.request("PUT", `/nodes/${n.n1}/parent`, { body: {} }), 400, "validation_failed");
    expectError(await k.request("PUT", `/nodes/${n.n1}/parent`, { body: { parent_id: n.n2, extra: 1 } }), 400, "validation_failed");
    expectError(await k.request("PUT", `/nodes/${n.n1}/parent`, { body: { parent_id: n.n1 } }), 400, "parent_loop");
    expectError(await k.request("PUT", `/nodes/${n.n1}/parent`, { body: { parent_id: randomUUID() } }), 400, "unknown_reference");
    expectError(await k.request("POST", "/topology/discover", { body: { node_id: "nope" } }), 400, "validation_failed");
    const mystery = ((await k.request("GET", "/topology/neighbors/unknown")).body as { id: string; sys_name: string }[]).find((u) => u.sys_name === "mystery")!;
    expectError(await k.request("POST", `/topology/neighbors/unknown/${mystery.id}/import`, { body: {} }), 400, "no_address");
    expectError(await k.request("POST", `/topology/neighbors/unknown/${mystery.id}/import`, { body: { address: "not an ip" } }), 400, "no_address");
    for (const path of [`/nodes/${randomUUID()}/neighbors`, `/nodes/${randomUUID()}/upstream`]) expectError(await k.request("GET", path), 404, "not_found");
    expectError(await k.request("PUT", `/nodes/${randomUUID()}/parent`, { body: { parent_id: n.n1 } }), 404, "not_found");
    expectError(await k.request("DELETE", `/nodes/${randomUUID()}/parent`), 404, "not_found");
    expectError(await k.request("POST", "/topology/discover", { body: { node_id: randomUUID() } }), 404, "not_found");
  });

  it("discovers one node on demand (no credential: nothing to walk)", async () => {
    const res = await k.request("POST", "/topology/discover", { body: { node_id: n.n1 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ queued: false, nodes: 0, walked: 0, failed: 0, links: 0, unknown: 0, up: 0, gone: 0 });
  });

  it("a folder-scoped operator imports an unknown neighbour into the reporting node's folder", async () => {
    const phone = ((await k.request("GET", "/topology/neighbors/unknown")).body as { id: string; sys_name: string }[]).find((u) => u.sys_name === "phone-1")!;
    const res = await k.request("POST", `/topology/neighbors/unknown/${phone.id}/import`, { token: tokens.scopedOperator, body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ node_id: expect.any(String), created: true, links: 1 });
    const node = await k.request("GET", `/nodes/${(res.body as { node_id: string }).node_id}`);
    expect(node.body).toMatchObject({ name: "phone-1", address: "127.0.1.50", group_id: folder });
  });

  it("sends link changes on topology.changes only to sockets whose scope covers both ends", async () => {
    const scoped = await connectSocket(k.url, tokens.scopedViewer);
    const admin = await connectSocket(k.url, tokens.admin);
    expect(await scoped.subscribe("topology.changes")).toMatchObject({ ok: true });
    expect(await admin.subscribe("topology.changes")).toMatchObject({ ok: true });
    // A new link n3–n4 (both outside the scoped account's folders), and n1–n2 on another port (both inside).
    const n4 = await created(await k.request("POST", "/nodes", { body: { name: "n4", address: "127.0.1.4", group_id: other } }));
    await walked([[n.n3, { chassisKey: null, sysName: "n3", observations: [obs({ localPortKey: "gi0/4", remoteKey: "n4", mgmtAddresses: ["127.0.1.4"] })] }]]);
    await walked([
      [
        n.n1,
        { chassisKey: null, sysName: "n1", observations: [obs({ localPortKey: "gi0/7", remoteKey: "n2", mgmtAddresses: ["127.0.1.2"], portKey: "gi0/7" })] },
      ],
    ]);
    const up = (await admin.waitFor(
      "topology.link.up",
      (p) => (p as { a_port: string; b_port: string }).a_port === "gi0/7" || (p as { b_port: string }).b_port === "gi0/7",
    )) as {
      a_node: string;
    };
    expect([n.n1, n.n2]).toContain(up.a_node);
    expect(await admin.waitFor("topology.link.up", (p) => [(p as { a_node: string }).a_node, (p as { b_node: string }).b_node].includes(n4))).toBeTruthy();
    expect(
      await scoped.waitFor("topology.link.up", (p) => (p as { a_port: string }).a_port === "gi0/7" || (p as { b_port: string }).b_port === "gi0/7"),
    ).toBeTruthy();
    await scoped.expectNone("topology.link.up", (p) => [(p as { a_node: string }).a_node, (p as { b_node: string }).b_node].includes(n4), 300);
  });
});
