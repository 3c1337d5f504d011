/**
 * Forwarding on a remote poller: a destination restricted to a pool is teed by that pool's pollers, from what their
 * own listeners receive, and not by the core; a destination without a pool (every pool) is teed by every poller too,
 * and the core does not tee again what a poller forwards to it. A real `nms poller` process (from dist, with the events, flows and
 * forwarding plugins) syncs with the core, relays syslog verbatim to an rsyslog receiver and re-encodes traps with the
 * destination's sealed community (opened with the same NMS_SECRET_KEY); the core's status route sums what the poller
 * reported. A poller without the core's key leaves the destination with a secret out and says so.
 * Needs `npm run build` (the poller runs from dist, as operators run it).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { startRemotePoller, type RemotePollerProcess } from "../../../test/support/remotePoller.js";
import { sendUdp, startRsyslogReceiver, stopAllSyslogPeers, type RsyslogReceiver } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { expectError } from "../../../test/support/assertions.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import { ForwardingTee } from "../services/ForwardingTee.js";

type Row = Record<string, unknown>;

const SECRET_KEY = randomBytes(32).toString("hex");
let k: TestKernel;
let rx: RsyslogReceiver;
let rxEvery: RsyslogReceiver;
const pollers: RemotePollerProcess[] = [];

const pollerEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  NMS__pluginConfig__events__syslog__udp: "0",
  NMS__pluginConfig__events__syslog__tcp: "null",
  NMS__pluginConfig__events__syslog__tls: "null",
  NMS__pluginConfig__events__syslog__bindAddress: "127.0.0.1",
  NMS__pluginConfig__events__traps__udp: "null",
  NMS__pluginConfig__flows__udp: "null",
  NMS__pluginConfig__forwarding__reloadMs: "1000",
  ...extra,
});

async function startPoller(id: string, env: NodeJS.ProcessEnv): Promise<{ poller: RemotePollerProcess; syslogPort: number }> {
  const poller = startRemotePoller({
    coreUrl: k.url,
    token: await k.token("admin"),
    id,
    pool: "edge",
    plugins: ["inventory", "polling", "alerts", "events", "flows", "forwarding"],
    env,
  });
  pollers.push(poller);
  const registered = await until(
    `${id} registered with its listeners`,
    async () => {
      const res = await k.request("GET", "/pollers");
      const row = (res.body as { id: string; listeners: string[] }[]).find((p) => p.id === id);
      return row?.listeners.some((l) => l.startsWith("syslog.udp:")) ? row : null;
    },
    // A poller process starts slowly on a loaded machine (it loads six plugins, then registers).
    60000,
    () => poller.output().slice(-6000),
  );
  return { poller, syslogPort: Number(registered.listeners.find((l) => l.startsWith("syslog.udp:"))!.split(":")[1]) };
}

beforeAll(async () => {
  [rx, rxEvery] = await Promise.all([startRsyslogReceiver({ protocol: "udp" }), startRsyslogReceiver({ protocol: "udp" })]);
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      secretKey: SECRET_KEY,
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: null, tcp: null, tls: null }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: null },
        forwarding: { reloadMs: 1000 },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  for (const p of pollers) await p.stop();
  await k?.stop();
  await stopAllSyslogPeers();
});

it("a pool destination is teed by the pool's poller from what it receives, and its counters reach the core's status route", async () => {
  const res = await k.request("POST", "/forwarding/destinations", {
    body: { name: "edge relay", dest_kind: "syslog_udp", source_kind: "syslog", target: `127.0.0.1:${rx.port}`, pool: "edge" },
  });
  expect(res.status).toBe(201);
  const id = (res.body as { id: string }).id;
  // Without a pool: every pool's, so the edge poller tees it too (a filter keeps the rules off the fast path).
  const every = await k.request("POST", "/forwarding/destinations", {
    body: {
      name: "every pool relay",
      dest_kind: "syslog_udp",
      source_kind: "syslog",
      target: `127.0.0.1:${rxEvery.port}`,
      filter: { mode: "all", conditions: [{ field: "pool", op: "eq", value: "edge" }] },
    },
  });
  expect(every.status).toBe(201);
  const everyId = (every.body as { id: string }).id;
  await k.context("forwarding").get(ForwardingTee).reload();
  const { poller, syslogPort } = await startPoller("edge-1", pollerEnv({ NMS_SECRET_KEY: SECRET_KEY }));
  // The poller picks the destination up at its first sync; send until the relay is in place.
  const line = (i: number) => `<13>Nov 24 10:00:00 edge-router app: relayed by the poller ${i}`;
  let sent = 0;
  await until(
    "the poller relays",
    async () => {
      await sendUdp(syslogPort, line(sent++));
      return rx.messages().some((l) => l.includes("relayed by the poller")) ? true : null;
    },
    20000,
    () => poller.output().slice(-3000),
  );
  const s = await until("the poller's counters on the core", async () => {
    const st = (await k.request("GET", `/forwarding/destinations/${id}/status`)).body as Row;
    return (st.forwarded as number) > 0 && (st.pollers as Row[]).length === 1 ? st : null;
  });
  expect(s.pollers).toEqual([expect.objectContaining({ poller_id: "edge-1", connection: "ready" })]);
  // Verbatim: the receiver got the bytes as sent.
  expect(
    rx
      .messages()
      .filter((l) => l.includes("relayed by the poller"))
      .every((l) => /relayed by the poller \d+$/.test(l)),
  ).toBe(true);
  // The core itself sends nothing for a pool destination.
  expect(k.context("forwarding").get(ForwardingTee).status(id)).toMatchObject({ forwarded: 0, connection: "idle" });

  // The destination of every pool: the poller relays what it received (its pool in the filter's `pool` field) ...
  await until(
    "the poller relays to the destination of every pool",
    async () => (rxEvery.messages().some((l) => l.includes("relayed by the poller")) ? true : null),
    20000,
    () => poller.output().slice(-3000),
  );
  const e = await until("its counters on the core", async () => {
    const st = (await k.request("GET", `/forwarding/destinations/${everyId}/status`)).body as Row;
    return (st.forwarded as number) > 0 && (st.pollers as Row[]).length === 1 ? st : null;
  });
  expect(e).toMatchObject({ dropped_filter: 0, pollers: [expect.objectContaining({ poller_id: "edge-1" })] });
  // ... and the core, which got the same records forwarded by the poller (POST /events/forwarded), does not tee them
  // again: nothing from its own tee, and each line reached the receiver once.
  expect(k.context("forwarding").get(ForwardingTee).status(everyId)).toMatchObject({ forwarded: 0, dropped_filter: 0 });
  const relayed = rxEvery.messages().filter((l) => l.includes("relayed by the poller"));
  expect(new Set(relayed).size).toBe(relayed.length);
  expect((await k.request("DELETE", `/forwarding/destinations/${everyId}`)).status).toBe(204);
  expect((await k.request("DELETE", `/forwarding/destinations/${id}`)).status).toBe(204);
}, 150_000);

it("a poller without the core's secret key leaves a destination with a secret out, naming it", async () => {
  const res = await k.request("POST", "/forwarding/destinations", {
    body: {
      name: "edge traps",
      dest_kind: "snmp_trap_udp",
      source_kind: "trap",
      target: "127.0.0.1:1162",
      pool: "edge",
      verbatim: false,
      community: "s3cret-community",
    },
  });
  expect(res.status).toBe(201);
  const { poller } = await startPoller("edge-2", pollerEnv());
  await until(
    "the warning",
    async () => (poller.output().includes("its secret cannot be opened here") ? true : null),
    20000,
    () => poller.output().slice(-3000),
  );
  expect(poller.output()).toContain((res.body as { id: string }).id);
  expect(poller.output()).not.toContain("s3cret-community");
}, 120_000);

it("the sync route: a poller's API token only (ManageSystem, scope All, no session), a body checked, secrets sealed in the answer", async () => {
  const created = await k.request("POST", "/forwarding/destinations", {
    body: {
      name: "core traps",
      dest_kind: "snmp_trap_udp",
      source_kind: "trap",
      target: "127.0.0.1:1162",
      pool: "core-pool",
      verbatim: false,
      community: "s3cret-community",
    },
  });
  expect(created.status).toBe(201);
  const everyPool = await k.request("POST", "/forwarding/destinations", {
    body: { name: "every pool", dest_kind: "syslog_udp", source_kind: "syslog", target: "127.0.0.1:1514" },
  });
  expect(everyPool.status).toBe(201);
  const elsewhere = await k.request("POST", "/forwarding/destinations", {
    body: { name: "elsewhere", dest_kind: "syslog_udp", source_kind: "syslog", target: "127.0.0.1:1514", pool: "other-pool" },
  });
  expect(elsewhere.status).toBe(201);
  const body = { poller_id: "p-1", pool: "core-pool", counters: {} };
  const sync = async (token: string | null) => k.request("POST", "/forwarding/pollers/sync", { body, token });
  expectError(await sync(null), 401, "unauthorized");
  expectError(await sync("not-a-token"), 401, "unauthorized");
  for (const role of ["viewer", "operator"] as const) {
    expectError(await sync(await k.token(role)), 403, "permission_denied");
    expectError(await sync(await k.session(role)), 403, "permission_denied");
  }
  expectError(await sync(await k.token("admin", { folders: [randomUUID()] })), 403, "scope_unsupported");
  expectError(await sync(await k.session("admin", { folders: [randomUUID()] })), 403, "scope_unsupported");
  // A person, even an unrestricted admin, gets no sealed secrets: only what a poller authenticates with, an API token.
  expectError(await sync(await k.session("admin")), 403, "poller_token_required");
  expect((await sync(await k.token("admin"))).status).toBe(200);
  expect((await k.request("POST", "/forwarding/pollers/sync", { body: { poller_id: "p 1", pool: "edge" } })).status).toBe(400);
  expect((await k.request("POST", "/forwarding/pollers/sync", { body: { poller_id: "p-1", pool: "bad pool!" } })).status).toBe(400);
  const ok = await k.request("POST", "/forwarding/pollers/sync", { body });
  expect(ok.status).toBe(200);
  const text = JSON.stringify(ok.body);
  expect(text).not.toContain("s3cret-community");
  expect(text).toContain("sealed:v1:");
  // Its pool's destinations and those of every pool (null); not another pool's.
  const got = (ok.body as { destinations: Row[] }).destinations;
  expect(got).toHaveLength(2);
  expect(got).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ id: (created.body as { id: string }).id, pool: "core-pool", community_sealed: expect.stringMatching(/^sealed:v1:/) }),
      expect.objectContaining({ id: (everyPool.body as { id: string }).id, pool: null }),
    ]),
  );
  // Counters of any shape are cleaned, never trusted.
  const junk = await k.request("POST", "/forwarding/pollers/sync", { body: { ...body, counters: { x: { forwarded: -5, connection: "weird" }, y: "nope" } } });
  expect(junk.status).toBe(200);
});
