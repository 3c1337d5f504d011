/**
 * SNMPv3 traps on a remote poller: a real `nms poller` process's trap listener takes the USM users of the core's
 * traps.v3Credentials (GET /events/pollers/trap-users, keys sealed, opened with the core's secret key), forwards a v3
 * authPriv trap and a v3 inform to the core, and picks up a rotated password without a restart. A poller holding
 * another secret key takes v1/v2c traps only, and says why. What a poller forwards carries no community.
 * Needs `npm run build` (the poller runs from dist, as operators run it).
 */
import { randomBytes } from "node:crypto";
import { startRemotePoller, type RemotePollerProcess } from "../../../test/support/remotePoller.js";
import { expectError } from "../../../test/support/assertions.js";
import { removeSenderState, snmpinform, snmptrap } from "../../../test/support/trapSenders.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import type { Inbound } from "../lib/types.js";
import { forwardedRecord } from "../poller/passive.js";
import { EventPipeline } from "../services/EventPipeline.js";

type Row = Record<string, unknown>;
const PLUGINS = [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin];
const secretKey = randomBytes(32).toString("base64");
const CREDENTIAL = {
  name: "trap sender",
  kind: "snmp_v3",
  user: "pollertrap",
  security_level: "authPriv",
  auth_protocol: "SHA",
  auth_key: "pollerauthpass",
  priv_protocol: "AES",
  priv_key: "pollerprivpass",
};
const v3 = (auth: string, engine: string) => [
  "-v3",
  "-u",
  "pollertrap",
  "-l",
  "authPriv",
  "-a",
  "SHA",
  "-A",
  auth,
  "-x",
  "AES",
  "-X",
  "pollerprivpass",
  "-e",
  engine,
];

let k: TestKernel | null = null;
let credentialId = "";
const pollers: RemotePollerProcess[] = [];

beforeAll(async () => {
  // First boot: store the credential (its id is what the configuration names), then boot again with it configured.
  const first = await startTestKernel({ plugins: PLUGINS, overrides: { secretKey } });
  const created = await first.request("POST", "/credentials", { body: CREDENTIAL });
  expect(created.status).toBe(201);
  credentialId = (created.body as Row).id as string;
  const databaseUrl = first.databaseUrl!;
  await first.stop();
  k = await startTestKernel({
    plugins: PLUGINS,
    databaseUrl,
    overrides: { secretKey, pluginConfig: { events: { traps: { udp: null, v3Credentials: [credentialId], v3RefreshMs: 1000 }, flushMs: 50 } } },
  });
  await k.request("POST", "/nodes", { body: { name: "edge-v3", address: "127.0.0.1", pool: "edge" } });
});

afterAll(async () => {
  for (const p of pollers) await p.stop();
  await k?.stop();
  removeSenderState();
});

/** A poller of pool edge whose only receiver is a trap listener on a free loopback port; resolves with that port. */
async function poller(id: string, key: string): Promise<{ p: RemotePollerProcess; port: number }> {
  const p = startRemotePoller({
    coreUrl: k!.url,
    token: await k!.token("admin"),
    id,
    pool: "edge",
    plugins: ["inventory", "polling", "alerts", "events"],
    env: {
      NMS_SECRET_KEY: key,
      NMS__pluginConfig__events__syslog__udp: "null",
      NMS__pluginConfig__events__syslog__tcp: "null",
      NMS__pluginConfig__events__syslog__tls: "null",
      NMS__pluginConfig__events__traps__udp: "0",
      NMS__pluginConfig__events__traps__bindAddress: "127.0.0.1",
      NMS__pluginConfig__events__traps__communities: '["public"]',
      NMS__pluginConfig__events__traps__v3RefreshMs: "1000",
    },
  });
  pollers.push(p);
  const listeners = await until(
    `poller ${id} registered its trap listener`,
    async () => {
      const row = ((await k!.request("GET", "/pollers")).body as { id: string; listeners: string[] }[]).find((x) => x.id === id);
      return row?.listeners.length ? row.listeners : null;
    },
    30000,
    () => p.output().slice(-3000),
  );
  expect(listeners).toEqual([expect.stringMatching(/^traps\.udp:\d+$/)]);
  return { p, port: Number(listeners[0].split(":")[1]) };
}

const storedTraps = async (listener: string): Promise<Row[]> => {
  await k!.context("events").get(EventPipeline).flush();
  return ((await k!.request("GET", "/events?kind=trap&limit=1000")).body as Row[]).filter((e) => e.listener === listener);
};

it("GET /events/pollers/trap-users: ManageSystem and scope All, the keys sealed", async () => {
  const kk = k!;
  expectError(await kk.request("GET", "/events/pollers/trap-users", { token: null }), 401, "unauthorized");
  expectError(await kk.request("GET", "/events/pollers/trap-users", { token: "not-a-token" }), 401, "unauthorized");
  for (const role of ["viewer", "operator"] as const) {
    expectError(await kk.request("GET", "/events/pollers/trap-users", { token: await kk.token(role) }), 403, "permission_denied");
  }
  const folder = (await kk.request("POST", "/node-groups", { body: { name: "edge sites" } })).body as { id: string };
  expectError(await kk.request("GET", "/events/pollers/trap-users", { token: await kk.token("admin", { folders: [folder.id] }) }), 403, "scope_unsupported");
  // An admin's session reads it like the poller's API token (the route needs a permission, not a kind of caller).
  expect((await kk.request("GET", "/events/pollers/trap-users", { token: await kk.session("admin") })).status).toBe(200);
  const res = await kk.request("GET", "/events/pollers/trap-users", { token: await kk.token("admin") });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    users: [
      {
        name: "pollertrap",
        level: "authPriv",
        auth_protocol: "sha",
        auth_key_sealed: expect.stringMatching(/^sealed:v1:/),
        priv_protocol: "aes",
        priv_key_sealed: expect.stringMatching(/^sealed:v1:/),
      },
    ],
    refresh_ms: 1000,
  });
  expect(JSON.stringify(res.body)).not.toMatch(/pollerauthpass|pollerprivpass/);
});

it("a poller with the core's key takes v3 traps and informs from the core's users, and a rotated password without a restart", async () => {
  const { p, port } = await poller("edge-v3-1", secretKey);
  const target = `127.0.0.1:${port}`;
  await snmptrap([...v3("pollerauthpass", "0x8000000001020501"), target, "", "1.3.6.1.6.3.1.1.5.3", "1.3.6.1.2.1.2.2.1.1.2", "i", "2"]);
  const inform = await snmpinform([...v3("pollerauthpass", "0x8000000001020501"), "-r", "1", "-t", "3", target, "", "1.3.6.1.6.3.1.1.5.4"]);
  expect(inform.code).toBe(0);
  const stored = await until(
    "both v3 notifications at the core",
    async () => ((await storedTraps("poller:edge-v3-1/traps.udp")).length >= 2 ? storedTraps("poller:edge-v3-1/traps.udp") : null),
    20000,
    () => p.output().slice(-3000),
  );
  expect(stored.map((e) => e.trap_oid).sort()).toEqual(["1.3.6.1.6.3.1.1.5.3", "1.3.6.1.6.3.1.1.5.4"]);
  expect(stored.map((e) => [(e.data as Row).version, (e.data as Row).user])).toEqual([
    ["v3", "pollertrap"],
    ["v3", "pollertrap"],
  ]);

  // Rotate the password on the core: within traps.v3RefreshMs the poller refuses the old one and takes the new one.
  const changed = await k!.request("PUT", `/credentials/${credentialId}`, { body: { ...CREDENTIAL, auth_key: "rotatedpollerpass", priv_key: undefined } });
  expect(changed.status).toBeLessThan(300);
  await until(
    "the poller reloaded its users",
    async () => p.output().includes("v3 trap users reloaded from the core"),
    20000,
    () => p.output().slice(-3000),
  );
  await snmptrap([...v3("pollerauthpass", "0x8000000001020502"), target, "", "1.3.6.1.4.1.99.0.1"]);
  await snmptrap([...v3("rotatedpollerpass", "0x8000000001020503"), target, "", "1.3.6.1.4.1.99.0.2"]);
  const after = await until("the trap with the new password", async () => {
    const rows = await storedTraps("poller:edge-v3-1/traps.udp");
    return rows.some((e) => e.trap_oid === "1.3.6.1.4.1.99.0.2") ? rows : null;
  });
  expect(after.some((e) => e.trap_oid === "1.3.6.1.4.1.99.0.1")).toBe(false);
  expect(p.output()).not.toMatch(/pollerauthpass|rotatedpollerpass|pollerprivpass|sealed:v1:/);
});

it("a poller with another secret key takes v1/v2c traps only, and says why", async () => {
  const { p, port } = await poller("edge-v3-2", randomBytes(32).toString("base64"));
  await until(
    "the warning",
    async () => p.output().includes("v3 trap users not loaded"),
    20000,
    () => p.output().slice(-3000),
  );
  expect(p.output()).toContain("NMS_SECRET_KEY");
  const target = `127.0.0.1:${port}`;
  await snmptrap([...v3("rotatedpollerpass", "0x8000000001020504"), target, "", "1.3.6.1.4.1.99.0.3"]);
  await snmptrap(["-v2c", "-c", "public", target, "", "1.3.6.1.4.1.99.0.4"]);
  const rows = await until("the v2c trap", async () => {
    const r = await storedTraps("poller:edge-v3-2/traps.udp");
    return r.length ? r : null;
  });
  expect(rows.map((e) => e.trap_oid)).toEqual(["1.3.6.1.4.1.99.0.4"]);
});

it("a forwarded record carries neither the bytes nor a trap's community", () => {
  const m: Inbound = {
    kind: "trap",
    transport: "udp",
    listener: "traps.udp",
    source_ip: "127.0.0.1",
    received_at_ms: 0,
    syslog: null,
    trap: { version: "v2c", pdu: "trap", community: "s3cret-community", user: null, trap_oid: "1.3.6.1.4.1.99.0.5", uptime: 1, v1: null, varbinds: [] },
    raw: null,
    malformed: false,
    bytes: Buffer.from("s3cret-community"),
  };
  const record = forwardedRecord(m);
  expect(record).not.toHaveProperty("bytes");
  expect(record.trap).toMatchObject({ community: null, trap_oid: "1.3.6.1.4.1.99.0.5" });
  expect(JSON.stringify(record)).not.toContain("s3cret-community");
  expect(m.trap!.community).toBe("s3cret-community");
});
