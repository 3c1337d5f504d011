/**
 * Link discovery against real SNMP agents: snmpsim serving the test network (a core, two distribution switches, six
 * access devices and an IP phone that is no node) with LLDP-MIB and CISCO-CDP-MIB tables, each device at its own
 * loopback address.
 */
import { jest } from "@jest/globals";
import { closeAllSockets, connectSocket } from "../../../test/support/socketClient.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { startNetworkAgent, testNetwork, type NetworkAgent, type TopoDevice } from "../../../test/support/topologyNetwork.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { topologyPlugin } from "../index.js";
import { DiscoveryService } from "../services/DiscoveryService.js";

jest.setTimeout(120000);

type Link = {
  id: string;
  a: { node_id: string; node_name: string; ifindex: number | null; port: string | null };
  b: { node_id: string; node_name: string; ifindex: number | null; port: string | null };
  protocols: string[];
  resolved_by: string;
  state: string;
};

let k: TestKernel;
let agent: NetworkAgent;
const network = testNetwork();
const ids = new Map<string, string>();

async function post(path: string, body: unknown): Promise<{ id: string }> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string };
}

const discovery = () => k.context("topology").get(DiscoveryService);

async function allLinks(state?: string): Promise<Link[]> {
  const res = await k.request("GET", `/topology/links?limit=1000${state ? `&state=${state}` : ""}`);
  expect(res.status).toBe(200);
  return res.body as Link[];
}

const pair = (l: Link) => [l.a.node_name, l.b.node_name].sort().join("-");
const between = (links: Link[], x: string, y: string) => links.filter((l) => pair(l) === [x, y].sort().join("-"));

beforeAll(async () => {
  agent = await startNetworkAgent(network);
  k = await startTestKernel({
    plugins: [inventoryPlugin, topologyPlugin],
    overrides: { pluginConfig: { topology: { seeds: { default: "127.0.0.21" }, goneAfterPolls: 3, timeoutMs: 1000, retries: 1 } } },
  });
  for (const d of network) {
    const cred = await post("/credentials", { name: `v2c ${d.key}`, kind: "snmp_v2c", community: d.key });
    const node = await post("/nodes", { name: d.sysName, address: d.address, credential_id: cred.id, snmp_port: agent.port });
    ids.set(d.key, node.id);
  }
});

afterAll(async () => {
  closeAllSockets();
  await k?.stop();
  await agent?.stop();
});

describe("topology discovery (snmpsim)", () => {
  it("finds the eight links, resolving neighbours by address, chassis id and sysName, and keeps the phone as an unknown neighbour", async () => {
    const summary = await discovery().discover(null, "All");
    expect(summary).toMatchObject({ nodes: 9, walked: 9, failed: 0 });
    const links = await allLinks();
    expect(links.map(pair).sort()).toEqual(["acc1-dist1", "acc2-dist1", "acc3-dist1", "acc4-dist2", "acc5-dist2", "acc6-dist2", "core-dist1", "core-dist2"]);
    expect(links.every((l) => l.state === "up")).toBe(true);
    // Reported from both sides (LLDP with addresses): one link, both ends' interfaces.
    const [cd1] = between(links, "core", "dist1");
    const end = (l: Link, name: string) => (l.a.node_name === name ? l.a : l.b);
    expect(end(cd1, "core")).toMatchObject({ ifindex: 1, port: "Gi0/1" });
    expect(end(cd1, "dist1")).toMatchObject({ ifindex: 1, port: "Gi0/1" });
    expect(cd1).toMatchObject({ protocols: ["lldp"], resolved_by: "address" });
    const [cd2] = between(links, "core", "dist2");
    expect(cd2.resolved_by).toBe("chassis_id");
    expect(end(cd2, "core")).toMatchObject({ ifindex: 2, port: "Gi0/2" });
    expect(end(cd2, "dist2")).toMatchObject({ ifindex: 1, port: "Gi0/1" });
    expect(between(links, "dist1", "acc1")[0]).toMatchObject({ protocols: ["cdp"], resolved_by: "sys_name" });
    const [a2] = between(links, "dist1", "acc2");
    expect(a2).toMatchObject({ protocols: ["cdp"], resolved_by: "address" });
    expect(end(a2, "acc2")).toMatchObject({ ifindex: 1 });
    expect(end(a2, "dist1")).toMatchObject({ ifindex: 3, port: "Gi0/3" });
    expect(between(links, "dist1", "acc3")[0].resolved_by).toBe("chassis_id");
    expect(between(links, "dist2", "acc4")[0]).toMatchObject({ protocols: ["cdp"], resolved_by: "address" });
    expect(between(links, "dist2", "acc6")[0].resolved_by).toBe("sys_name");

    const unknown = await k.request("GET", "/topology/neighbors/unknown");
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual([
      expect.objectContaining({
        seen_by: { node_id: ids.get("dist2"), node_name: "dist2" },
        protocol: "lldp",
        local_ifindex: 5,
        local_port: "Gi0/5",
        chassis_id: "aa:bb:cc:00:00:99",
        sys_name: "ip-phone-99",
        port: "port 1",
        mgmt_addresses: ["127.0.0.99"],
        state: "up",
      }),
    ]);

    const n = await k.request("GET", `/nodes/${ids.get("dist1")}/neighbors`);
    expect(n.status).toBe(200);
    expect((n.body as { node_name: string }[]).map((x) => x.node_name).sort()).toEqual(["acc1", "acc2", "acc3", "core"]);
    expect((n.body as { node_name: string; local_port: string }[]).find((x) => x.node_name === "core")).toMatchObject({
      local_port: "Gi0/1",
      local_ifindex: 1,
      remote_port: "Gi0/1",
      remote_ifindex: 1,
    });
  });

  it("a second run changes nothing (no new links, none gone)", async () => {
    const before = (await allLinks()).map((l) => l.id).sort();
    const summary = await discovery().discover(null, "All");
    expect(summary).toMatchObject({ walked: 9, up: 0, gone: 0, links: 11 });
    expect((await allLinks()).map((l) => l.id).sort()).toEqual(before);
  });

  it("computes upstream paths from the pool's seed (the core, by address), and a pinned parent wins", async () => {
    const up = async (key: string) => (await k.request("GET", `/nodes/${ids.get(key)}/upstream`)).body as Record<string, unknown>;
    expect(await up("core")).toMatchObject({ via: "seed", parent_id: null, path: [], seed_id: ids.get("core"), pool: "default" });
    expect(await up("acc5")).toMatchObject({
      via: "link",
      parent_id: ids.get("dist2"),
      path: [
        { node_id: ids.get("dist2"), name: "dist2" },
        { node_id: ids.get("core"), name: "core" },
      ],
      truncated: false,
    });
    const pinned = await k.request("PUT", `/nodes/${ids.get("acc6")}/parent`, { body: { parent_id: ids.get("dist1") } });
    expect(pinned.status).toBe(200);
    expect(pinned.body).toMatchObject({ via: "pin", parent_id: ids.get("dist1"), path: [{ name: "dist1" }, { name: "core" }] });
    // The contract token for the alerts plugin says the same.
    const { Upstream } = await import("../contract.js");
    const token = k.context("topology").get(Upstream);
    expect(await token.parentOf(ids.get("acc6")!)).toBe(ids.get("dist1"));
    expect(await token.pathOf(ids.get("acc6")!)).toEqual([ids.get("dist1"), ids.get("core")]);
    // A pin that makes a loop is refused.
    const loop = await k.request("PUT", `/nodes/${ids.get("dist1")}/parent`, { body: { parent_id: ids.get("acc6") } });
    expect(loop.status).toBe(400);
    expect((loop.body as { error: { code: string } }).error.code).toBe("parent_loop");
    const unpinned = await k.request("DELETE", `/nodes/${ids.get("acc6")}/parent`);
    expect(unpinned.body).toMatchObject({ via: "link", parent_id: ids.get("dist2") });
  });

  it("imports the unknown neighbour as a node, and its neighbour entry becomes a link", async () => {
    const [phone] = (await k.request("GET", "/topology/neighbors/unknown")).body as { id: string }[];
    const res = await k.request("POST", `/topology/neighbors/unknown/${phone.id}/import`, { body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ node_id: expect.any(String), created: true, links: 1 });
    const node = await k.request("GET", `/nodes/${(res.body as { node_id: string }).node_id}`);
    expect(node.body).toMatchObject({ name: "ip-phone-99", address: "127.0.0.99" });
    expect((await k.request("GET", "/topology/neighbors/unknown")).body).toEqual([]);
    expect(between(await allLinks(), "dist2", "ip-phone-99")).toEqual([expect.objectContaining({ resolved_by: "address", state: "up" })]);
    // Nothing answers at 127.0.0.99: the phone is walked by no run below (its credential is dist2's, its agent silent).
    await k.request("DELETE", `/nodes/${(res.body as { node_id: string }).node_id}`);
  });

  it("marks a link gone after goneAfterPolls polls that did not see it, keeps its row, and says so on topology.changes", async () => {
    const socket = await connectSocket(k.url, k.adminToken);
    expect(await socket.subscribe("topology.changes")).toMatchObject({ ok: true });
    const dist2 = network.find((d) => d.key === "dist2")!;
    const without: TopoDevice = { ...dist2, lldp: dist2.lldp.filter((n) => n.sysName !== "acc5") };
    await agent.update(without);
    const d2 = ids.get("dist2")!;
    const state = async () => between(await allLinks(), "dist2", "acc5")[0]?.state;
    for (let poll = 1; poll <= 2; poll++) {
      expect(await discovery().discover([d2], "All")).toMatchObject({ walked: 1, gone: 0 });
      expect(await state()).toBe("up");
    }
    expect(await discovery().discover([d2], "All")).toMatchObject({ walked: 1, gone: 1 });
    expect(await state()).toBe("gone");
    const gone = await allLinks("gone");
    expect(gone.map(pair)).toEqual(["acc5-dist2"]);
    expect(await socket.waitFor("topology.link.gone")).toMatchObject({ id: gone[0].id, protocols: ["lldp"] });
    // Its upstream follows: acc5 is no longer linked to the seed.
    expect((await k.request("GET", `/nodes/${ids.get("acc5")}/upstream`)).body).toMatchObject({ via: "none", path: [] });

    // The link comes back as soon as it is seen again.
    await agent.update(dist2);
    expect(await discovery().discover([d2], "All")).toMatchObject({ up: 1 });
    expect(await socket.waitFor("topology.link.up", (p) => (p as { id: string }).id === gone[0].id)).toBeTruthy();
    expect(await state()).toBe("up");
  });

  it("a silent agent proves nothing: its links keep their state", async () => {
    const before = await allLinks();
    await agent.stop();
    const summary = await discovery().discover([ids.get("dist1")!], "All");
    expect(summary).toMatchObject({ walked: 0, failed: 1 });
    expect((await allLinks()).map((l) => [l.id, l.state])).toEqual(before.map((l) => [l.id, l.state]));
  });
});
