/**
 * The decoder against real exporters and the reference collector, on loopback:
 * - softflowd reads a pcap written here byte by byte and exports v5, v9 and IPFIX to a UDP socket: every flow's
 *   packets and bytes match what the pcap holds; with softflowd's sampling (-s) the counts are scaled by the rate;
 * - the same datagrams sent to nfcapd and read back with nfdump: flows, packets, bytes and start times agree exactly;
 * - nfreplay re-sends nfcapd's stored flows as v5 and v9: decoded totals equal nfdump's.
 */
import { join } from "node:path";
import { FlowDecoder } from "../decode/decoder.js";
import { TemplateCache } from "../decode/templates.js";
import type { FlowRecord } from "../decode/types.js";
import {
  addTo,
  cleanupFlowPeers,
  flowKey,
  flowTempDir,
  generateTraffic,
  nfdumpFlows,
  runNfreplay,
  runSoftflowd,
  sendDatagrams,
  startNfcapd,
  sumTotals,
  udpSink,
  writePcap,
  protoNumber,
  type Datagram,
  type GeneratedTraffic,
  type NfdumpFlow,
  type Totals,
} from "../../../test/support/flowPeers.js";

afterAll(cleanupFlowPeers);

function decodeAll(
  datagrams: readonly Datagram[],
  decoder = new FlowDecoder({ templates: new TemplateCache() }),
): { records: FlowRecord[]; malformed: number } {
  const records: FlowRecord[] = [];
  let malformed = 0;
  for (const d of datagrams) {
    const r = decoder.decode(d.data, d.from, Date.now());
    if (r.malformed) {
      malformed++;
      if (process.env.FLOWS_DEBUG) console.log("malformed", d.from, d.data.length, d.data.subarray(0, 24).toString("hex"));
    }
    for (const x of r.records) records.push(x);
  }
  return { records, malformed };
}

function byKey(records: readonly FlowRecord[]): Map<string, Totals> {
  const m = new Map<string, Totals>();
  for (const r of records) addTo(m, flowKey(r.src, r.dst, r.proto, r.src_port, r.dst_port), 1, r.packets, r.bytes);
  return m;
}

/**
 * nfdump shows ICMP type/code in the destination port inconsistently (softflowd's v9 ICMPv6 as 0, its IPFIX ICMPv6 replies
 * as 129 from icmpTypeCodeIPv6, others as type*256+code), so comparisons with nfdump key ICMP flows without ports.
 */
function icmpKey(src: string, dst: string, proto: number, sport: number, dport: number): string {
  return proto === 1 || proto === 58 ? flowKey(src, dst, proto, 0, 0) : flowKey(src, dst, proto, sport, dport);
}

function nfdumpByKey(flows: readonly NfdumpFlow[]): Map<string, Totals> {
  const m = new Map<string, Totals>();
  for (const f of flows) addTo(m, icmpKey(f.src, f.dst, f.proto, f.sport, f.dport), 1, f.packets, f.bytes);
  return m;
}

function byIcmpKey(records: readonly FlowRecord[]): Map<string, Totals> {
  const m = new Map<string, Totals>();
  for (const r of records) addTo(m, icmpKey(r.src, r.dst, r.proto, r.src_port, r.dst_port), 1, r.packets, r.bytes);
  return m;
}

/** Start time (ms) of each unidirectional flow in the pcap. */
function firstSeen(g: GeneratedTraffic): Map<string, number> {
  const m = new Map<string, number>();
  for (const p of g.packets) {
    const key =
      p.proto === "icmp"
        ? flowKey(p.src, p.dst, protoNumber(p), 0, ((p.icmpType ?? 0) << 8) | (p.icmpCode ?? 0))
        : flowKey(p.src, p.dst, protoNumber(p), p.sport ?? 0, p.dport ?? 0);
    if (!m.has(key)) m.set(key, p.tsMs);
  }
  return m;
}

function onlyV4(m: Map<string, Totals>): Map<string, Totals> {
  return new Map([...m].filter(([k]) => !k.includes(":")));
}

function sorted(m: Map<string, Totals>): [string, Totals][] {
  return [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

interface Export {
  version: 5 | 9 | 10;
  traffic: GeneratedTraffic;
  datagrams: Datagram[];
  output: string;
}

/** softflowd reads a fresh pcap and exports to a sink; returns the datagrams. */
async function softflowdExport(version: 5 | 9 | 10, sampling?: number): Promise<Export> {
  const dir = flowTempDir();
  // 300 conversations over 60 s ending 3 minutes ago; every 5th one IPv6 (v5 cannot carry it: softflowd skips those).
  const traffic = generateTraffic(300, { v6Every: 5, startMs: Date.now() - 240_000 });
  const pcap = join(dir, "traffic.pcap");
  writePcap(pcap, traffic.packets);
  const sink = await udpSink();
  try {
    const output = await runSoftflowd({ version, pcap, port: sink.port, sampling });
    const datagrams = await sink.settle(1, 400);
    return { version, traffic, datagrams: [...datagrams], output };
  } finally {
    await sink.close();
  }
}

const exports = new Map<number, Export>();

describe.each([5, 9, 10] as const)("softflowd v%s -> decoder", (version) => {
  let ex: Export;
  beforeAll(async () => {
    ex = await softflowdExport(version);
    exports.set(version, ex);
  });

  it("decodes every flow with the pcap's packets and bytes, and the flows' start times", () => {
    const { records, malformed } = decodeAll(ex.datagrams);
    expect(malformed).toBe(0);
    const expected = version === 5 ? onlyV4(ex.traffic.expected) : ex.traffic.expected;
    expect(sorted(byKey(records))).toEqual(sorted(expected));
    expect(records.length).toBe(sumTotals(expected).flows);
    expect(records.every((r) => r.version === version && r.exporter === "127.0.0.1" && r.sampling === 1 && r.bytes === r.raw_bytes)).toBe(true);
    if (version !== 5) expect(records.some((r) => r.src.startsWith("2001:db8:"))).toBe(true);
    // Start times: IPFIX (-A milli) carries absolute milliseconds (softflowd rounds some by 1 ms); v5 has the export time
    // in ns; v9's header only has seconds.
    const first = firstSeen(ex.traffic);
    const tolerance = version === 10 ? 1 : version === 5 ? 2 : 1000;
    for (const r of records) {
      const t = first.get(flowKey(r.src, r.dst, r.proto, r.src_port, r.dst_port));
      expect(Math.abs((r.first_ms ?? 0) - (t ?? 0))).toBeLessThanOrEqual(tolerance);
      expect(r.last_ms).toBeGreaterThanOrEqual(r.first_ms ?? 0);
    }
    // TCP flags are the OR over the flow's packets (SYN, PSH+ACK, FIN+ACK from the client).
    expect(records.find((r) => r.proto === 6 && r.dst_port === 80)?.tcp_flags).toBe(0x1b);
  });

  it("with softflowd sampling (-s 10) multiplies the counts by the rate it reports", async () => {
    const sampled = await softflowdExport(version, 10);
    const processed = Number(/Packets processed: (\d+)/.exec(sampled.output)?.[1]);
    expect(processed).toBeGreaterThan(0);
    const { records, malformed } = decodeAll(sampled.datagrams);
    expect(malformed).toBe(0);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.sampling === 10 && r.packets === r.raw_packets * 10 && r.bytes === r.raw_bytes * 10)).toBe(true);
    const raw = records.reduce((s, r) => s + r.raw_packets, 0);
    expect(raw).toBe(processed);
    // 1 packet in 10 of the pcap, scaled back: close to the real count.
    const real = sumTotals(version === 5 ? onlyV4(sampled.traffic.expected) : sampled.traffic.expected).packets;
    // (v5: softflowd's 1-in-10 counter also counts the IPv6 packets it then cannot export.)
    expect(Math.abs(raw * 10 - real)).toBeLessThanOrEqual(real * (version === 5 ? 0.25 : 0.15));
    // A per-exporter override wins over what the exporter reports.
    const overridden = decodeAll(
      sampled.datagrams,
      new FlowDecoder({ templates: new TemplateCache(), samplingOverride: (e) => (e === "127.0.0.1" ? 100 : null) }),
    );
    expect(overridden.records.every((r) => r.sampling === 100 && r.packets === r.raw_packets * 100)).toBe(true);
  });
});

/** A fresh nfcapd receives these datagrams and stops: its files' folder and the flows nfdump reads back from them. */
async function throughNfcapd(datagrams: Buffer[]): Promise<{ dir: string; flows: NfdumpFlow[] }> {
  const nfcapd = await startNfcapd(await freePortFromSink());
  await sendDatagrams(nfcapd.port, datagrams);
  await new Promise((r) => setTimeout(r, 300));
  await nfcapd.stop();
  return { dir: nfcapd.dir, flows: await nfdumpFlows(nfcapd.dir) };
}

describe.each([5, 9, 10] as const)("v%s: the decoder and nfcapd/nfdump agree on the same datagrams", (version) => {
  it("flows, packets, bytes and start times", async () => {
    const ex = exports.get(version) ?? (await softflowdExport(version));
    const { flows } = await throughNfcapd(ex.datagrams.map((d) => d.data));
    const { records } = decodeAll(ex.datagrams);
    expect(flows.length).toBe(records.length);
    expect(sorted(byIcmpKey(records))).toEqual(sorted(nfdumpByKey(flows)));
    const ours = records.map((r) => `${icmpKey(r.src, r.dst, r.proto, r.src_port, r.dst_port)} ${r.first_ms}`).sort();
    const theirs = flows.map((f) => `${icmpKey(f.src, f.dst, f.proto, f.sport, f.dport)} ${f.firstMs}`).sort();
    expect(ours).toEqual(theirs);
  });
});

describe.each([5, 9, 10] as const)("v%s sampled (softflowd -s 10): the decoder and nfdump", (version) => {
  it("v5: both scale by the header's rate; v9/IPFIX: nfdump 1.7.1 ignores softflowd's sampling options, so it equals our raw counts", async () => {
    const ex = await softflowdExport(version, 10);
    const { flows } = await throughNfcapd(ex.datagrams.map((d) => d.data));
    const { records } = decodeAll(ex.datagrams);
    expect(flows.length).toBe(records.length);
    const ours = new Map<string, Totals>();
    for (const r of records)
      addTo(ours, icmpKey(r.src, r.dst, r.proto, r.src_port, r.dst_port), 1, version === 5 ? r.packets : r.raw_packets, version === 5 ? r.bytes : r.raw_bytes);
    expect(sorted(ours)).toEqual(sorted(nfdumpByKey(flows)));
    expect(records.every((r) => r.sampling === 10)).toBe(true);
  });
});

describe.each([9, 10] as const)("v%s: softflowd's datagrams out of order", (version) => {
  it("data sets that come before their templates are held and decoded when the templates arrive", () => {
    const ex = exports.get(version);
    expect(ex).toBeDefined();
    const datagrams = ex?.datagrams ?? [];
    // The templates travel in the first datagram: deliver it last.
    const reordered = [...datagrams.slice(1), datagrams[0]];
    const decoder = new FlowDecoder({ templates: new TemplateCache() });
    const records: FlowRecord[] = [];
    let pending = 0;
    reordered.forEach((d, i) => {
      const r = decoder.decode(d.data, d.from, 1000 + i);
      pending += r.pending;
      expect(r.malformed).toBe(false);
      for (const x of r.records) records.push(x);
    });
    expect(pending).toBeGreaterThan(0);
    expect(decoder.stats()).toMatchObject({ pendingHeld: pending, pendingDecoded: pending, pendingDropped: 0, pendingNow: 0 });
    expect(sorted(byKey(records))).toEqual(sorted(byKey(decodeAll(datagrams).records)));
  });
});

/** A free UDP port (a sink bound to port 0, closed again). */
async function freePortFromSink(): Promise<number> {
  const s = await udpSink();
  await s.close();
  return s.port;
}

describe("nfreplay -> decoder", () => {
  let stored: string;
  let reference: NfdumpFlow[];
  beforeAll(async () => {
    // nfcapd stores softflowd's IPFIX export (IPv4 and IPv6); nfreplay re-sends those stored flows.
    const ex = exports.get(10) ?? (await softflowdExport(10));
    ({ dir: stored, flows: reference } = await throughNfcapd(ex.datagrams.map((d) => d.data)));
    expect(reference.length).toBeGreaterThan(0);
  });

  it.each([5, 9] as const)("v%s: the decoded flows equal nfdump's", async (version) => {
    const sink = await udpSink();
    try {
      await runNfreplay(stored, sink.port, version);
      // nfreplay now and then sends an empty datagram as well (the decoder counts it malformed; it is not a flow packet).
      const datagrams = (await sink.settle(1, 400)).filter((d) => d.data.length > 0);
      const { records, malformed } = decodeAll(datagrams);
      expect(malformed).toBe(0);
      expect(records.every((r) => r.version === version)).toBe(true);
      // v5 has no IPv6: nfreplay sends the IPv4 flows only.
      const expected = nfdumpByKey(version === 5 ? reference.filter((f) => !f.src.includes(":")) : reference);
      expect(sorted(byIcmpKey(records))).toEqual(sorted(expected));
    } finally {
      await sink.close();
    }
  });
});
