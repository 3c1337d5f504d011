/**
 * The flows plugin on a real kernel: softflowd exports a pcap written here (v9 and IPFIX) to the collector, and
 * GET /flow/conversations, /flow/top-as and /flow/exporters answer from the rollups: totals equal the traffic,
 * filters and their caps, folder scope, the AS table, templates shared through the store across a collector restart,
 * permissions, and flow monitoring disabled.
 */
import { join } from "node:path";
import { expectError } from "../../../test/support/assertions.js";
import { cleanupFlowPeers, flowTempDir, generateTraffic, runSoftflowd, sumTotals, udpSink, writePcap, sendDatagrams } from "../../../test/support/flowPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { inventoryPlugin, NodeAddresses } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { flowsPlugin } from "../index.js";
import { FlowCollector } from "../services/FlowCollector.js";

type Row = Record<string, unknown>;
let k: TestKernel;
let port: number;
let folderA: string;
let folderB: string;
let nodeA: string;
/** IPFIX datagrams without templates, and how many records they hold (from the restart test, for the replica test). */
let ipfixData: Buffer[] = [];
let ipfixRecords = 0;

const traffic = generateTraffic(150, { v6Every: 5 });
const expected = sumTotals(traffic.expected);
const from = Math.floor(traffic.startMs / 1000) - 120;
const window = `from=${from}&to=${Math.floor(Date.now() / 1000) + 600}`;

const collector = () => k.context("flows").get(FlowCollector);
const get = async (path: string, token?: string | null) => {
  const res = await k.request("GET", path, { token });
  return res;
};
const rows = async (path: string, token?: string | null) => {
  const res = await get(path, token);
  expect([path, res.status]).toEqual([path, 200]);
  return res.body as Row[];
};
const total = (list: Row[], field: string) => list.reduce((n, r) => n + (r[field] as number), 0);

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, flowsPlugin],
    overrides: { pluginConfig: { flows: { udp: 0, bindAddress: "127.0.0.1", flushMs: 200 } } },
  });
  port = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "flows.udp")!.port as number;
  folderA = ((await k.request("POST", "/node-groups", { body: { name: "a" } })).body as Row).id as string;
  folderB = ((await k.request("POST", "/node-groups", { body: { name: "b" } })).body as Row).id as string;
  nodeA = ((await k.request("POST", "/nodes", { body: { name: "edge", address: "127.0.0.1", group_id: folderA } })).body as Row).id as string;
  await k.context("inventory").get(NodeAddresses).reload();
});
afterAll(async () => {
  if (process.env.SHOW_ERRORS) for (const l of k.logs) if (l.includes('"error"')) console.log(l.slice(0, 1200));
  await k?.stop();
  await cleanupFlowPeers();
});

describe("collecting", () => {
  it("takes softflowd's v9 export of a pcap: conversation totals equal the traffic", async () => {
    const pcap = join(flowTempDir(), "traffic.pcap");
    writePcap(pcap, traffic.packets);
    await runSoftflowd({ version: 9, pcap, port });
    await until("every flow", async () => {
      await collector().flush();
      return total(await rows(`/flow/conversations?${window}&limit=1000`), "flows") === expected.flows;
    });
    const list = await rows(`/flow/conversations?${window}&limit=1000`);
    expect(total(list, "bytes")).toBe(expected.bytes);
    expect(total(list, "packets")).toBe(expected.packets);
    // Ranked by traffic.
    expect(list.map((r) => r.bytes)).toEqual([...list.map((r) => r.bytes as number)].sort((a, b) => b - a));
    expect(Object.keys(list[0]).sort()).toEqual(["bytes", "dst", "dst_as_name", "dst_asn", "flows", "packets", "src", "src_as_name", "src_asn"]);
    expect(list.some((r) => String(r.src).startsWith("2001:db8:"))).toBe(true);
  });

  it("lists the exporter, attributed to its node, with its templates", async () => {
    const [e] = await rows("/flow/exporters");
    expect(e).toMatchObject({
      address: "127.0.0.1",
      node_id: nodeA,
      node_name: "edge",
      version: 9,
      records: expected.flows,
      sampling: 1,
      sampling_source: "none",
    });
    expect(e.templates as number).toBeGreaterThan(0);
  });

  it("decodes data after a restart of the collector without waiting for a template: templates come from the store", async () => {
    const sink = await udpSink();
    const pcap = join(flowTempDir(), "ipfix.pcap");
    writePcap(pcap, generateTraffic(40, { seed: 7 }).packets);
    await runSoftflowd({ version: 10, pcap, port: sink.port });
    const datagrams = (await sink.settle(2)).map((d) => d.data);
    await sink.close();
    // IPFIX set id 2 = template set: the first datagram carries the templates, the later ones only data.
    const setIds = (b: Buffer) => {
      const ids: number[] = [];
      for (let o = 16; o + 4 <= b.length;) {
        const len = b.readUInt16BE(o + 2);
        ids.push(b.readUInt16BE(o));
        if (len < 4) break;
        o += len;
      }
      return ids;
    };
    const withTemplates = datagrams.filter((d) => setIds(d).includes(2));
    const dataOnly = datagrams.filter((d) => !setIds(d).includes(2) && !setIds(d).includes(3));
    ipfixData = dataOnly;
    expect(withTemplates.length).toBeGreaterThan(0);
    expect(dataOnly.length).toBeGreaterThan(0);
    await sendDatagrams(port, withTemplates);
    await until("templates stored", async () => (await collector().flush(), (await rows("/flow/exporters"))[0].version === 10));
    await collector().stop();
    await collector().start();
    port = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "flows.udp")!.port as number;
    const before = collector().stats().records;
    await sendDatagrams(port, dataOnly);
    await until("data decoded at once", async () => collector().stats().records > before);
    ipfixRecords = collector().stats().records - before;
  });

  it("a replica that lacks a template another one stored looks it up when the data arrives, and decodes what it held", async () => {
    const store = k.context("flows").store;
    const stored = (await store.query<{ template: unknown }>("SELECT template FROM flows.templates WHERE version = 10")).rows;
    expect(stored.length).toBeGreaterThan(0);
    await store.query("DELETE FROM flows.templates");
    await collector().stop();
    await collector().start();
    port = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "flows.udp")!.port as number;
    const before = collector().stats().records;
    await sendDatagrams(port, ipfixData);
    await new Promise((r) => setTimeout(r, 300));
    expect(collector().stats().records).toBe(before); // held: no template here, none in the store yet
    // Another replica received the templates and stored them; the next data makes this one look.
    await store.query(
      "INSERT INTO flows.templates (exporter, version, domain, template_id, template) SELECT (t->>'exporter')::inet, 10, (t->>'domain')::bigint, (t->>'id')::int, t FROM unnest($1::jsonb[]) AS t",
      [stored.map((r) => JSON.stringify(r.template))],
    );
    await new Promise((r) => setTimeout(r, 1100));
    await sendDatagrams(port, ipfixData);
    const perSend = ipfixRecords;
    await until("held and new data decoded", async () => collector().stats().records - before === 2 * perSend);
  });
});

describe("the query", () => {
  it("filters by proto, port, peer and asn; clamps limit; refuses what does not parse and more than 8 values", async () => {
    const tcp = await rows(`/flow/conversations?${window}&limit=1000&proto=6`);
    expect(tcp.length).toBeGreaterThan(0);
    const all = await rows(`/flow/conversations?${window}&limit=1000`);
    expect(total(tcp, "flows")).toBeLessThan(total(all, "flows"));
    const peer = String(all[0].src);
    const withPeer = await rows(`/flow/conversations?${window}&limit=1000&peer=${encodeURIComponent(peer)}`);
    expect(withPeer.every((r) => r.src === peer || r.dst === peer)).toBe(true);
    expect(await rows(`/flow/conversations?${window}&limit=0`)).toHaveLength(1);
    expect((await rows(`/flow/conversations?${window}&limit=5000`)).length).toBe(all.length);
    for (const q of [
      "from=yesterday",
      "to=1.5",
      "limit=ten",
      "proto=tcp",
      "proto=256",
      "port=70000",
      "peer=300.1.1.1",
      "asn=-1",
      "dir=up",
      `from=2000&to=1000`,
      "proto=1,2,3,4,5,6,7,8,9",
    ]) {
      expectError(await get(`/flow/conversations?${q}`), 400, "validation_failed");
    }
    expect((await get("/flow/conversations?proto=1,2,3,4,5,6,7,8")).status).toBe(200);
  });

  it("exporter keeps the flows that exporter sent (the drill-down from a conversation to the device that saw it)", async () => {
    const all = await rows(`/flow/conversations?${window}&limit=1000`);
    const [exporter] = await rows("/flow/exporters");
    const viaExporter = await rows(`/flow/conversations?${window}&limit=1000&exporter=${exporter.address as string}`);
    // One exporter here: everything came through it; another address sent nothing.
    expect(total(viaExporter, "bytes")).toBe(total(all, "bytes"));
    const pair = await rows(`/flow/conversations?${window}&limit=1000&exporter=${exporter.address as string}&peer=${encodeURIComponent(String(all[0].src))}`);
    expect(pair.some((r) => r.src === all[0].src && r.dst === all[0].dst)).toBe(true);
    expect(await rows(`/flow/conversations?${window}&exporter=192.0.2.250`)).toEqual([]);
    expect(await rows(`/flow/top-as?${window}&exporter=192.0.2.250`)).toEqual([]);
    expectError(await get("/flow/conversations?exporter=not-an-address"), 400, "validation_failed");
    expectError(await get(`/flow/conversations?exporter=${Array.from({ length: 9 }, (_, i) => `192.0.2.${i + 1}`).join(",")}`), 400, "validation_failed");
    const scopedB = await k.token("viewer", { folders: [folderB] });
    expect(await rows(`/flow/conversations?${window}&exporter=${exporter.address as string}`, scopedB)).toEqual([]);
  });

  it("names AS numbers from the table; an exporter-less address is AS 0; top-as ranks either side", async () => {
    expectError(
      await k.request("POST", "/flow/asn", {
        body: { entries: [{ prefix: "198.51.100.0/24", asn: 64500, name: "EXAMPLE" }] },
        token: await k.token("operator"),
      }),
      403,
      "permission_denied",
    );
    expectError(
      await k.request("POST", "/flow/asn", {
        body: { entries: [{ prefix: "198.51.100.0/24", asn: 64500 }] },
        token: await k.token("admin", { folders: [folderA] }),
      }),
      403,
      "scope_unsupported",
    );
    expectError(await k.request("POST", "/flow/asn", { body: { entries: [{ prefix: "not/a/prefix", asn: 1 }] } }), 400, "validation_failed");
    const res = await k.request("POST", "/flow/asn", {
      body: {
        entries: [
          { prefix: "198.51.100.7/24", asn: 64500, name: "EXAMPLE-NET" },
          { prefix: "203.0.113.0/24", asn: 64501, name: "OTHER-NET" },
        ],
      },
    });
    expect(res.body).toEqual({ prefixes: 2, names: 2 });
    const list = await rows(`/flow/conversations?${window}&limit=1000&asn=64500`);
    expect(list.length).toBeGreaterThan(0);
    for (const r of list) expect(r.dst_asn === 64500 || r.src_asn === 64500).toBe(true);
    expect(list.find((r) => r.dst_asn === 64500)).toMatchObject({ dst_as_name: "EXAMPLE-NET" });
    const unknown = await rows(`/flow/conversations?${window}&limit=1000&asn=0`);
    expect(unknown.some((r) => r.src_asn === 0 || r.dst_asn === 0)).toBe(true);
    const top = await rows(`/flow/top-as?${window}&dir=dst`);
    expect(top.map((t) => t.asn)).toEqual(expect.arrayContaining([64500, 64501]));
    expect(top.find((t) => t.asn === 64500)).toMatchObject({ name: "EXAMPLE-NET" });
    expect(top.map((t) => t.bytes)).toEqual([...top.map((t) => t.bytes as number)].sort((a, b) => b - a));
  });

  it("folder scope: a caller scoped to another folder sees no flows; one scoped to the exporter's folder sees them", async () => {
    const b = await k.token("viewer", { folders: [folderB] });
    expect(await rows(`/flow/conversations?${window}`, b)).toEqual([]);
    expect(await rows("/flow/exporters", b)).toEqual([]);
    const a = await k.token("viewer", { folders: [folderA] });
    expect((await rows(`/flow/conversations?${window}`, a)).length).toBeGreaterThan(0);
    expectError(await get("/flow/conversations", null), 401, "unauthorized");
  });
});

describe("flow monitoring disabled", () => {
  it("answers 503 flows_disabled and binds nothing", async () => {
    await k.stop();
    k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, flowsPlugin], overrides: { pluginConfig: { flows: { enabled: false, udp: 0 } } } });
    expectError(await get("/flow/conversations"), 503, "flows_disabled");
    expectError(await get("/flow/exporters"), 503, "flows_disabled");
    expectError(await k.request("POST", "/flow/asn", { body: { entries: [] } }), 503, "flows_disabled");
    const upload = await fetch(`${k.url}/api/v1/flow/asn/mmdb`, {
      method: "POST",
      headers: { authorization: `Bearer ${k.adminToken}`, "content-type": "application/octet-stream" },
      body: Buffer.from("any bytes: refused before they are read"),
    });
    expectError({ status: upload.status, body: await upload.json() }, 503, "flows_disabled");
    const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[]; unbound: string[] };
    expect(listeners.unbound).toContain("flows.flows.udp");
  });
});
