/**
 * Trap forwarding against Net-SNMP: snmptrap sends to our trap receiver, the tee relays to snmptrapd — verbatim
 * (the original datagram, its own community) or re-encoded as v2c with the destination's community and the
 * original source in snmpTrapAddress.0. The community is a secret: never answered.
 */
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { removeSenderState, snmptrap, startSnmptrapd, type Snmptrapd } from "../../../test/support/trapSenders.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";

type Row = Record<string, unknown>;

let k: TestKernel;
let trapPort: number;
let plain: Snmptrapd;
let relayOnly: Snmptrapd;

async function createDestination(body: Row): Promise<string> {
  const res = await k.request("POST", "/forwarding/destinations", { body: { source_kind: "trap", dest_kind: "snmp_trap_udp", ...body } });
  if (res.status !== 201) throw new Error(`create destination: ${res.status} ${JSON.stringify(res.body)}`);
  await k.context("forwarding").get(ForwardingTee).reload();
  return (res.body as { id: string }).id;
}

/** A v2c linkDown with ifIndex, ifDescr and a Counter64, from our loopback sender to our trap receiver. */
const sendLinkDown = (tag: string) =>
  snmptrap([
    "-v",
    "2c",
    "-c",
    "public",
    `127.0.0.1:${trapPort}`,
    "4242",
    "1.3.6.1.6.3.1.1.5.3",
    "1.3.6.1.2.1.2.2.1.1.7",
    "i",
    "7",
    "1.3.6.1.2.1.2.2.1.2.7",
    "s",
    tag,
    "1.3.6.1.2.1.31.1.1.1.6.7",
    "C",
    "12345678901234",
  ]);

beforeAll(async () => {
  [plain, relayOnly] = await Promise.all([startSnmptrapd(["public"]), startSnmptrapd(["relay-community"])]);
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: null, tcp: null, tls: null }, traps: { udp: 0, bindAddress: "127.0.0.1" }, flushMs: 50 },
        flows: { udp: null },
      },
    },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  trapPort = listeners.listeners.find((l) => l.name === "traps.udp")!.port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
  await Promise.all([plain?.stop(), relayOnly?.stop()]);
  removeSenderState();
});

it("relays the datagram verbatim: snmptrapd accepts it with the sender's own community", async () => {
  const id = await createDestination({ name: "traps-verbatim", target: `127.0.0.1:${plain.port}` });
  const tag = `verbatim-${Date.now()}`;
  await sendLinkDown(tag);
  const line = await until(
    "snmptrapd logged it",
    async () => plain.traps().find((l) => l.includes(tag)),
    15_000,
    () => plain.output(),
  );
  expect(line).toContain(".1.3.6.1.6.3.1.1.4.1.0 = OID: .1.3.6.1.6.3.1.1.5.3");
  expect(line).toContain(".1.3.6.1.2.1.1.3.0 = Timeticks: (4242)");
  expect(line).toContain(".1.3.6.1.2.1.31.1.1.1.6.7 = Counter64: 12345678901234");
  expect((await k.request("GET", `/forwarding/destinations/${id}/status`)).body).toMatchObject({ forwarded: 1, send_errors: 0 });
  expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBeLessThan(300);
});

it("re-encodes as v2c with the destination's community and the original source in snmpTrapAddress.0", async () => {
  const id = await createDestination({ name: "traps-reencoded", target: `127.0.0.1:${relayOnly.port}`, verbatim: false, community: "relay-community" });
  const view = await k.request("GET", `/forwarding/destinations/${id}`);
  expect(JSON.stringify(view.body)).not.toContain("relay-community");
  const tag = `reencoded-${Date.now()}`;
  await sendLinkDown(tag);
  const line = await until(
    "snmptrapd logged it",
    async () => relayOnly.traps().find((l) => l.includes(tag)),
    15_000,
    () => relayOnly.output(),
  );
  expect(line).toContain(".1.3.6.1.6.3.1.1.4.1.0 = OID: .1.3.6.1.6.3.1.1.5.3");
  expect(line).toContain(".1.3.6.1.2.1.1.3.0 = Timeticks: (4242)");
  expect(line).toContain(".1.3.6.1.2.1.2.2.1.1.7 = INTEGER: 7");
  expect(line).toContain(`.1.3.6.1.2.1.2.2.1.2.7 = STRING: "${tag}"`);
  expect(line).toContain(".1.3.6.1.2.1.31.1.1.1.6.7 = Counter64: 12345678901234");
  expect(line).toContain(".1.3.6.1.6.3.18.1.3.0 = IpAddress: 127.0.0.1");
  // The collector that only knows the relay's community took nothing the sender's "public" carried verbatim.
  expect(relayOnly.traps().some((l) => l.includes("verbatim-"))).toBe(false);
  expect((await k.request("GET", `/forwarding/destinations/${id}/status`)).body).toMatchObject({ forwarded: 1, send_errors: 0 });
  for (const l of k.logs) expect(l).not.toContain("relay-community");
});
