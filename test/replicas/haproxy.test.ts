/**
 * Three service replicas on one PostgreSQL behind a real HAProxy (test/support/haproxy.ts): HTTP clients, a Socket.IO
 * client and a remote poller (`nms poller`) all go through the balancer. Requests land on all three replicas; one is
 * stopped gracefully (SIGTERM) during a tight loop of requests and nothing answers 5xx through the balancer: with
 * http.stopDrainMs the replica first reports not ready, HAProxy's check takes it out of rotation, and only then does it
 * stop taking requests. The poller keeps registering, heartbeating and posting samples through the balancer.
 */
import { readFileSync, rmSync } from "node:fs";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { startHaproxy, type RunningHaproxy } from "../support/haproxy.js";
import { startRemotePoller, type RemotePollerProcess } from "../support/remotePoller.js";
import { connectSocket } from "../support/socketClient.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";
import { until } from "../support/wait.js";

const TOKEN = "haproxy-replicas-token-0123456789abcdef";
const DRAIN_MS = 1500;
const replicas: SpawnedKernel[] = [];
let lb: RunningHaproxy;
let poller: RemotePollerProcess | undefined;
let dbUrl: string;
let nodeId: string;

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${lb.url}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
  });
}

async function samples(): Promise<number> {
  const [row] = await rawQuery<{ n: number }>(dbUrl, "SELECT count(*)::int AS n FROM polling.samples WHERE node_id = $1", [nodeId]);
  return row.n;
}

beforeAll(async () => {
  dbUrl = await createTestDatabase();
  const env = {
    DATABASE_URL: dbUrl,
    NMS_BUILTIN_PLUGINS: "true",
    NMS_BOOTSTRAP_TOKEN: TOKEN,
    NMS_STOP_DRAIN_MS: String(DRAIN_MS),
    NMS__pluginConfig__polling__embeddedPoller: "false",
    NMS__pluginConfig__polling__defaultIntervalSecs: "5",
  };
  // The first migrates; the other two find the schema in place.
  replicas.push(await spawnKernel({ env, timeoutMs: 60_000 }));
  replicas.push(...(await Promise.all([spawnKernel({ env, timeoutMs: 60_000 }), spawnKernel({ env, timeoutMs: 60_000 })])));
  lb = await startHaproxy(replicas.map((k, i) => ({ name: `r${i + 1}`, url: k.url })));
  await lb.waitUp();
}, 180_000);

afterAll(async () => {
  await poller?.stop();
  await lb?.stop();
  for (const k of replicas) {
    await k.stop("SIGKILL");
    rmSync(k.dataDir, { recursive: true, force: true });
  }
});

describe("three replicas behind HAProxy", () => {
  it("runs the configuration docs/operations.md shows (bar addresses and the admin socket's path)", () => {
    const doc = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
    const lines = lb.config.split("\n").filter((l) => l.trim() && !/^\s+(server|bind|stats socket) /.test(l));
    expect(lines.filter((l) => !doc.includes(`\n${l}\n`))).toEqual([]);
  });

  it("spreads HTTP requests over all three, and carries Socket.IO (WebSocket) through the balancer", async () => {
    const created = await api("/nodes", { method: "POST", body: JSON.stringify({ name: "behind-lb", address: "127.0.0.1", pool: "edge" }) });
    expect(created.status).toBe(201);
    nodeId = ((await created.json()) as { id: string }).id;
    const servedBy = new Map<string, number>();
    for (let i = 0; i < 30; i++) {
      const res = await api(`/nodes/${nodeId}`);
      expect(res.status).toBe(200);
      const who = res.headers.get("x-served-by")!;
      servedBy.set(who, (servedBy.get(who) ?? 0) + 1);
    }
    expect([...servedBy.keys()].sort()).toEqual(["r1", "r2", "r3"]);
    // Round robin without stickiness: each gets about its third (HAProxy's threads each take turns in the rotation).
    process.stdout.write(`haproxy round robin: 30 requests by replica ${JSON.stringify([...servedBy].sort())}\n`);
    for (const n of servedBy.values()) expect(n).toBeGreaterThanOrEqual(6);

    // A WebSocket through the balancer to whichever replica; a change made through the balancer (any replica) reaches it.
    const socket = await connectSocket(lb.url, TOKEN);
    try {
      expect(await socket.subscribe("inventory.changes")).toMatchObject({ ok: true });
      for (let i = 0; i < 3; i++) {
        const body = { name: "behind-lb", address: "127.0.0.1", pool: "edge", model: `update ${i}` };
        const res = await api(`/nodes/${nodeId}`, { method: "PUT", body: JSON.stringify(body) });
        expect(res.status).toBe(200);
      }
      await until("three updates on the socket", async () => (socket.received("inventory.node.updated").length >= 3 ? true : null), 10_000);
    } finally {
      socket.close();
    }
  });

  it("registers a remote poller through the balancer, whose samples arrive", async () => {
    poller = startRemotePoller({ coreUrl: lb.url, token: TOKEN, id: "edge-lb", pool: "edge", plugins: ["inventory", "polling"] });
    await until(
      "the poller registered",
      async () => {
        const res = await api("/pollers");
        const row = ((await res.json()) as { id: string; online: boolean }[]).find((p) => p.id === "edge-lb");
        return row?.online ? row : null;
      },
      30_000,
      () => poller!.output().slice(-2000),
    );
    await until(
      "samples from the poller",
      async () => ((await samples()) > 0 ? true : null),
      30_000,
      () => poller!.output().slice(-2000),
    );
  }, 60_000);

  it("drains a replica stopped with SIGTERM: no 5xx through the balancer during a tight loop", async () => {
    const statuses = new Map<number, number>();
    const servedBy = new Map<string, number>();
    let lastOnStopping = 0;
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const res = await api(`/nodes/${nodeId}`).catch((err: Error) => ({ status: -1, headers: new Headers(), text: async () => err.message }));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const who = res.headers.get("x-served-by");
        if (who) servedBy.set(who, (servedBy.get(who) ?? 0) + 1);
        if (who === "r2") lastOnStopping = Date.now();
        if (res.status !== 200) process.stdout.write(`unexpected ${res.status}: ${(await res.text()).slice(0, 200)}\n`);
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await new Promise((r) => setTimeout(r, 1000));
    const samplesBefore = await samples();
    const stopping = replicas[1];
    const stoppedAt = Date.now();
    const code = await stopping.stop("SIGTERM");
    const stopMs = Date.now() - stoppedAt;
    // The loop runs on across the stop, and a while after it.
    await new Promise((r) => setTimeout(r, 2000));
    stop = true;
    await Promise.all(workers);

    expect(code).toBe(0);
    expect(stopMs).toBeGreaterThanOrEqual(DRAIN_MS);
    expect((await lb.states()).get("r2")).toMatch(/^DOWN/);
    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    const drainedAfter = lastOnStopping - stoppedAt;
    process.stdout.write(
      `haproxy drain: ${total} requests across a SIGTERM (stop took ${stopMs} ms, the last request reached it ${drainedAfter} ms after the signal), statuses ${JSON.stringify([...statuses])}, by replica ${JSON.stringify([...servedBy])}\n`,
    );
    expect([...statuses.keys()]).toEqual([200]);
    expect(total).toBeGreaterThan(100);
    // Out of rotation by the balancer's check, before the drain time was over.
    expect(drainedAfter).toBeLessThan(DRAIN_MS);
    // Out of rotation by the balancer's check, before the drain time was over.
    expect(drainedAfter).toBeLessThan(DRAIN_MS);
    expect([...servedBy.keys()].sort()).toEqual(["r1", "r2", "r3"]);

    // The poller goes on through the two replicas left.
    await until(
      "samples after the stop",
      async () => ((await samples()) > samplesBefore ? true : null),
      20_000,
      () => poller!.output().slice(-2000),
    );
    const res = await api("/pollers");
    expect(((await res.json()) as { id: string; online: boolean }[]).find((p) => p.id === "edge-lb")?.online).toBe(true);
  }, 60_000);
});
