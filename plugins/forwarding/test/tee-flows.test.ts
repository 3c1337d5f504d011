/**
 * Flow forwarding against the reference collector: softflowd exports a pcap of our own making (v9 and IPFIX) to
 * our flows listener, the tee relays each datagram as is to nfcapd, and nfdump's totals equal the pcap's. A filter
 * on flow fields passes the datagrams that carry a matching record, and always those that carry templates.
 */
import { join } from "node:path";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import {
  cleanupFlowPeers,
  flowTempDir,
  generateTraffic,
  nfdumpFlows,
  runSoftflowd,
  startNfcapd,
  sumTotals,
  udpSink,
  writePcap,
} from "../../../test/support/flowPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";

type Row = Record<string, unknown>;

let k: TestKernel;
let flowPort: number;

async function createDestination(body: Row): Promise<string> {
  const res = await k.request("POST", "/forwarding/destinations", { body: { source_kind: "flow", dest_kind: "flow_udp", ...body } });
  if (res.status !== 201) throw new Error(`create destination: ${res.status} ${JSON.stringify(res.body)}`);
  await k.context("forwarding").get(ForwardingTee).reload();
  return (res.body as { id: string }).id;
}

/** A free UDP port (from a sink bound and closed at once). */
async function freePort(): Promise<number> {
  const sink = await udpSink();
  const { port } = sink;
  await sink.close();
  return port;
}

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: null, tcp: null, tls: null }, traps: { udp: null } },
        flows: { udp: 0, bindAddress: "127.0.0.1" },
      },
    },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  flowPort = listeners.listeners.find((l) => l.name === "flows.udp")!.port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
  await cleanupFlowPeers();
});

describe("listening to the flows stream", () => {
  it("listens only while a flow destination runs: with none, the collector keeps no datagram or record for the tee", async () => {
    const tee = k.context("forwarding").get(ForwardingTee);
    const listeners = () => k.kernel.bus.listenerCount("flows.received");
    await tee.reload();
    expect(listeners()).toBe(0);
    const id = await createDestination({ name: "listen-check", target: `127.0.0.1:${await freePort()}` });
    expect(listeners()).toBe(1);
    expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBeLessThan(300);
    await tee.reload();
    expect(listeners()).toBe(0);
  });
});

describe.each([9, 10] as const)("v%s relayed verbatim to nfcapd", (version) => {
  it("nfdump reads the pcap's flows, packets and bytes; a filter passes only datagrams with a matching record", async () => {
    const nfcapd = await startNfcapd(await freePort());
    const filtered = await startNfcapd(await freePort());
    const none = await startNfcapd(await freePort());
    const all = await createDestination({ name: `flows-v${version}`, target: `127.0.0.1:${nfcapd.port}` });
    const dns = await createDestination({
      name: `flows-v${version}-dns`,
      target: `127.0.0.1:${filtered.port}`,
      filter: { mode: "any", conditions: [{ field: "dst_port", op: "eq", value: "53" }] },
    });
    const nothing = await createDestination({
      name: `flows-v${version}-none`,
      target: `127.0.0.1:${none.port}`,
      filter: { mode: "all", conditions: [{ field: "dst_port", op: "eq", value: "9" }] },
    });
    const status = async (id: string) => (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row;
    const received = async () =>
      (((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "flows.udp")!.counters as Row).received as number;
    const before = await received();
    const traffic = generateTraffic(200, { startMs: Date.now() - 240_000, seed: version });
    const pcap = join(flowTempDir(), "traffic.pcap");
    writePcap(pcap, traffic.packets);
    await runSoftflowd({ version, pcap, port: flowPort });
    const datagrams = await until("every datagram teed", async () => {
      const n = (await received()) - before;
      const s = await status(all);
      return n > 0 && s.forwarded === n ? n : null;
    });
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all([nfcapd.stop(), filtered.stop(), none.stop()]);

    const flows = await nfdumpFlows(nfcapd.dir);
    const expected = sumTotals(traffic.expected);
    expect({ flows: flows.length, packets: flows.reduce((s, f) => s + f.packets, 0), bytes: flows.reduce((s, f) => s + f.bytes, 0) }).toEqual({
      flows: expected.flows,
      packets: expected.packets,
      bytes: expected.bytes,
    });

    // The filtered collector got every DNS flow, and fewer datagrams than were sent.
    const dnsFlows = (await nfdumpFlows(filtered.dir)).filter((f) => f.dport === 53);
    // Keys are "src dst proto sport dport".
    const expectedDns = [...traffic.expected.keys()].filter((key) => key.split(" ")[4] === "53").length;
    expect(dnsFlows.length).toBe(expectedDns);
    const s = await status(dns);
    expect((s.forwarded as number) + (s.dropped_filter as number)).toBe(datagrams);

    // A filter nothing matches: only the datagrams that carry templates went (softflowd repeats them in many).
    expect((await nfdumpFlows(none.dir)).length).toBeLessThan(expected.flows);
    const n = await status(nothing);
    expect(n.forwarded).toBeGreaterThan(0);
    expect(n.dropped_filter).toBeGreaterThan(0);
    expect((n.forwarded as number) + (n.dropped_filter as number)).toBe(datagrams);
    for (const id of [all, dns, nothing]) expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBeLessThan(300);
  }, 90_000);
});
