/**
 * `pluginConfig.events.syslog.tlsCert` / `tlsKey` (issue 10: "plus .tlsCert, .tlsKey paths; a self-signed pair is made
 * in the data dir when unset"): a kernel booted with a certificate and key made here (openssl) serves exactly that
 * certificate on its TLS syslog listener: a node:tls client trusting only it connects, sees the configured
 * certificate's fingerprint, and its message is stored; no self-signed pair is made. Only one of the two files set
 * leaves the TLS listener unbound (logged), and the kernel still runs.
 */
import { randomUUID, X509Certificate } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { selfSignedCert } from "../../../test/support/httpTarget.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";

type Row = Record<string, unknown>;
const PLUGINS = [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin];

let dir: string;
let certPath: string;
let keyPath: string;
let certPem: string;
let k: TestKernel | null = null;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "nms-tls-config-"));
  certPath = join(dir, "syslog.crt");
  keyPath = join(dir, "syslog.key");
  const pair = selfSignedCert(2, { cn: "configured syslog pair" });
  writeFileSync(certPath, pair.cert);
  writeFileSync(keyPath, pair.key, { mode: 0o600 });
  certPem = readFileSync(certPath, "utf8");
});

afterEach(async () => {
  await k?.stop();
  k = null;
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function boot(syslog: Row): Promise<TestKernel> {
  return startTestKernel({
    plugins: PLUGINS,
    overrides: { pluginConfig: { events: { syslog: { tls: 0, bindAddress: "127.0.0.1", ...syslog }, flushMs: 50 } } },
  });
}

function connectTls(port: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    // Trusts the configured certificate only; the host is checked against its subject alt names (IP 127.0.0.1).
    const s = tlsConnect({ host: "127.0.0.1", port, ca: certPem }, () => resolve(s));
    s.once("error", reject);
  });
}

describe("the TLS syslog listener's configured certificate", () => {
  it("serves the tlsCert/tlsKey files: the peer certificate's fingerprint is the configured one, and a message is stored", async () => {
    k = await boot({ tlsCert: certPath, tlsKey: keyPath });
    const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[]; unbound: string[] };
    const tls = listeners.listeners.find((l) => l.name === "syslog.tls");
    expect(tls).toMatchObject({ plugin: "events", stream: "syslog", protocol: "tls", address: "127.0.0.1" });
    const s = await connectTls(tls!.port as number);
    expect(s.authorized).toBe(true);
    const peer = s.getPeerX509Certificate()!;
    const configured = new X509Certificate(certPem);
    expect(peer.fingerprint256).toBe(configured.fingerprint256);
    expect(peer.subject).toContain("CN=configured syslog pair");
    const marker = `tls-${randomUUID()}`;
    const closed = new Promise<void>((r) => s.once("close", () => r()));
    s.end(`<13>1 2026-11-25T10:00:00Z tls-host tlsapp - - - over the configured pair ${marker}\n`);
    await closed;
    const pipeline = k.context("events").get(EventPipeline);
    const stored = await until("the message over TLS", async () => {
      await pipeline.flush();
      return ((await k!.request("GET", `/events?q=${marker}`)).body as Row[])[0];
    });
    expect(stored).toMatchObject({
      transport: "tls",
      listener: "syslog.tls",
      source_ip: "127.0.0.1",
      app: "tlsapp",
      host: "tls-host",
      message: `over the configured pair ${marker}`,
      malformed: false,
    });
    // The configured pair is used, not a self-signed one made in the data directory.
    expect(existsSync(join(k.dataDir, "events-tls"))).toBe(false);
  });

  it("only tlsCert set: the TLS listener stays unbound (logged), the kernel runs", async () => {
    k = await boot({ tlsCert: certPath, tlsKey: null });
    const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[]; unbound: string[] };
    expect(listeners.listeners.find((l) => l.name === "syslog.tls")).toBeUndefined();
    expect(listeners.unbound).toContain("events.syslog.tls");
    expect(k.logs.join("\n")).toMatch(/listener syslog\.tls not bound: .*both tlsCert and tlsKey/);
  });
});
