/**
 * The service as it runs (`node --openssl-config=config/openssl.cnf dist/core/main.js`, spawned) sends no TLS 1.3 session
 * tickets on the syslog TLS listener. A sender that writes and never reads (loggen, scripts, many appliances) would leave the
 * tickets unread, and closing a socket with unread data makes Linux reset the connection and throw away what the sender had
 * not transmitted yet: the tail of its messages whenever the service is behind (measured: 13–18k of 50k lost per run at
 * 10k msg/s; none with this configuration, docs/performance.md). Without the configuration this test sees two tickets.
 */
import { once } from "node:events";
import { connect as tlsConnect } from "node:tls";
import { spawnKernel, type SpawnedKernel } from "../../../test/support/spawnKernel.js";
import { until } from "../../../test/support/wait.js";

const TOKEN = "nms_bootstrap_tls_close_test_token_0123456789";
let k: SpawnedKernel;

const api = async (path: string) => {
  const res = await fetch(`${k.url}/api/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return res.json() as Promise<unknown>;
};

beforeAll(async () => {
  k = await spawnKernel({
    env: {
      NMS_BOOTSTRAP_TOKEN: TOKEN,
      NMS_BUILTIN_PLUGINS: "true",
      NMS_LOG_LEVEL: "warn",
      NMS__pluginConfig__polling__embeddedPoller: "false",
      NMS__pluginConfig__events__syslog__tls: "0",
      NMS__pluginConfig__events__syslog__bindAddress: "127.0.0.1",
      NMS__pluginConfig__events__flushMs: "50",
    },
    timeoutMs: 45000,
  });
}, 60000);

afterAll(async () => {
  await k?.stop();
});

it("sends no TLS 1.3 session ticket after the handshake, and takes the sender's messages", async () => {
  const listeners = (await api("/listeners")) as { listeners: { name: string; port: number }[] };
  const port = listeners.listeners.find((l) => l.name === "syslog.tls")!.port;
  const c = tlsConnect({ host: "127.0.0.1", port, rejectUnauthorized: false, minVersion: "TLSv1.3" });
  let tickets = 0;
  c.on("session", () => tickets++);
  await once(c, "secureConnect");
  expect(c.getProtocol()).toBe("TLSv1.3");
  const msg = "<14>1 2026-11-24T10:00:00Z sender app - - - no ticket";
  for (let i = 0; i < 10; i++) c.write(`${Buffer.byteLength(msg)} ${msg}`);
  const stored = async () => {
    const rows = (await api(`/events/stats?group_by=kind&start=2000-01-01T00:00:00Z`)) as { key: string; count: number }[];
    return rows.find((r) => r.key === "syslog")?.count ?? 0;
  };
  await until("the messages stored", async () => (await stored()) >= 10, 20000);
  expect(tickets).toBe(0);
  c.end();
  expect(k.stdout()).not.toContain("TLS 1.3 session tickets are on");
}, 60000);
