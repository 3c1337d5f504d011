/**
 * Warehouse destinations against a local HTTPS server speaking the streaming-insert protocol
 * (test/support/warehouseServer.ts): syslog received by our UDP listener arrives as rows, authenticated with a
 * service-account key (RS256 JWT exchanged for a token) or the ambient identity (the metadata server); flows arrive
 * one row per record; a 500 or a 429 keeps the batch and retries it (no row lost, none twice); rows the warehouse
 * refuses are counted; the key and the token never appear in a response or a log line.
 */
import { join } from "node:path";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { cleanupFlowPeers, flowTempDir, generateTraffic, runSoftflowd, sumTotals, writePcap } from "../../../test/support/flowPeers.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { startWarehouseServer, type WarehouseServer } from "../../../test/support/warehouseServer.js";

type Row = Record<string, unknown>;

let k: TestKernel;
let wh: WarehouseServer;
let syslogUdp: number;
let flowPort: number;

async function createDestination(body: Row): Promise<string> {
  const res = await k.request("POST", "/forwarding/destinations", { body: { dest_kind: "warehouse", target: wh.target, ca_cert: wh.ca, ...body } });
  if (res.status !== 201) throw new Error(`create destination: ${res.status} ${JSON.stringify(res.body)}`);
  await k.context("forwarding").get(ForwardingTee).reload();
  return (res.body as { id: string }).id;
}

const status = async (id: string) => (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row;
const remove = async (id: string) => {
  expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBe(204);
  await k.context("forwarding").get(ForwardingTee).reload();
};
const table = (project: string, name: string) => wh.rows.get(`${project}/nms/${name}`) ?? [];

beforeAll(async () => {
  wh = await startWarehouseServer();
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: 0, bindAddress: "127.0.0.1" },
        forwarding: {
          reconnectMinMs: 50,
          reconnectMaxMs: 200,
          warehouse: { projectId: "ambient-project", batchRows: 25, flushMs: 50, metadataTokenUrl: wh.metadataTokenUrl },
        },
      },
    },
  });
  const listeners = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners;
  syslogUdp = listeners.find((l) => l.name === "syslog.udp")!.port as number;
  flowPort = listeners.find((l) => l.name === "flows.udp")!.port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
  await wh?.close();
  await cleanupFlowPeers();
});

it("streams syslog with a service-account key: one row per message, in batches, with a token from the JWT exchange", async () => {
  const key = wh.serviceAccountJson("keyed-project");
  const id = await createDestination({ name: "wh-syslog", source_kind: "syslog", service_account_json: key });
  const view = (await k.request("GET", `/forwarding/destinations/${id}`)).body as Row;
  expect(view).toMatchObject({ dest_kind: "warehouse", has_service_account: true, ambient_identity: false });
  const tokensBefore = wh.tokensIssued;
  for (let i = 0; i < 60; i++) await sendUdp(syslogUdp, `<134>1 2026-11-24T10:00:00.000Z router-7 sshd 42 AUTH - login ${i} accepted`);
  const rows = await until("60 rows", async () => (table("keyed-project", "syslog_events").length >= 60 ? table("keyed-project", "syslog_events") : null));
  expect(rows).toHaveLength(60);
  expect(rows[0]).toMatchObject({ source_ip: "127.0.0.1", facility: 16, severity: 6, hostname: "router-7", app_name: "sshd", procid: "42", msgid: "AUTH" });
  expect(new Set(rows.map((r) => r.message)).size).toBe(60);
  // Batches of at most 25 rows; one token for all of them.
  const inserts = wh.requests.filter((r) => r.path.includes("/keyed-project/") && r.path.endsWith("/insertAll"));
  expect(inserts.length).toBeGreaterThanOrEqual(3);
  for (const r of inserts) expect((JSON.parse(r.body) as { rows: unknown[] }).rows.length).toBeLessThanOrEqual(25);
  expect(wh.tokensIssued - tokensBefore).toBe(1);
  expect(await status(id)).toMatchObject({ forwarded: 60, send_errors: 0, connection: "connected", queued: 0 });
  // The key is sealed: never answered, never logged; the token neither.
  const secretBits = [JSON.parse(key).private_key.split("\n")[1], ...inserts.map((r) => r.headers.authorization!.slice(7))];
  const answered = JSON.stringify([(await k.request("GET", `/forwarding/destinations/${id}`)).body, (await k.request("GET", "/forwarding/destinations")).body]);
  for (const s of secretBits) {
    expect(answered).not.toContain(s);
    expect(k.logs.join("\n")).not.toContain(s);
  }
  await remove(id);
});

it("a 500 and a 429 keep the batch and retry it: every row arrives once; rows the warehouse refuses are counted", async () => {
  const id = await createDestination({ name: "wh-retry", source_kind: "syslog", service_account_json: wh.serviceAccountJson("retry-project") });
  wh.failNext(500);
  wh.failNext(429);
  for (let i = 0; i < 10; i++) await sendUdp(syslogUdp, `<13>Nov 24 10:00:00 host app: retry ${i}`);
  await until("10 rows after the retries", async () => (table("retry-project", "syslog_events").length === 10 ? true : null));
  const s = await until("counted", async () => {
    const st = await status(id);
    return st.forwarded === 10 ? st : null;
  });
  // Two failed requests, retried: connection errors, not lost rows.
  expect(s).toMatchObject({ send_errors: 0, connection_errors: 2, dropped_queue: 0 });
  expect(["server_error", "rate_limited"]).toContain(s.last_error_class);
  expect(new Set(table("retry-project", "syslog_events").map((r) => r.message)).size).toBe(10);

  wh.refuseRows([0, 1]);
  for (let i = 0; i < 5; i++) await sendUdp(syslogUdp, `<13>Nov 24 10:00:01 host app: refused ${i}`);
  const after = await until("refused rows counted", async () => {
    const st = await status(id);
    return (st.forwarded as number) + (st.send_errors as number) === 10 + 5 ? st : null;
  });
  // Every row accounted for: forwarded, or refused (a send error each).
  expect(after).toMatchObject({ forwarded: 13, send_errors: 2, connection_errors: 2, last_error_class: "insert_error" });
  await remove(id);
});

it("without a key it authenticates as the ambient identity (metadata server) and uses the configured project", async () => {
  const id = await createDestination({ name: "wh-ambient", source_kind: "syslog" });
  expect((await k.request("GET", `/forwarding/destinations/${id}`)).body).toMatchObject({ has_service_account: false, ambient_identity: true });
  await sendUdp(syslogUdp, "<14>1 2026-11-24T10:00:00Z edge-1 app - - - ambient hello");
  const rows = await until("the row", async () => (table("ambient-project", "syslog_events").length > 0 ? table("ambient-project", "syslog_events") : null));
  expect(rows[0]).toMatchObject({ hostname: "edge-1", message: "ambient hello" });
  expect(wh.requests.some((r) => r.path.startsWith("/computeMetadata/") && r.headers["metadata-flavor"] === "Google")).toBe(true);
  await remove(id);
});

it("a key the token endpoint refuses: nothing is sent, the failures are counted as auth errors", async () => {
  const key = JSON.parse(wh.serviceAccountJson("refused-project")) as Row;
  const stranger = JSON.parse(wh.serviceAccountJson("other")) as Row;
  // The account's e-mail with another account's private key: the signature does not verify.
  const id = await createDestination({
    name: "wh-refused",
    source_kind: "syslog",
    service_account_json: JSON.stringify({ ...key, private_key: stranger.private_key }),
  });
  await sendUdp(syslogUdp, "<14>1 2026-11-24T10:00:00Z edge-1 app - - - never");
  const s = await until("an auth failure", async () => {
    const st = await status(id);
    return (st.connection_errors as number) > 0 ? st : null;
  });
  // The row waits for a token (retried with backoff): the failures are the requests', no row is lost yet.
  expect(s).toMatchObject({ forwarded: 0, send_errors: 0, queued: 1, last_error_class: "auth", connection: "disconnected" });
  expect(table("refused-project", "syslog_events")).toHaveLength(0);
  await remove(id);
});

it("flows go one row per record, with the filter applied per record", async () => {
  const id = await createDestination({
    name: "wh-flows",
    source_kind: "flow",
    service_account_json: wh.serviceAccountJson("flow-project"),
    filter: { mode: "all", conditions: [{ field: "proto", op: "eq", value: "17" }] },
  });
  const traffic = generateTraffic(60, { startMs: Date.now() - 120_000, seed: 5 });
  const udpFlows = [...traffic.expected.keys()].filter((key) => key.split(" ")[2] === "17").length;
  const pcap = join(flowTempDir(), "wh.pcap");
  writePcap(pcap, traffic.packets);
  await runSoftflowd({ version: 9, pcap, port: flowPort });
  const rows = await until("every UDP flow", async () =>
    table("flow-project", "flow_records").length >= udpFlows ? table("flow-project", "flow_records") : null,
  );
  expect(rows).toHaveLength(udpFlows);
  expect(rows.every((r) => r.proto === 17 && typeof r.bytes === "number" && typeof r.src_addr === "string")).toBe(true);
  const s = await status(id);
  expect((s.forwarded as number) + (s.dropped_filter as number)).toBe(sumTotals(traffic.expected).flows);
  await remove(id);
}, 60_000);
