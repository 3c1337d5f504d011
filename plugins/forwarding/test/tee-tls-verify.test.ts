/**
 * TLS verification of syslog_tls destinations, against TLS receivers of our own (node:tls servers with self-signed
 * certificates made by the openssl CLI): the collector is verified against the system roots plus `ca_cert`, and its
 * name — an address target needs the address in the certificate's subject alt names. A destination that cannot
 * verify its collector delivers nothing, and says why: last_error_class "tls", connection_errors counting the
 * refused handshakes, its message still queued.
 */
import { createServer, type Server, type TLSSocket } from "node:tls";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";
import { selfSignedCert } from "../../../test/support/httpTarget.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";

type Row = Record<string, unknown>;

/** A TLS syslog receiver on a free loopback port: what it received, and how many TCP connections it accepted. */
interface TlsReceiver {
  port: number;
  cert: string;
  data(): string;
  connections: number;
  close(): Promise<void>;
}

async function startTlsReceiver(pair: { key: string; cert: string }): Promise<TlsReceiver> {
  const chunks: Buffer[] = [];
  const sockets = new Set<TLSSocket>();
  const r: Omit<TlsReceiver, "port"> & { port: number } = {
    port: 0,
    cert: pair.cert,
    data: () => Buffer.concat(chunks).toString("utf8"),
    connections: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
  const server: Server = createServer({ key: pair.key, cert: pair.cert }, (socket) => {
    sockets.add(socket);
    socket.on("data", (b: Buffer) => chunks.push(b));
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  // Every connect attempt (Node's client verifies the collector once its handshake is done, then closes).
  server.on("connection", () => r.connections++);
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((res, rej) => {
    server.once("error", rej);
    server.listen(0, "127.0.0.1", () => res());
  });
  r.port = (server.address() as { port: number }).port;
  return r;
}

let k: TestKernel;
let syslogPort: number;
const receivers: TlsReceiver[] = [];

async function createDestination(body: Row): Promise<string> {
  const res = await k.request("POST", "/forwarding/destinations", { body: { source_kind: "syslog", dest_kind: "syslog_tls", ...body } });
  if (res.status !== 201) throw new Error(`create destination: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}
const status = async (id: string) => (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row;

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: null },
        forwarding: { reconnectMinMs: 100, reconnectMaxMs: 400 },
      },
    },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  syslogPort = listeners.listeners.find((l) => l.name === "syslog.udp")!.port as number;
}, 60_000);

afterAll(async () => {
  await k?.stop();
  await Promise.all(receivers.map((r) => r.close()));
});

it("verifies the collector: no ca_cert or a certificate for another name delivers nothing and reports tls; the right ca_cert delivers", async () => {
  // The collector's certificate names 127.0.0.1 (SAN IP) — but no system root signed it.
  const forAddress = selfSignedCert(2, { cn: "collector.test", san: "IP:127.0.0.1,DNS:collector.test" });
  // A certificate for another name only: trusted through ca_cert, but not 127.0.0.1's.
  const forOtherName = selfSignedCert(2, { cn: "other.example", san: "DNS:other.example" });
  const [noCaRx, otherNameRx, goodRx] = await Promise.all([startTlsReceiver(forAddress), startTlsReceiver(forOtherName), startTlsReceiver(forAddress)]);
  receivers.push(noCaRx, otherNameRx, goodRx);

  const noCa = await createDestination({ name: "tls-no-ca", target: `127.0.0.1:${noCaRx.port}` });
  const otherName = await createDestination({ name: "tls-other-name", target: `127.0.0.1:${otherNameRx.port}`, ca_cert: otherNameRx.cert });
  // The CA of another collector: trusted, but it did not sign this one's certificate.
  const wrongCa = await createDestination({ name: "tls-wrong-ca", target: `127.0.0.1:${goodRx.port}`, ca_cert: forOtherName.cert });
  const good = await createDestination({ name: "tls-good", target: `127.0.0.1:${goodRx.port}`, ca_cert: goodRx.cert });
  await k.context("forwarding").get(ForwardingTee).reload();

  const line = `<14>1 2026-11-25T03:00:00.000Z tls-host app - - - verify-${Date.now()}`;
  await sendUdp(syslogPort, line);
  const frame = `${Buffer.byteLength(line)} ${line}`;
  await until(
    "the verified destination delivered",
    async () => goodRx.data().includes(frame),
    15_000,
    () => JSON.stringify(k.logs.slice(-20)),
  );

  // The failing ones retried (connection_errors grows with the backoff) and never sent a byte. (Waited for at most 5 s;
  // the assertions below say which one did not fail.)
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const all = await Promise.all([noCa, otherName, wrongCa].map(status));
    if (all.every((s) => (s.connection_errors as number) >= 2)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const [id, name] of [
    [noCa, "tls-no-ca"],
    [otherName, "tls-other-name"],
    [wrongCa, "tls-wrong-ca"],
  ]) {
    const s = await status(id);
    expect({ name, ...s }).toMatchObject({
      name,
      forwarded: 0,
      send_errors: 0,
      last_error_class: "tls",
      connection: expect.stringMatching(/^(connecting|disconnected)$/),
      queued: 1,
    });
    expect(s.connection_errors).toBeGreaterThanOrEqual(2);
    expect(typeof s.last_error_at).toBe("string");
  }
  // The far ends saw the attempts (several: retried) and received nothing; goodRx, also tried by the wrong-CA
  // destination, received the frame once.
  expect({ retried: noCaRx.connections >= 2, data: noCaRx.data() }).toEqual({ retried: true, data: "" });
  expect({ retried: otherNameRx.connections >= 2, data: otherNameRx.data() }).toEqual({ retried: true, data: "" });
  expect(goodRx.connections).toBeGreaterThanOrEqual(3);
  expect(goodRx.data()).toBe(frame);
  expect(await status(good)).toMatchObject({ forwarded: 1, send_errors: 0, connection_errors: 0, last_error_class: null, connection: "connected", queued: 0 });

  for (const id of [noCa, otherName, wrongCa, good]) expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBe(204);
  await k.context("forwarding").get(ForwardingTee).reload();
}, 30_000);
