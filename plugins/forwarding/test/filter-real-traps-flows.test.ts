/**
 * The filter table on real parsed traps and flows (the syslog part is in destinations-api.test.ts, "the filter on
 * real parsed syslog"): every field the README lists, with every operator its type takes, one destination per
 * condition, fed by
 *
 * - traps: Net-SNMP's snmptrap sending a v2c linkDown from 127.0.0.1 and a v1 enterprise-specific trap from
 *   127.0.0.2 to the events plugin's trap listener; the destinations relay verbatim to one snmptrapd;
 * - flows: hand-built NetFlow v9 (exporter 127.0.0.1, IPv4 record) and IPFIX (exporter 127.0.0.2, IPv6 record)
 *   datagrams sent over UDP to the flows listener, each template in a datagram of its own, then one record per
 *   datagram; each destination relays verbatim to a UDP sink of its own.
 *
 * Per destination: forwarded and dropped_filter on the status route, and what the far end received.
 */
import { createSocket } from "node:dgram";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { dataSet, ip4, ip6, ipfixMessage, templateSet, u, udpSink, v9Packet, type UdpSink } from "../../../test/support/flowPeers.js";
import { removeSenderState, snmptrap, startSnmptrapd, type Snmptrapd } from "../../../test/support/trapSenders.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";

type Row = Record<string, unknown>;
type Cond = [field: string, op: string, value: string];
/** A destination's filter (one condition, or several with a mode) and whether it passes the first and the second record. */
interface Case {
  conds: Cond[];
  mode?: "all" | "any";
  pass: [boolean, boolean];
}
const c = (field: string, op: string, value: string, a: boolean, b: boolean): Case => ({ conds: [[field, op, value]], pass: [a, b] });
const label = (t: Case) => (t.mode ? `${t.mode}: ` : "") + t.conds.map((x) => x.join(" ")).join(" | ");

let k: TestKernel;
let trapPort: number;
let flowPort: number;

// ---- traps ----------------------------------------------------------------------------------------------------------

/** T1: v2c linkDown from 127.0.0.1 (trap_oid 1.3.6.1.6.3.1.1.5.3; varbinds ifIndex.7=7, ifDescr.7="Uplink eth7"). */
const T1 = ["-v", "2c", "-c", "public", "4242", "1.3.6.1.6.3.1.1.5.3", "1.3.6.1.2.1.2.2.1.1.7", "i", "7", "1.3.6.1.2.1.2.2.1.2.7", "s", "Uplink eth7"];
/**
 * T2: v1 enterprise-specific trap 17 of 1.3.6.1.4.1.9.9.41.2 from 127.0.0.2, agent-addr 127.0.0.2: in SNMPv2 form
 * (RFC 3584) trap_oid 1.3.6.1.4.1.9.9.41.2.0.17, varbinds the one sent plus snmpTrapAddress.0 = 127.0.0.2 and
 * snmpTrapEnterprise.0 = 1.3.6.1.4.1.9.9.41.2.
 */
const T2 = [
  "--clientaddr=127.0.0.2",
  "-v",
  "1",
  "-c",
  "public",
  "1.3.6.1.4.1.9.9.41.2",
  "127.0.0.2",
  "6",
  "17",
  "5000",
  "1.3.6.1.4.1.9.9.41.1.2.3.1.5.1",
  "s",
  "LINK-3-UPDOWN Gi0/1 down",
];

const TRAP_CASES: Case[] = [
  // kind
  c("kind", "eq", "trap", true, true),
  c("kind", "ne", "trap", false, false),
  c("kind", "in_list", "syslog, trap", true, true),
  // source_ip (the datagram's source)
  c("source_ip", "eq", "127.0.0.1", true, false),
  c("source_ip", "ne", "127.0.0.1", false, true),
  c("source_ip", "in_list", "127.0.0.2, ::1", false, true),
  c("source_ip", "in_cidr", "127.0.0.0/31", true, false),
  c("source_ip", "not_in_cidr", "127.0.0.2/32, 10.0.0.0/8", true, false),
  // pool: the core's own listeners receive for `default`; names compare exactly
  c("pool", "eq", "default", true, true),
  c("pool", "ne", "default", false, false),
  c("pool", "in_list", "edge, default", true, true),
  c("pool", "contains", "fau", true, true),
  c("pool", "not_contains", "fau", false, false),
  c("pool", "prefix", "DEF", false, false),
  c("pool", "regex", "^d[a-z]+t$", true, true),
  c("pool", "not_regex", "^edge", true, true),
  // trap_oid (a leading dot is dropped; prefix on whole arcs)
  c("trap_oid", "eq", ".1.3.6.1.6.3.1.1.5.3", true, false),
  c("trap_oid", "ne", "1.3.6.1.6.3.1.1.5.3", false, true),
  c("trap_oid", "in_list", "1.3.6.1.4.1.9.9.41.2.0.17, 1.3.6.1.6.3.1.1.5.4", false, true),
  c("trap_oid", "prefix", "1.3.6.1.4.1.9", false, true),
  c("trap_oid", "prefix", "1.3.6.1.4.1.9.9.4", false, false),
  c("trap_oid", "prefix", "1.3.6.1.6.3.1.1.5", true, false),
  c("trap_oid", "regex", "\\.0\\.17$", false, true),
  c("trap_oid", "not_regex", "^1\\.3\\.6\\.1\\.6\\.", false, true),
  // varbind: `oid=value`; positive = any varbind, negative = none; text ignores case, regexes do not
  c("varbind", "eq", "1.3.6.1.2.1.2.2.1.1.7=7", true, false),
  c("varbind", "ne", "1.3.6.1.2.1.2.2.1.1.7=7", false, true),
  c("varbind", "contains", "gi0/1 DOWN", false, true),
  c("varbind", "not_contains", "uplink", false, true),
  c("varbind", "prefix", "1.3.6.1.6.3.18.1.3.0=127.0.0.2", false, true),
  c("varbind", "prefix", "1.3.6.1.6.3.1.1.4.3.0=1.3.6.1.4.1.9.9.41.2", false, true),
  c("varbind", "regex", "^1\\.3\\.6\\.1\\.2\\.1\\.2\\.2\\.1\\.2\\.[0-9]+=Uplink", true, false),
  c("varbind", "regex", "uplink", false, false),
  c("varbind", "not_regex", "UPDOWN", true, false),
  // A trap has no syslog or flow fields: no condition on them holds, negative ones included.
  c("facility", "gte", "0", false, false),
  c("severity", "ne", "3", false, false),
  c("hostname", "not_contains", "x", false, false),
  c("app_name", "ne", "x", false, false),
  c("message", "not_regex", "x", false, false),
  c("src_addr", "not_in_cidr", "10.0.0.0/8", false, false),
  c("dst_addr", "ne", "10.0.0.1", false, false),
  c("proto", "ne", "6", false, false),
  c("src_port", "gte", "0", false, false),
  c("dst_port", "lte", "65535", false, false),
  c("src_as", "ne", "1", false, false),
  c("dst_as", "gte", "0", false, false),
  // Modes
  {
    mode: "all",
    conds: [
      ["trap_oid", "prefix", "1.3.6.1.6.3"],
      ["source_ip", "eq", "127.0.0.1"],
    ],
    pass: [true, false],
  },
  {
    mode: "all",
    conds: [
      ["trap_oid", "prefix", "1.3.6.1.6.3"],
      ["source_ip", "eq", "127.0.0.2"],
    ],
    pass: [false, false],
  },
  {
    mode: "any",
    conds: [
      ["source_ip", "eq", "127.0.0.2"],
      ["varbind", "contains", "uplink"],
    ],
    pass: [true, true],
  },
];

// ---- flows ----------------------------------------------------------------------------------------------------------

const NOW_S = Math.floor(Date.now() / 1000);
/** Exporter A (127.0.0.1), NetFlow v9, source id 1: template 300, IPv4. */
const V9_FIELDS = [
  { id: 8, length: 4 }, // IPV4_SRC_ADDR
  { id: 12, length: 4 }, // IPV4_DST_ADDR
  { id: 7, length: 2 }, // L4_SRC_PORT
  { id: 11, length: 2 }, // L4_DST_PORT
  { id: 4, length: 1 }, // PROTOCOL
  { id: 16, length: 4 }, // SRC_AS
  { id: 17, length: 4 }, // DST_AS
  { id: 1, length: 4 }, // IN_BYTES
  { id: 2, length: 4 }, // IN_PKTS
  { id: 22, length: 4 }, // FIRST_SWITCHED
  { id: 21, length: 4 }, // LAST_SWITCHED
];
const V9_HEADER = { sourceId: 1, uptimeMs: 100_000, unixSecs: NOW_S };
const FA_TEMPLATE = v9Packet({ ...V9_HEADER, seq: 1 }, [templateSet(9, [{ id: 300, fields: V9_FIELDS }])]);
/** 10.1.2.3:51515 → 192.0.2.80:443 TCP, AS 64512 → 15169. */
const FA = v9Packet({ ...V9_HEADER, seq: 2 }, [
  dataSet(300, [
    Buffer.concat([
      ip4("10.1.2.3"),
      ip4("192.0.2.80"),
      u(2, 51515),
      u(2, 443),
      u(1, 6),
      u(4, 64512),
      u(4, 15169),
      u(4, 1500),
      u(4, 3),
      u(4, 90_000),
      u(4, 99_000),
    ]),
  ]),
]);
/** Exporter B (127.0.0.2), IPFIX, observation domain 7: template 400, IPv6. */
const IPFIX_FIELDS = [
  { id: 27, length: 16 }, // sourceIPv6Address
  { id: 28, length: 16 }, // destinationIPv6Address
  { id: 7, length: 2 },
  { id: 11, length: 2 },
  { id: 4, length: 1 },
  { id: 16, length: 4 }, // bgpSourceAsNumber
  { id: 17, length: 4 }, // bgpDestinationAsNumber
  { id: 1, length: 8 }, // octetDeltaCount
  { id: 2, length: 8 }, // packetDeltaCount
  { id: 152, length: 8 }, // flowStartMilliseconds
  { id: 153, length: 8 }, // flowEndMilliseconds
];
const FB_TEMPLATE = ipfixMessage({ domain: 7, exportSecs: NOW_S, seq: 0 }, [templateSet(10, [{ id: 400, fields: IPFIX_FIELDS }])]);
/** [2001:db8::5]:53 → [2001:db8:1::9]:40000 UDP, AS 4200000000 → 64496. */
const FB = ipfixMessage({ domain: 7, exportSecs: NOW_S, seq: 0 }, [
  dataSet(400, [
    Buffer.concat([
      ip6("2001:db8::5"),
      ip6("2001:db8:1::9"),
      u(2, 53),
      u(2, 40000),
      u(1, 17),
      u(4, 4_200_000_000),
      u(4, 64496),
      u(8, 900),
      u(8, 2),
      u(8, (NOW_S - 10) * 1000),
      u(8, (NOW_S - 1) * 1000),
    ]),
  ]),
]);

const FLOW_CASES: Case[] = [
  // kind
  c("kind", "eq", "flow", true, true),
  c("kind", "ne", "flow", false, false),
  c("kind", "in_list", "trap, flow", true, true),
  // source_ip: the exporter
  c("source_ip", "eq", "127.0.0.1", true, false),
  c("source_ip", "ne", "127.0.0.1", false, true),
  c("source_ip", "in_list", "127.0.0.2", false, true),
  c("source_ip", "in_cidr", "127.0.0.0/31", true, false),
  c("source_ip", "not_in_cidr", "127.0.0.1", false, true),
  // pool
  c("pool", "eq", "default", true, true),
  c("pool", "ne", "default", false, false),
  c("pool", "in_list", "a, b", false, false),
  c("pool", "contains", "efa", true, true),
  c("pool", "not_contains", "efa", false, false),
  c("pool", "prefix", "def", true, true),
  c("pool", "regex", "^default$", true, true),
  c("pool", "not_regex", "^default$", false, false),
  // src_addr (by value; one family never matches the other's prefixes)
  c("src_addr", "eq", "10.1.2.3", true, false),
  c("src_addr", "ne", "10.1.2.3", false, true),
  c("src_addr", "in_list", "2001:db8:0::5, 10.9.9.9", false, true),
  c("src_addr", "in_cidr", "10.0.0.0/8", true, false),
  c("src_addr", "not_in_cidr", "10.0.0.0/8", false, true),
  // dst_addr
  c("dst_addr", "eq", "2001:db8:1:0:0:0:0:9", false, true),
  c("dst_addr", "ne", "192.0.2.80", false, true),
  c("dst_addr", "in_list", "192.0.2.80, 2001:DB8:1::9", true, true),
  c("dst_addr", "in_cidr", "192.0.2.0/24, 2001:db8::/32", true, true),
  c("dst_addr", "in_cidr", "::ffff:192.0.2.0/120", false, false),
  c("dst_addr", "not_in_cidr", "2001:db8:1::/48", true, false),
  // proto
  c("proto", "eq", "6", true, false),
  c("proto", "ne", "6", false, true),
  c("proto", "in_list", "17, 1", false, true),
  c("proto", "lte", "6", true, false),
  c("proto", "gte", "17", false, true),
  // src_port
  c("src_port", "eq", "51515", true, false),
  c("src_port", "ne", "53", true, false),
  c("src_port", "in_list", "53,123", false, true),
  c("src_port", "lte", "1023", false, true),
  c("src_port", "gte", "1024", true, false),
  // dst_port
  c("dst_port", "eq", "0443", true, false),
  c("dst_port", "ne", "443", false, true),
  c("dst_port", "in_list", "443, 40000", true, true),
  c("dst_port", "lte", "443", true, false),
  c("dst_port", "gte", "444", false, true),
  // src_as (32-bit AS numbers)
  c("src_as", "eq", "64512", true, false),
  c("src_as", "ne", "64512", false, true),
  c("src_as", "in_list", "4200000000", false, true),
  c("src_as", "lte", "65535", true, false),
  c("src_as", "gte", "4200000000", false, true),
  // dst_as
  c("dst_as", "eq", "15169", true, false),
  c("dst_as", "ne", "15169", false, true),
  c("dst_as", "in_list", "15169, 64496", true, true),
  c("dst_as", "lte", "15169", true, false),
  c("dst_as", "gte", "15170", false, true),
  // A flow has no syslog or trap fields: no condition on them holds, negative ones included.
  c("facility", "eq", "0", false, false),
  c("severity", "ne", "0", false, false),
  c("hostname", "not_contains", "x", false, false),
  c("app_name", "not_regex", "x", false, false),
  c("message", "ne", "x", false, false),
  c("trap_oid", "ne", "1.3.6", false, false),
  c("varbind", "not_contains", "x", false, false),
  // Modes
  {
    mode: "all",
    conds: [
      ["proto", "eq", "6"],
      ["dst_port", "eq", "40000"],
    ],
    pass: [false, false],
  },
  {
    mode: "any",
    conds: [
      ["proto", "eq", "6"],
      ["dst_port", "eq", "40000"],
    ],
    pass: [true, true],
  },
  {
    mode: "all",
    conds: [
      ["src_addr", "in_cidr", "2001:db8::/32"],
      ["src_as", "gte", "4200000000"],
      ["dst_port", "eq", "40000"],
    ],
    pass: [false, true],
  },
];

// ---- harness --------------------------------------------------------------------------------------------------------

const tee = () => k.context("forwarding").get(ForwardingTee);

async function createAll(source: "trap" | "flow", cases: Case[], target: (i: number) => string): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, t] of cases.entries()) {
    const res = await k.request("POST", "/forwarding/destinations", {
      body: {
        name: `${source}-${i}`,
        source_kind: source,
        dest_kind: source === "trap" ? "snmp_trap_udp" : "flow_udp",
        target: target(i),
        filter: { mode: t.mode ?? "all", conditions: t.conds.map(([field, op, value]) => ({ field, op, value })) },
      },
    });
    if (res.status !== 201) throw new Error(`create ${label(t)}: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push((res.body as { id: string }).id);
  }
  await tee().reload();
  return ids;
}

async function removeAll(ids: string[]): Promise<void> {
  for (const id of ids) expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBe(204);
  await tee().reload();
}

/** Waits until every destination has seen `n` records (forwarded or dropped by its filter), then answers the status route's counters. */
async function settled(ids: string[], n: number): Promise<Row[]> {
  await until(
    `every destination saw ${n} records`,
    async () => ids.every((id) => ((s) => s.forwarded + s.dropped_filter + s.send_errors >= n)(tee().status(id))),
    15_000,
    () => JSON.stringify(ids.map((id) => tee().status(id))),
  );
  // A little longer: a record counted twice would show now.
  await new Promise((r) => setTimeout(r, 200));
  return Promise.all(ids.map(async (id) => (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row));
}

/** One datagram from a socket bound to `from` (so the listener sees that exporter). */
async function sendFrom(from: string, port: number, datagrams: Buffer[]): Promise<void> {
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, from, () => r()));
  try {
    for (const d of datagrams) {
      await new Promise<void>((res, rej) => s.send(d, port, "127.0.0.1", (err) => (err ? rej(err) : res())));
      // Templates first, each datagram in its own turn.
      await new Promise((r) => setTimeout(r, 30));
    }
  } finally {
    await new Promise<void>((r) => s.close(() => r()));
  }
}

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: null, tcp: null, tls: null }, traps: { udp: 0, bindAddress: "127.0.0.1" }, flushMs: 50 },
        flows: { udp: 0, bindAddress: "127.0.0.1" },
        forwarding: { maxDestinations: 300 },
      },
    },
  });
  const listeners = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners;
  trapPort = listeners.find((l) => l.name === "traps.udp")!.port as number;
  flowPort = listeners.find((l) => l.name === "flows.udp")!.port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
  removeSenderState();
});

describe("the filter on real parsed traps (Net-SNMP snmptrap v2c and v1 → snmptrapd)", () => {
  let trapd: Snmptrapd;
  beforeAll(async () => {
    trapd = await startSnmptrapd(["public"]);
  });
  afterAll(async () => {
    await trapd?.stop();
  });

  it("forwards, or counts as dropped by the filter, exactly what each condition says", async () => {
    const ids = await createAll("trap", TRAP_CASES, () => `127.0.0.1:${trapd.port}`);
    await snmptrap([...T1.slice(0, 4), `127.0.0.1:${trapPort}`, ...T1.slice(4)]);
    await snmptrap([...T2.slice(0, 5), `127.0.0.1:${trapPort}`, ...T2.slice(5)]);
    const statuses = await settled(ids, 2);
    expect(
      statuses.map((s, i) => ({ condition: label(TRAP_CASES[i]), forwarded: s.forwarded, dropped_filter: s.dropped_filter, send_errors: s.send_errors })),
    ).toEqual(
      TRAP_CASES.map((t) => ({ condition: label(t), forwarded: +t.pass[0] + +t.pass[1], dropped_filter: 2 - +t.pass[0] - +t.pass[1], send_errors: 0 })),
    );

    // snmptrapd logged each trap once per destination that passed it (verbatim: the sender's own "public").
    const want = { v2c: TRAP_CASES.filter((t) => t.pass[0]).length, v1: TRAP_CASES.filter((t) => t.pass[1]).length };
    expect(want.v2c).toBeGreaterThan(0);
    expect(want.v1).toBeGreaterThan(0);
    const got = () => {
      const lines = trapd.traps();
      return {
        v2c: lines.filter((l) => l.includes("Uplink eth7")).length,
        v1: lines.filter((l) => l.includes("LINK-3-UPDOWN")).length,
        other: lines.filter((l) => !l.includes("Uplink eth7") && !l.includes("LINK-3-UPDOWN")),
      };
    };
    await until(
      "snmptrapd logged every forwarded trap",
      async () => got().v2c + got().v1 >= want.v2c + want.v1,
      10_000,
      () => trapd.output(),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(got()).toEqual({ ...want, other: [] });
    const v2c = trapd.traps().find((l) => l.includes("Uplink eth7"))!;
    expect(v2c).toContain(".1.3.6.1.6.3.1.1.4.1.0 = OID: .1.3.6.1.6.3.1.1.5.3");
    const v1 = trapd.traps().find((l) => l.includes("LINK-3-UPDOWN"))!;
    expect(v1).toContain('.1.3.6.1.4.1.9.9.41.1.2.3.1.5.1 = STRING: "LINK-3-UPDOWN Gi0/1 down"');
    await removeAll(ids);
  }, 30_000);
});

describe("the filter on real flow records (NetFlow v9 and IPFIX datagrams → UDP sinks)", () => {
  const sinks: UdpSink[] = [];
  beforeAll(async () => {
    for (let i = 0; i < FLOW_CASES.length; i++) sinks.push(await udpSink());
  });
  afterAll(async () => {
    await Promise.all(sinks.map((s) => s.close()));
  });

  it("forwards, or counts as dropped by the filter, exactly what each condition says; templates always pass", async () => {
    const ids = await createAll("flow", FLOW_CASES, (i) => `127.0.0.1:${sinks[i].port}`);
    const received = async () =>
      (((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "flows.udp")!.counters as Row).received as number;
    const before = await received();
    await sendFrom("127.0.0.1", flowPort, [FA_TEMPLATE, FA]);
    await sendFrom("127.0.0.2", flowPort, [FB_TEMPLATE, FB]);
    // Each datagram is one filtered unit: the two templates always pass, each data datagram when its record does.
    const statuses = await settled(ids, 4);
    expect((await received()) - before).toBe(4);
    expect(
      statuses.map((s, i) => ({ condition: label(FLOW_CASES[i]), forwarded: s.forwarded, dropped_filter: s.dropped_filter, send_errors: s.send_errors })),
    ).toEqual(
      FLOW_CASES.map((t) => ({ condition: label(t), forwarded: 2 + +t.pass[0] + +t.pass[1], dropped_filter: 2 - +t.pass[0] - +t.pass[1], send_errors: 0 })),
    );

    // Each sink received the two templates and exactly the data datagrams its filter passed, byte for byte.
    const name = (d: Buffer) =>
      d.equals(FA_TEMPLATE) ? "template-v9" : d.equals(FB_TEMPLATE) ? "template-ipfix" : d.equals(FA) ? "v9-record" : d.equals(FB) ? "ipfix-record" : "other";
    await Promise.all(FLOW_CASES.map((t, i) => sinks[i].settle(2 + +t.pass[0] + +t.pass[1], 200, 10_000)));
    expect(FLOW_CASES.map((t, i) => ({ condition: label(t), got: sinks[i].datagrams.map((d) => name(d.data)).sort() }))).toEqual(
      FLOW_CASES.map((t) => ({
        condition: label(t),
        got: ["template-ipfix", "template-v9", ...(t.pass[0] ? ["v9-record"] : []), ...(t.pass[1] ? ["ipfix-record"] : [])].sort(),
      })),
    );
    await removeAll(ids);
  }, 30_000);
});
