/**
 * The relay port (config `relay`): datagrams it receives go, byte for byte, to the destinations the UDP fast path relays
 * to, from its reader threads, and are neither parsed nor stored; a destination with a filter gets none of them. The
 * destination's counters and GET /listeners count them. (Off by default: tee-fastpath.test.ts lists it unbound.)
 */
import { createSocket, type Socket } from "node:dgram";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { UdpRelay } from "../services/UdpRelay.js";
import { sendUdp, udpSenders } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";

type Row = Record<string, unknown>;

let k: TestKernel;
let relayPort: number;
let syslogPort: number;
const sinks: Socket[] = [];

/** A UDP socket in the test that keeps every datagram it gets. */
async function sink(): Promise<{ port: number; got: Buffer[] }> {
  const s = createSocket("udp4");
  sinks.push(s);
  const got: Buffer[] = [];
  s.on("message", (m) => got.push(m));
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  return { port: s.address().port, got };
}

const listener = async (name: string) => ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === name)!;
const create = async (body: Row) => {
  const res = await k.request("POST", "/forwarding/destinations", { body: { dest_kind: "syslog_udp", source_kind: "syslog", ...body } });
  expect(res.status).toBe(201);
  return (res.body as { id: string }).id;
};

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: null },
        forwarding: { relay: { udp: 0, bindAddress: "127.0.0.1", sockets: 2 } },
      },
    },
  });
  relayPort = (await listener("relay.udp")).port as number;
  syslogPort = (await listener("syslog.udp")).port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
  for (const s of sinks) s.close();
});

it("relays what the relay port receives, unchanged, to the fast-path destinations only, and stores none of it", async () => {
  expect(await listener("relay.udp")).toMatchObject({ plugin: "forwarding", stream: "syslog", protocol: "udp", address: "127.0.0.1" });
  const fast = await sink();
  const filtered = await sink();
  const fastId = await create({ name: "relay-fast", target: `127.0.0.1:${fast.port}` });
  const filteredId = await create({
    name: "relay-filtered",
    target: `127.0.0.1:${filtered.port}`,
    filter: { mode: "all", conditions: [{ field: "severity", op: "lte", value: "7" }] },
  });
  await k.context("forwarding").get(ForwardingTee).reload();
  const relay = k.context("forwarding").get(UdpRelay);
  // The default: each datagram to one of the two sockets at random (the batched socket runs on this machine kind).
  expect(relay.spread).toBe(true);
  await until("the relay's readers mirror it", async () => (relay.counts().has(fastId) ? true : null));

  const tag = `rp-${Date.now()}`;
  // From 8 source ports, so the kernel spreads them over both sockets; one of them is not text at all.
  const messages = Array.from({ length: 40 }, (_, i) => Buffer.from(`<13>Nov 30 01:00:00 edge app: ${tag} ${i}`));
  messages.push(Buffer.from([0, 255, 1, 254, 0x80]), Buffer.alloc(1400, 0x61));
  const senders = await udpSenders(8);
  for (const [i, m] of messages.entries()) await senders[i % 8].send(relayPort, m);
  for (const s of senders) s.close();
  await until("every datagram relayed", async () => (fast.got.length >= messages.length ? true : null));
  const key = (b: Buffer) => b.toString("base64");
  expect(fast.got.map(key).sort()).toEqual(messages.map(key).sort());

  const s = await until("the counters", async () => {
    const st = (await k.request("GET", `/forwarding/destinations/${fastId}/status`)).body as Row;
    return st.forwarded === messages.length ? st : null;
  });
  expect(s).toMatchObject({ send_errors: 0, dropped_filter: 0 });
  await until("the relay port's count", async () => ((await listener("relay.udp")).counters as Row).received === messages.length || null);

  // A control message through the events listener is stored; none of the relayed ones is, and the filtered destination got only the control.
  await sendUdp(syslogPort, `<13>Nov 30 01:00:00 edge app: ${tag} control`);
  await until("the control stored", async () => (((await k.request("GET", `/events?q=${tag}`)).body as Row[]).length > 0 ? true : null));
  const stored = (await k.request("GET", `/events?q=${tag}`)).body as Row[];
  expect(stored.map((e) => e.message)).toEqual([expect.stringContaining("control")]);
  await until("the control teed to the filtered destination", async () => (filtered.got.length > 0 ? true : null));
  expect(filtered.got.map((b) => b.toString())).toEqual([`<13>Nov 30 01:00:00 edge app: ${tag} control`]);
  expect(((await k.request("GET", `/forwarding/destinations/${filteredId}/status`)).body as Row).forwarded).toBe(1);

  // Deleted: the relay port stops sending to it (and still counts what it reads).
  expect((await k.request("DELETE", `/forwarding/destinations/${fastId}`)).status).toBe(204);
  await until("the readers dropped it", async () => {
    await sendUdp(relayPort, "probe");
    await new Promise((r) => setTimeout(r, 100));
    const before = fast.got.length;
    await sendUdp(relayPort, "after-delete");
    await new Promise((r) => setTimeout(r, 300));
    return fast.got.length === before ? true : null;
  });
  expect(fast.got.some((b) => b.toString() === "after-delete")).toBe(false);
});
