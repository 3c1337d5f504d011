/**
 * Trap names: a real snmptrap linkDown arrives attributed to its node; the event list names the trap (built-in table)
 * and the node; a user-added OID names a private trap; the trap-names routes' permissions, validation and 404s.
 */
import { spawnSync } from "node:child_process";
import { expectError } from "../../../test/support/assertions.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin, NodeAddresses } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { BUILTIN_TRAP_NAMES, nameOf } from "../lib/trapNames.js";
import { EventPipeline } from "../services/EventPipeline.js";

type Row = Record<string, unknown>;
const MISSING = "00000000-0000-4000-8000-000000000000";
const PRIVATE_TRAP = "1.3.6.1.4.1.99999.0.7";

let k: TestKernel;
let trapPort: number;
let folderA: string;
let nodeA: string;

function snmptrap(trapOid: string, varbinds: string[] = []): void {
  const r = spawnSync("snmptrap", ["-v2c", "-c", "public", `127.0.0.1:${trapPort}`, "", trapOid, ...varbinds], {
    encoding: "utf8",
    env: { ...process.env, MIBS: ":", MIBDIRS: "/nonexistent" },
  });
  if (r.status !== 0) throw new Error(`snmptrap failed: ${r.stderr}`);
}

async function traps(query = ""): Promise<Row[]> {
  await k.context("events").get(EventPipeline).flush();
  const res = await k.request("GET", `/events?kind=trap${query}`);
  expect(res.status).toBe(200);
  return res.body as Row[];
}

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: { pluginConfig: { events: { syslog: { udp: 0, tcp: 0, bindAddress: "127.0.0.1" }, traps: { udp: 0, bindAddress: "127.0.0.1" }, flushMs: 50 } } },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  trapPort = listeners.listeners.find((l) => l.name === "traps.udp")!.port as number;
  folderA = ((await k.request("POST", "/node-groups", { body: { name: "site-a" } })).body as Row).id as string;
  nodeA = ((await k.request("POST", "/nodes", { body: { name: "router-a", address: "127.0.0.1", group_id: folderA } })).body as Row).id as string;
  await k.context("inventory").get(NodeAddresses).reload();
});
afterAll(async () => {
  await k?.stop();
});

describe("trap names in the event list", () => {
  it("a linkDown from snmptrap is listed as IF-MIB::linkDown with the node's name", async () => {
    snmptrap("1.3.6.1.6.3.1.1.5.3", ["1.3.6.1.2.1.2.2.1.1.2", "i", "2", "1.3.6.1.2.1.2.2.1.8.2", "i", "2"]);
    let got: Row[] = [];
    await until("the trap", async () => (got = await traps()).length === 1);
    expect(got[0]).toMatchObject({ trap_oid: "1.3.6.1.6.3.1.1.5.3", trap_name: "IF-MIB::linkDown", node_id: nodeA, node_name: "router-a" });
  });

  it("a user-added OID names a private trap; renaming and deleting it changes the list", async () => {
    snmptrap(PRIVATE_TRAP);
    await until("the private trap", async () => (await traps()).length === 2);
    const unnamed = (await traps()).find((e) => e.trap_oid === PRIVATE_TRAP)!;
    expect(unnamed.trap_name).toBeNull();
    const created = await k.request("POST", "/events/trap-names", { body: { oid: PRIVATE_TRAP, name: "ACME-MIB::fanFailure", description: "A fan stopped" } });
    expect(created.status).toBe(201);
    const id = (created.body as Row).id as string;
    expect((await traps()).find((e) => e.trap_oid === PRIVATE_TRAP)!.trap_name).toBe("ACME-MIB::fanFailure");
    const list = (await k.request("GET", "/events/trap-names")).body as Row[];
    expect(list.find((r) => r.id === id)).toEqual({
      id,
      oid: PRIVATE_TRAP,
      name: "ACME-MIB::fanFailure",
      kind: "notification",
      description: "A fan stopped",
      builtin: false,
    });
    expect(list.find((r) => r.oid === "1.3.6.1.6.3.1.1.5.3")).toMatchObject({ id: null, name: "IF-MIB::linkDown", builtin: true });
    const put = await k.request("PUT", `/events/trap-names/${id}`, { body: { oid: PRIVATE_TRAP, name: "ACME-MIB::fanStopped" } });
    expect(put.status).toBe(200);
    expect((await traps()).find((e) => e.trap_oid === PRIVATE_TRAP)!.trap_name).toBe("ACME-MIB::fanStopped");
    expect((await k.request("DELETE", `/events/trap-names/${id}`)).status).toBe(204);
    expect((await traps()).find((e) => e.trap_oid === PRIVATE_TRAP)!.trap_name).toBeNull();
  });

  it("a user row with a built-in OID takes precedence", async () => {
    const res = await k.request("POST", "/events/trap-names", { body: { oid: "1.3.6.1.6.3.1.1.5.3", name: "port down" } });
    expect(res.status).toBe(201);
    expect((await traps()).find((e) => e.trap_oid === "1.3.6.1.6.3.1.1.5.3")!.trap_name).toBe("port down");
    await k.request("DELETE", `/events/trap-names/${(res.body as Row).id as string}`);
  });
});

describe("the built-in table", () => {
  it("names the common notifications, both BGP forms, and varbind objects by prefix", () => {
    const exact = new Map(BUILTIN_TRAP_NAMES.map((b) => [b.oid, b.name]));
    const objects = new Map(BUILTIN_TRAP_NAMES.filter((b) => b.kind === "object").map((b) => [b.oid, b.name]));
    expect(BUILTIN_TRAP_NAMES.filter((b) => b.kind === "notification").length).toBeGreaterThanOrEqual(40);
    expect(new Set(BUILTIN_TRAP_NAMES.map((b) => b.oid)).size).toBe(BUILTIN_TRAP_NAMES.length);
    expect(nameOf("1.3.6.1.6.3.1.1.5.4", exact, objects)).toBe("IF-MIB::linkUp");
    expect(nameOf("1.3.6.1.2.1.15.0.1", exact, objects)).toBe("BGP4-MIB::bgpEstablishedNotification");
    expect(nameOf("1.3.6.1.2.1.15.7.2", exact, objects)).toBe("BGP4-MIB::bgpBackwardTransition");
    expect(nameOf("1.3.6.1.4.1.2636.5.1.1.1.0.1", exact, objects)).toBe("BGP4-V2-MIB-JUNIPER::jnxBgpM2Established");
    expect(nameOf("1.3.6.1.2.1.14.16.2.2", exact, objects)).toBe("OSPF-MIB::ospfNbrStateChange");
    expect(nameOf("1.3.6.1.2.1.47.2.0.1", exact, objects)).toBe("ENTITY-MIB::entConfigChange");
    expect(nameOf("1.3.6.1.2.1.2.2.1.8.12", exact, objects)).toBe("IF-MIB::ifOperStatus.12");
    // A notification is matched exactly only: an OID beneath one is not named after it.
    expect(nameOf("1.3.6.1.6.3.1.1.5.3.1", exact, objects)).toBeNull();
  });
});

describe("permissions and validation of /events/trap-names", () => {
  const body = { oid: "1.3.6.1.4.1.99999.0.8", name: "ACME-MIB::psuFailure" };

  it("any role reads; operator and admin write; a viewer is 403; no token or a bad one is 401", async () => {
    expect((await k.request("GET", "/events/trap-names", { token: await k.token("viewer") })).status).toBe(200);
    expect((await k.request("GET", "/events/trap-names", { token: null })).status).toBe(401);
    expect((await k.request("GET", "/events/trap-names", { token: "bogus" })).status).toBe(401);
    expect((await k.request("POST", "/events/trap-names", { body, token: null })).status).toBe(401);
    expectError(await k.request("POST", "/events/trap-names", { body, token: await k.token("viewer") }), 403, "permission_denied");
    const op = await k.request("POST", "/events/trap-names", { body, token: await k.token("operator") });
    expect(op.status).toBe(201);
    const id = (op.body as Row).id as string;
    expectError(await k.request("POST", "/events/trap-names", { body, token: await k.token("admin") }), 409, "duplicate_oid");
    expectError(await k.request("PUT", `/events/trap-names/${id}`, { body, token: await k.token("viewer") }), 403, "permission_denied");
    expectError(await k.request("DELETE", `/events/trap-names/${id}`, { token: await k.token("viewer") }), 403, "permission_denied");
    expect((await k.request("DELETE", `/events/trap-names/${id}`, { token: await k.token("admin") })).status).toBe(204);
  });

  it("a folder-scoped account reads the names but may not write them (the names are not folder data)", async () => {
    const scoped = await k.token("operator", { folders: [folderA] });
    expect((await k.request("GET", "/events/trap-names", { token: scoped })).status).toBe(200);
    expectError(await k.request("POST", "/events/trap-names", { body, token: scoped }), 403, "scope_unsupported");
  });

  it("400 validation_failed for a bad OID, an empty name, an unknown kind or field; 404 for a missing or built-in row", async () => {
    for (const bad of [
      { ...body, oid: "not.an.oid" },
      { ...body, oid: "1" },
      { ...body, name: "" },
      { ...body, kind: "event" },
      { ...body, extra: 1 },
      { name: "x" },
    ])
      expectError(await k.request("POST", "/events/trap-names", { body: bad }), 400, "validation_failed");
    expectError(await k.request("PUT", `/events/trap-names/${MISSING}`, { body }), 404, "not_found");
    expectError(await k.request("DELETE", `/events/trap-names/${MISSING}`), 404, "not_found");
    expect((await k.request("DELETE", "/events/trap-names/not-a-uuid")).status).toBe(400);
  });
});
