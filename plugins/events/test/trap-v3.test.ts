/**
 * SNMPv3 traps and informs through the whole service: the USM users come from inventory snmp_v3 credentials named in
 * pluginConfig.events.traps.v3Credentials (read when the listener starts, and again every traps.v3RefreshMs: a rotated
 * password applies without a restart), and a v3 authPriv trap from snmptrap is stored; an inform is acknowledged; a v2c trap with no accepted community is dropped; the engine id is kept in the data dir.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { removeSenderState, snmpinform, snmptrap } from "../../../test/support/trapSenders.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";
import { ListenerService } from "../services/ListenerService.js";

type Row = Record<string, unknown>;
const PLUGINS = [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin];
/** Both boots seal and open secrets with one key (each test kernel has its own data dir). */
const secretKey = randomBytes(32).toString("base64");

let k: TestKernel | null = null;
let credentialId = "";
afterAll(async () => {
  await k?.stop();
  removeSenderState();
});

it("takes v3 authPriv traps and informs from the users of the configured credentials; others are dropped", async () => {
  // First boot: store the credential (its id is what the configuration names), then boot again with it configured.
  k = await startTestKernel({ plugins: PLUGINS, overrides: { secretKey } });
  const created = await k.request("POST", "/credentials", {
    body: {
      name: "trap sender",
      kind: "snmp_v3",
      user: "trapuser",
      security_level: "authPriv",
      auth_protocol: "SHA",
      auth_key: "trapauthpass",
      priv_protocol: "AES",
      priv_key: "trapprivpass",
    },
  });
  expect(created.status).toBe(201);
  credentialId = (created.body as Row).id as string;
  const databaseUrl = k.databaseUrl!;
  await k.stop();
  k = null;
  const boot = () =>
    startTestKernel({
      plugins: PLUGINS,
      databaseUrl,
      overrides: {
        secretKey,
        pluginConfig: { events: { traps: { udp: 0, bindAddress: "127.0.0.1", communities: [], v3Credentials: [credentialId] }, flushMs: 50 } },
      },
    });
  k = await boot();
  const listener = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "traps.udp")!;
  const target = `127.0.0.1:${listener.port as number}`;
  const v3 = ["-v3", "-u", "trapuser", "-l", "authPriv", "-a", "SHA", "-A", "trapauthpass", "-x", "AES", "-X", "trapprivpass"];
  await snmptrap([...v3, "-e", "0x8000000001020304", target, "", "1.3.6.1.6.3.1.1.5.3", "1.3.6.1.2.1.2.2.1.1.2", "i", "2"]);
  const inform = await snmpinform([...v3, "-r", "1", "-t", "3", target, "", "1.3.6.1.6.3.1.1.5.4", "1.3.6.1.2.1.2.2.1.1.2", "i", "2"]);
  expect(inform.code).toBe(0);
  // A v2c trap: no community is accepted here.
  await snmptrap(["-v2c", "-c", "public", target, "", "1.3.6.1.6.3.1.1.5.3"]);
  const pipeline = k.context("events").get(EventPipeline);
  const stored = await until("both v3 notifications", async () => {
    await pipeline.flush();
    const rows = (await k!.request("GET", "/events?kind=trap")).body as Row[];
    return rows.length >= 2 ? rows : null;
  });
  expect(stored.map((e) => e.trap_oid).sort()).toEqual(["1.3.6.1.6.3.1.1.5.3", "1.3.6.1.6.3.1.1.5.4"]);
  expect(stored.map((e) => (e.data as Row).version)).toEqual(["v3", "v3"]);
  expect(stored.map((e) => (e.data as Row).user)).toEqual(["trapuser", "trapuser"]);
  const after = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "traps.udp")!;
  expect((after.counters as Row).dropped).toBeGreaterThanOrEqual(1);
  const engineId = readFileSync(join(k.dataDir, "events-trap-engine-id"), "utf8");
  expect(engineId.trim()).toMatch(/^80001f8805/);
});

it("takes a rotated password without a restart: the old one is refused, the new one accepted", async () => {
  const kk = k!;
  const listener = ((await kk.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "traps.udp")!;
  const target = `127.0.0.1:${listener.port as number}`;
  const v3 = (auth: string) => [
    "-v3",
    "-u",
    "trapuser",
    "-l",
    "authPriv",
    "-a",
    "SHA",
    "-A",
    auth,
    "-x",
    "AES",
    "-X",
    "trapprivpass",
    "-e",
    "0x8000000001020399",
  ];
  const changed = await kk.request("PUT", `/credentials/${credentialId}`, {
    body: {
      name: "trap sender",
      kind: "snmp_v3",
      user: "trapuser",
      security_level: "authPriv",
      auth_protocol: "SHA",
      auth_key: "rotatedauthpass",
      priv_protocol: "AES",
    },
  });
  expect(changed.status).toBeLessThan(300);
  const service = kk.context("events").get(ListenerService);
  expect(await service.refreshTrapUsers()).toBe(true);
  expect(await service.refreshTrapUsers()).toBe(false); // nothing changed since
  const pipeline = kk.context("events").get(EventPipeline);
  const count = async (oid: string) => {
    await pipeline.flush();
    return ((await kk.request("GET", "/events?kind=trap&limit=1000")).body as Row[]).filter((e) => e.trap_oid === oid).length;
  };
  const dropped = async () =>
    (((await kk.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "traps.udp")!.counters as Row).dropped as number;
  const before = await dropped();
  await snmptrap([...v3("trapauthpass"), target, "", "1.3.6.1.4.1.99999.0.1"]);
  await until("the old password refused", async () => ((await dropped()) > before ? true : null));
  await snmptrap([...v3("rotatedauthpass"), target, "", "1.3.6.1.4.1.99999.0.2"]);
  await until("the new password accepted", async () => ((await count("1.3.6.1.4.1.99999.0.2")) === 1 ? true : null));
  expect(await count("1.3.6.1.4.1.99999.0.1")).toBe(0);
});
