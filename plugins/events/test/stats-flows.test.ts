/**
 * GET /events/stats counts the spec's third passive stream, flow, from the flows plugin's published minute rollups:
 * records an exporter sent (IPFIX over UDP to the real flows listener) show as kind `flow` grouped by kind and in
 * time buckets, narrowed by node, source and folder scope, and left out by conditions only events have.
 */
import { dataSet, ip4, ipfixMessage, sendDatagrams, templateSet, u, IPV4_FLOW_FIELDS } from "../../../test/support/flowPeers.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { NodeAddresses } from "../../inventory/contract.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";

type Row = Record<string, unknown>;
let k: TestKernel;
let folderA = "";
let nodeA = "";

const FIELDS = IPV4_FLOW_FIELDS;

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin],
    overrides: {
      pluginConfig: {
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: 0, bindAddress: "127.0.0.1", flushMs: 200 },
      },
    },
  });
  folderA = ((await k.request("POST", "/node-groups", { body: { name: "site-a" } })).body as Row).id as string;
  nodeA = ((await k.request("POST", "/nodes", { body: { name: "exporter-a", address: "127.0.0.1", group_id: folderA } })).body as Row).id as string;
  const listeners = ((await k.request("GET", "/listeners")).body as { listeners: { name: string; port: number }[] }).listeners;
  const port = (name: string) => listeners.find((l) => l.name === name)!.port;

  // Three syslog messages and seven flow records from 127.0.0.1 (the node), two more records from 127.0.0.2 (no node).
  // The address book learns of a new node a moment after it is made.
  const book = k.context("inventory").get(NodeAddresses);
  await until("the node in the address book", async () => book.byIp("127.0.0.1")?.id === nodeA);
  for (let i = 0; i < 3; i++) await sendUdp(port("syslog.udp"), `<13>flows beside syslog ${i}`);
  const now = Math.floor(Date.now() / 1000);
  const record = (n: number) => Buffer.concat([ip4("192.0.2.10"), ip4(`198.51.100.${n}`), u(1, 6), u(2, 50000), u(2, 443), u(8, 1000), u(8, 1), u(4, now)]);
  const message = (seq: number, n: number) =>
    ipfixMessage({ domain: 1, exportSecs: now, seq }, [
      templateSet(10, [{ id: 300, fields: FIELDS }]),
      dataSet(
        300,
        Array.from({ length: n }, (_, i) => record(i + 1)),
      ),
    ]);
  await sendDatagrams(port("flows.udp"), [message(1, 7)]);
  await sendDatagramsFrom("127.0.0.2", port("flows.udp"), message(1, 2));
  // The collector adds its minute aggregates to the rollups every flushMs (200 ms here).
  await until("the flow records in the minute rollups", async () => {
    const [r] = (await k.context("flows").store.query<{ n: string }>("SELECT coalesce(sum(flows), 0)::text AS n FROM flows.rollup_1m")).rows;
    return Number(r.n) === 9;
  });
  await until("the syslog stored", async () => {
    await k.context("events").get(EventPipeline).flush();
    return ((await k.request("GET", "/events?q=flows%20beside")).body as Row[]).length === 3;
  });
});

afterAll(() => k?.stop());

/** Sends one datagram from a given loopback address. */
async function sendDatagramsFrom(address: string, port: number, datagram: Buffer): Promise<void> {
  const { createSocket } = await import("node:dgram");
  const s = createSocket("udp4");
  await new Promise<void>((resolve) => s.bind(0, address, resolve));
  await new Promise<void>((resolve, reject) => s.send(datagram, port, "127.0.0.1", (err) => (err ? reject(err) : resolve())));
  s.close();
}

const stats = async (q: string, token?: string) => {
  const res = await k.request("GET", `/events/stats?${q}`, token ? { token } : {});
  expect([q, res.status]).toEqual([q, 200]);
  return res.body as Row[];
};

it("counts flow records by kind beside syslog, and kind=flow alone", async () => {
  expect(await stats("group_by=kind")).toEqual([
    { key: "flow", node_id: null, count: 9 },
    { key: "syslog", node_id: null, count: 3 },
  ]);
  expect(await stats("group_by=kind&kind=flow")).toEqual([{ key: "flow", node_id: null, count: 9 }]);
  expect(await stats("group_by=kind&kind=syslog")).toEqual([{ key: "syslog", node_id: null, count: 3 }]);
  expect(await stats("group_by=kind&limit=1")).toEqual([{ key: "flow", node_id: null, count: 9 }]);
});

it("adds flow records to the time buckets, split by kind", async () => {
  const buckets = await stats("group_by=time&bucket_secs=3600&split=kind");
  expect(buckets.reduce((n, b) => n + (b.count as number), 0)).toBe(12);
  const byKind = buckets.reduce<Record<string, number>>((acc, b) => {
    for (const [kind, n] of Object.entries(b.by_kind as Record<string, number>)) acc[kind] = (acc[kind] ?? 0) + n;
    return acc;
  }, {});
  expect(byKind).toEqual({ flow: 9, syslog: 3 });
  const plain = await stats("group_by=time&bucket_secs=3600&kind=flow");
  expect(plain.reduce((n, b) => n + (b.count as number), 0)).toBe(9);
  expect(plain.every((b) => b.by_kind === null)).toBe(true);
});

it("narrows flows by node, source address or name, and folder scope", async () => {
  expect(await stats(`group_by=kind&kind=flow&node_id=${nodeA}`)).toEqual([{ key: "flow", node_id: null, count: 7 }]);
  expect(await stats("group_by=kind&kind=flow&src=127.0.0.2")).toEqual([{ key: "flow", node_id: null, count: 2 }]);
  expect(await stats("group_by=kind&kind=flow&src=127.0.0.2/32&src_not=true")).toEqual([{ key: "flow", node_id: null, count: 7 }]);
  expect(await stats("group_by=kind&kind=flow&src=exporter-a")).toEqual([{ key: "flow", node_id: null, count: 7 }]);
  const scoped = await k.token("viewer", { folders: [folderA] });
  expect(await stats("group_by=kind", scoped)).toEqual([
    { key: "flow", node_id: null, count: 7 },
    { key: "syslog", node_id: null, count: 3 },
  ]);
  const elsewhere = ((await k.request("POST", "/node-groups", { body: { name: "site-b" } })).body as Row).id as string;
  expect(await stats("group_by=kind", await k.token("viewer", { folders: [elsewhere] }))).toEqual([]);
});

it("leaves flows out of conditions only events have, of the other groupings and of a range before them", async () => {
  for (const q of ["severity=5", "matched=false", "action=unmatched", "q=flows", "msg=flows"]) {
    expect((await stats(`group_by=kind&${q}`)).map((b) => b.key)).not.toContain("flow");
  }
  expect((await stats("group_by=action")).reduce((n, b) => n + (b.count as number), 0)).toBe(3);
  expect(await stats("group_by=kind&kind=flow&start=2020-01-01T00:00:00Z&end=2020-01-02T00:00:00Z")).toEqual([]);
  // The event list holds events only: flow records are the flows plugin's (GET /flow/...).
  expect((await k.request("GET", "/events?kind=flow")).body).toEqual([]);
});
