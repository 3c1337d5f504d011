/**
 * Which nodes discovery walks: pluginConfig.topology.profiles names the device profiles (by name, any case, or id; a
 * profile beneath one named counts); nodes of other profiles, and nodes without a credential, are never walked — on
 * demand or on the schedule.
 */
import { inventoryPlugin } from "../../inventory/index.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { topologyPlugin } from "../index.js";
import { DiscoveryService } from "../services/DiscoveryService.js";

let k: TestKernel;
const ids: Record<string, string> = {};

async function post(path: string, body: unknown): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, topologyPlugin],
    // Nothing answers SNMP here: a walk fails fast, and what matters is which nodes are tried.
    overrides: { pluginConfig: { topology: { schedule: false, profiles: ["SWITCHES"], timeoutMs: 100, retries: 0 } } },
  });
  const switches = await post("/profiles", { name: "Switches" });
  const access = await post("/profiles", { name: "Access switches", parent_id: switches });
  const phones = await post("/profiles", { name: "Phones" });
  const cred = await post("/credentials", { name: "v2c", kind: "snmp_v2c", community: "public" });
  const node = (name: string, address: string, extra: object) => post("/nodes", { name, address, snmp_port: 9, ...extra });
  ids.core = await node("core", "127.0.0.61", { profile_id: switches, credential_id: cred });
  ids.access = await node("access", "127.0.0.62", { profile_id: access, credential_id: cred });
  ids.phone = await node("phone", "127.0.0.63", { profile_id: phones, credential_id: cred });
  ids.bare = await node("bare", "127.0.0.64", { credential_id: cred });
  ids.noCred = await node("no-cred", "127.0.0.65", { profile_id: switches });
});

afterAll(async () => {
  await k?.stop();
});

const discovery = () => k.context("topology").get(DiscoveryService);

describe("the profiles discovery walks", () => {
  it("walks the nodes of a named profile and of the profiles beneath it, with a credential, and no other", async () => {
    expect(await discovery().discover(null, "All")).toMatchObject({ nodes: 2, walked: 0, failed: 2 });
    const all = await k.request("POST", "/topology/discover", { body: {} });
    expect(all.status).toBe(202);
    expect(all.body).toMatchObject({ queued: true, nodes: 2 });
  });

  it("does not walk a node of another profile named on demand", async () => {
    expect(await discovery().discover([ids.phone], "All")).toMatchObject({ nodes: 0, walked: 0, failed: 0 });
    expect(await discovery().discover([ids.access], "All")).toMatchObject({ nodes: 1, failed: 1 });
  });

  it("the scheduled run picks only walkable nodes", async () => {
    // The two walkable nodes were walked above (failed walks count as walks); make them due again.
    await k.kernel.store.query("UPDATE topology.node_identity SET polled_at = now() - interval '1 day'");
    expect(await discovery().runDue()).toMatchObject({ nodes: 2 });
  });
});
