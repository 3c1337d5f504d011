/**
 * Issue 26's end-to-end run: three replicas on one PostgreSQL behind a real HAProxy (test/support/haproxy.ts), a
 * remote poller's samples posted through the balancer (round robin: consecutive posts land on different replicas) and
 * real syslog datagrams arriving at every replica's own UDP listener. Each threshold crossing fires one alert and one
 * notification per channel with the right dwell; an event rule with min_count 3 fires once for three messages landing
 * on three replicas; the owner of the node's partition is killed (SIGKILL) mid-run: its partitions move (the time is
 * measured and printed), the balancer takes it out of rotation, and no alert or notification is lost or doubled.
 */
import { rmSync } from "node:fs";
import { partitionOf } from "../../core/store/Partitions.js";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { startHaproxy, type RunningHaproxy } from "../support/haproxy.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";
import { freeUdpPort, sendUdp } from "../support/syslogPeers.js";
import { until } from "../support/wait.js";
import { startWebhookServer, type WebhookServer } from "../support/webhookServer.js";

const TOKEN = "e2e-replicas-haproxy-token-0123456789ab";
const PARTITIONS = 16;
const NODE_ADDRESS = "127.0.0.78";
type Row = Record<string, unknown>;

const replicas: SpawnedKernel[] = [];
const syslogPorts: number[] = [];
let lb: RunningHaproxy;
let db: string;
let hook: WebhookServer;
let nodeId: string;
let rttRule: string;
let eventRule: string;
let clock = 0;

/** A request through the balancer; answers the status, the body and the replica that served it. */
async function viaLb(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown; servedBy: string | null }> {
  const res = await fetch(`${lb.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null, servedBy: res.headers.get("x-served-by") };
}

/** The remote poller's post of one live sample, through the balancer; a poller resends what was not stored (5xx). */
async function sample(value: number): Promise<string | null> {
  clock = Math.max(clock + 1, Date.now());
  const s = { node_id: nodeId, metric: "rtt_ms", value, at_unix_ms: clock, ifindex: null, if_name: null, row: null, row_name: null };
  for (let attempt = 0; ; attempt++) {
    const res = await viaLb("POST", "/pollers/edge-9/samples", { samples: [{ ...s, pool: "edge", poller_id: "edge-9", backfill: false }], backfill: false });
    if (res.status === 200) return res.servedBy;
    if (res.status < 500 || attempt >= 10) throw new Error(`samples: ${res.status} ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** One syslog datagram from the node's address to replica `i`'s own UDP listener. */
const syslog = (i: number, text: string) => sendUdp(syslogPorts[i], `<180>Nov 29 12:00:00 edge-78 ${text}`, NODE_ADDRESS);

async function transitions(check: string): Promise<{ resolved: boolean }[]> {
  return rawQuery(db, "SELECT resolved FROM alerts.history WHERE node_id = $1 AND check_id = $2 ORDER BY recorded_at, id", [nodeId, check]);
}

const notified = (check: string) =>
  hook.received
    .map((r) => r.body as Row)
    .filter((b) => b.check === check)
    .map((b) => String(b.event));

/** Which replica (process id) holds which partitions. */
async function holders(): Promise<Map<number, number[]>> {
  const rows = await rawQuery<{ app: string; parts: number[] }>(
    db,
    `SELECT a.application_name AS app, array_agg(l.objid::int ORDER BY l.objid) AS parts
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted AND l.classid = (hashtext('nms.partitions')::bigint & 4294967295)::oid
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      GROUP BY a.application_name`,
  );
  return new Map(rows.map((r) => [Number(r.app.split(" ").pop()), r.parts]));
}

/** Waits until the live replicas hold every partition between them. */
function allHeldBy(live: SpawnedKernel[], timeoutMs: number): Promise<Map<number, number[]>> {
  return until(
    `the partitions held by ${live.length} replicas`,
    async () => {
      const h = await holders();
      const total = live.reduce((n, k) => n + (h.get(k.child.pid!)?.length ?? 0), 0);
      return total === PARTITIONS && live.every((k) => (h.get(k.child.pid!)?.length ?? 0) > 0) ? h : null;
    },
    timeoutMs,
  );
}

const settle = (ms = 2000) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  hook = await startWebhookServer();
  db = await createTestDatabase();
  for (let i = 0; i < 3; i++) syslogPorts.push(await freeUdpPort());
  const env = (i: number): NodeJS.ProcessEnv => ({
    DATABASE_URL: db,
    NMS_BUILTIN_PLUGINS: "true",
    NMS_BOOTSTRAP_TOKEN: TOKEN,
    NMS_LOG_LEVEL: "warn",
    NMS_PARTITIONS: String(PARTITIONS),
    NMS_PARTITIONS_RETRY_MS: "500",
    NMS__pluginConfig__events__syslog__udp: String(syslogPorts[i]),
    NMS__pluginConfig__events__syslog__bindAddress: "127.0.0.1",
    NMS__pluginConfig__polling__embeddedPoller: "false",
    NMS__pluginConfig__alerts__flushMs: "100",
    NMS__pluginConfig__events__flushMs: "100",
    NMS__pluginConfig__inventory__addressBookRefreshMs: "1000",
    NMS__pluginConfig__notifications__pollMs: "100",
  });
  replicas.push(await spawnKernel({ env: env(0), timeoutMs: 90_000 }));
  replicas.push(...(await Promise.all([1, 2].map((i) => spawnKernel({ env: env(i), timeoutMs: 90_000 })))));
  lb = await startHaproxy(replicas.map((k, i) => ({ name: `r${i + 1}`, url: k.url })));
  await lb.waitUp();

  const created = async (path: string, body: unknown) => {
    const res = await viaLb("POST", path, body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as Row).id as string;
  };
  nodeId = await created("/nodes", { name: "edge-78", address: NODE_ADDRESS });
  rttRule = await created("/thresholds", { metric: "rtt_ms", scope_level: "node", scope_ids: [nodeId], direction: "above", warning: 100, dwell_samples: 3 });
  eventRule = await created("/event-rules", {
    name: "Port flapping",
    pattern: "PORT-FLAP",
    match_kind: "substring",
    severity: "warning",
    min_count: 3,
    window_secs: 300,
    node_id: nodeId,
  });
  const hookA = await created("/notification-channels", { name: "hook a", kind: "webhook", config: { url: `${hook.url}/a` } });
  const hookB = await created("/notification-channels", { name: "hook b", kind: "webhook", config: { url: `${hook.url}/b` } });
  await created("/routing-rules", { name: "everything", severity: null, channel_ids: [hookA, hookB] });
  expect((await viaLb("POST", "/pollers/register", { poller_id: "edge-9", pool: "edge" })).status).toBe(200);
  await allHeldBy(replicas, 30_000);
  // Each replica's inventory cache has the node (attribution of syslog by its source address).
  await settle(1500);
}, 300_000);

afterAll(async () => {
  await lb?.stop();
  for (const k of replicas) {
    await k.stop("SIGKILL");
    rmSync(k.dataDir, { recursive: true, force: true });
  }
  await hook?.close();
});

/** Notifications per channel path for a check, e.g. {"/a": ["fire"], "/b": ["fire"]}. */
function perChannel(check: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of hook.received) {
    const b = r.body as Row;
    if (b.check !== check) continue;
    (out[r.path] ??= []).push(String(b.event));
  }
  return out;
}

describe("three replicas behind HAProxy, partitioned engines", () => {
  it("a dwell of 3 counted across the replicas the balancer chose: one fire, one clear, one notification per channel each", async () => {
    const served = [await sample(500), await sample(500)];
    await settle(1000);
    expect(await transitions(rttRule)).toEqual([]);
    served.push(await sample(500));
    // Round robin with nothing else in flight: three posts, three replicas.
    expect(new Set(served).size).toBe(3);
    await until("the fire written", async () => (await transitions(rttRule)).length === 1, 15_000);
    for (let i = 0; i < 3; i++) await sample(5);
    await until("the clear notified on both channels", async () => notified(rttRule).length === 4, 20_000);
    await settle();
    expect(await transitions(rttRule)).toEqual([{ resolved: false }, { resolved: true }]);
    expect(perChannel(rttRule)).toEqual({ "/a": ["fire", "resolve"], "/b": ["fire", "resolve"] });
  }, 90_000);

  it("an event rule with min_count 3 fires once for three syslog messages landing on three replicas", async () => {
    await syslog(0, "%LINK-3-PORT-FLAP: Gi0/1");
    await syslog(1, "%LINK-3-PORT-FLAP: Gi0/2");
    await settle(1500);
    expect(await transitions(eventRule)).toEqual([]);
    await syslog(2, "%LINK-3-PORT-FLAP: Gi0/3");
    await until("the event alert notified on both channels", async () => notified(eventRule).length === 2, 20_000);
    await settle();
    expect(await transitions(eventRule)).toEqual([{ resolved: false }]);
    expect(perChannel(eventRule)).toEqual({ "/a": ["fire"], "/b": ["fire"] });
    // Each replica stored the message it received.
    const [row] = await rawQuery<{ n: number }>(db, "SELECT count(*)::int AS n FROM events.events WHERE message LIKE '%PORT-FLAP%'");
    expect(row.n).toBe(3);
  }, 60_000);

  it("SIGKILL of the node's owner mid-crossing: partitions and traffic move, nothing lost or doubled", async () => {
    const p = partitionOf(nodeId.toLowerCase(), PARTITIONS);
    const h = await holders();
    const victim = replicas.find((k) => h.get(k.child.pid!)?.includes(p))!;
    const survivors = replicas.filter((k) => k !== victim);
    // Two of the three samples of a crossing before the kill.
    await sample(500);
    await sample(500);
    await settle(500);
    const killed = Date.now();
    await victim.stop("SIGKILL");
    await allHeldBy(survivors, 15_000);
    const failover = Date.now() - killed;
    process.stdout.write(`e2e failover behind HAProxy after SIGKILL of the owner: ${failover} ms (3 -> 2 replicas, ${PARTITIONS} partitions)\n`);
    expect(failover).toBeLessThan(15_000);
    // The third sample, through the balancer (it retries what the dead replica refused), completes the dwell once.
    await sample(500);
    await until("the second fire written", async () => (await transitions(rttRule)).length === 3, 20_000);
    for (let i = 0; i < 3; i++) await sample(5);
    await until("the second clear notified on both channels", async () => notified(rttRule).length === 8, 20_000);
    await settle();
    expect(await transitions(rttRule)).toEqual([{ resolved: false }, { resolved: true }, { resolved: false }, { resolved: true }]);
    expect(perChannel(rttRule)).toEqual({ "/a": ["fire", "resolve", "fire", "resolve"], "/b": ["fire", "resolve", "fire", "resolve"] });
    // The balancer saw the replica go.
    const states = await lb.states();
    expect([...states.values()].filter((s) => s.startsWith("DOWN")).length).toBe(1);
  }, 120_000);
});
