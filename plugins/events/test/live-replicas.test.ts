/**
 * events.live across two core replicas on one database: syslog received by one replica reaches a subscriber connected
 * to the other (filtered channels go through the PostgreSQL adapter only while another replica has a subscriber).
 */
import { spawnKernel, type SpawnedKernel } from "../../../test/support/spawnKernel.js";
import { closeAllSockets, connectSocket } from "../../../test/support/socketClient.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { BOOTSTRAP_TOKEN, startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";

let k: TestKernel;
let replica: SpawnedKernel;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin], overrides: { realtime: { adapter: "postgres" } } });
  replica = await spawnKernel({
    env: {
      DATABASE_URL: k.databaseUrl!,
      NMS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
      NMS_BUILTIN_PLUGINS: "true",
      NMS_LOG_LEVEL: "warn",
      NMS_REALTIME_ADAPTER: "postgres",
      NMS__pluginConfig__polling__embeddedPoller: "false",
      NMS__pluginConfig__events__syslog__udp: "0",
      NMS__pluginConfig__events__syslog__bindAddress: "127.0.0.1",
      NMS__pluginConfig__events__flushMs: "50",
    },
    timeoutMs: 45000,
  });
}, 90000);

afterAll(async () => {
  closeAllSockets();
  await replica?.stop();
  await k?.stop();
});

it("a subscriber on one replica gets the events the other replica received", async () => {
  const res = await fetch(`${replica.url}/api/v1/listeners`, { headers: { authorization: `Bearer ${BOOTSTRAP_TOKEN}` } });
  const port = ((await res.json()) as { listeners: { name: string; port: number }[] }).listeners.find((l) => l.name === "syslog.udp")!.port;
  const s = await connectSocket(k.url, k.adminToken);
  expect(await s.subscribe({ channel: "events.live", filter: { kind: "syslog" } })).toEqual({ ok: true, channel: "events.live" });
  // The other replica learns of the subscriber through PostgreSQL: keep sending until one arrives.
  let n = 0;
  await until(
    "an event from the other replica",
    async () => {
      await sendUdp(port, `<14>across replicas ${n++}`);
      return s.received("events.events").some((p) => (p as { message: string }[]).some((e) => e.message.startsWith("across replicas")));
    },
    20000,
    () => replica.stderr().slice(-2000),
  );
});
