/**
 * Flow re-export (flow_udp, verbatim false) against the reference collector: softflowd exports a pcap of our own
 * making (IPFIX, IPv4 and IPv6) to our flows listener, the tee re-encodes the decoded records as NetFlow v9 with its
 * own templates, and nfcapd stores exactly the pcap's flows, packets and bytes, with their start times. A filter on
 * flow fields passes matching records only; the rate limit counts records.
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
  flowKey,
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
  const res = await k.request("POST", "/forwarding/destinations", { body: { source_kind: "flow", dest_kind: "flow_udp", verbatim: false, ...body } });
  if (res.status !== 201) throw new Error(`create destination: ${res.status} ${JSON.stringify(res.body)}`);
  await k.context("forwarding").get(ForwardingTee).reload();
  return (res.body as { id: string }).id;
}

async function freePort(): Promise<number> {
  const sink = await udpSink();
  const { port } = sink;
  await sink.close();
  return port;
}

const status = async (id: string) => (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row;

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

it("re-exports IPFIX (IPv4 and IPv6) as NetFlow v9: nfdump reads the same flows, packets, bytes and start times; a filter passes matching records only", async () => {
  const nfcapd = await startNfcapd(await freePort());
  const filtered = await startNfcapd(await freePort());
  const all = await createDestination({ name: "reexport-all", target: `127.0.0.1:${nfcapd.port}` });
  const tcp = await createDestination({
    name: "reexport-tcp",
    target: `127.0.0.1:${filtered.port}`,
    filter: { mode: "all", conditions: [{ field: "proto", op: "eq", value: "6" }] },
  });
  const traffic = generateTraffic(300, { startMs: Date.now() - 240_000, v6Every: 5, seed: 7 });
  const expected = sumTotals(traffic.expected);
  const pcap = join(flowTempDir(), "traffic.pcap");
  writePcap(pcap, traffic.packets);
  await runSoftflowd({ version: 10, pcap, port: flowPort });
  // Every record went through both destinations: forwarded to the first, and passed or dropped by the second's filter.
  await until("every record re-exported", async () => {
    const s = await status(all);
    const t = await status(tcp);
    return (s.forwarded as number) > 0 && (t.forwarded as number) > 0 && (t.dropped_filter as number) > 0 ? true : null;
  });
  await until("nfcapd holds every flow", async () => {
    const a = await status(all);
    return a.send_errors === 0 ? true : null;
  });
  await new Promise((r) => setTimeout(r, 1000));
  await Promise.all([nfcapd.stop(), filtered.stop()]);

  const flows = await nfdumpFlows(nfcapd.dir);
  expect({
    flows: flows.length,
    packets: flows.reduce((s, f) => s + f.packets, 0),
    bytes: flows.reduce((s, f) => s + f.bytes, 0),
  }).toEqual({ flows: expected.flows, packets: expected.packets, bytes: expected.bytes });
  // Each flow, by key, with its own counts; IPv6 ones included.
  // nfdump prints an ICMP flow's type and code as "type.code" where the port goes (read back as the type; code 0 here).
  const icmp = (f: { proto: number }) => f.proto === 1 || f.proto === 58;
  const got = new Map(flows.map((f) => [flowKey(f.src, f.dst, f.proto, f.sport, icmp(f) ? f.dport * 256 : f.dport), f]));
  for (const [key, totals] of traffic.expected) {
    expect({ key, packets: got.get(key)?.packets, bytes: got.get(key)?.bytes }).toEqual({ key, packets: totals.packets, bytes: totals.bytes });
  }
  expect(flows.some((f) => f.src.includes(":"))).toBe(true);
  // Start times survive (FIRST_SWITCHED relative to our sysUptime): within the pcap's span, to the second.
  for (const f of flows) {
    expect(f.firstMs).toBeGreaterThanOrEqual(traffic.startMs - 1000);
    expect(f.firstMs).toBeLessThanOrEqual(traffic.endMs + 1000);
  }

  const tcpFlows = await nfdumpFlows(filtered.dir);
  const expectedTcp = [...traffic.expected.keys()].filter((key) => key.split(" ")[2] === "6").length;
  expect(tcpFlows.length).toBe(expectedTcp);
  expect(tcpFlows.every((f) => f.proto === 6)).toBe(true);
  const t = await status(tcp);
  expect(t.dropped_filter).toBe(expected.flows - expectedTcp);
  for (const id of [all, tcp]) expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBeLessThan(300);
}, 90_000);

it("the rate limit of a re-export counts records", async () => {
  const sink = await udpSink();
  const id = await createDestination({ name: "reexport-limited", target: `127.0.0.1:${sink.port}`, rate_limit_per_sec: 5 });
  const traffic = generateTraffic(100, { startMs: Date.now() - 120_000, seed: 11 });
  const pcap = join(flowTempDir(), "limited.pcap");
  writePcap(pcap, traffic.packets);
  await runSoftflowd({ version: 9, pcap, port: flowPort });
  const flows = sumTotals(traffic.expected).flows;
  const s = await until("every record counted", async () => {
    const st = await status(id);
    return (st.dropped_rate_limit as number) > 0 && (st.dropped_rate_limit as number) + recordsSent(sink.datagrams.map((d) => d.data)) === flows ? st : null;
  });
  // At most one second's worth of tokens (5) plus what refilled while the exports arrived.
  expect(recordsSent(sink.datagrams.map((d) => d.data))).toBeLessThan(flows);
  expect(s.dropped_rate_limit).toBeGreaterThan(0);
  await sink.close();
  expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBeLessThan(300);
}, 60_000);

/** Data records in v9 datagrams: the header's count less the two templates where a template set was sent. */
function recordsSent(datagrams: readonly Buffer[]): number {
  let n = 0;
  for (const d of datagrams) {
    let at = 20;
    while (at + 4 <= d.length) {
      const id = d.readUInt16BE(at);
      const len = d.readUInt16BE(at + 2);
      if (id === 256) n += Math.floor((len - 4) / 56);
      if (id === 257) n += Math.floor((len - 4) / 80);
      if (len < 4) break;
      at += len;
    }
  }
  return n;
}
