/**
 * The embedded poller of the `default` pool runs on exactly one replica at a time: three service processes on one
 * PostgreSQL, each with the embedded poller on, share a node; only the holder of the lease polls it. Stopping the
 * holder (SIGTERM) or killing it (SIGKILL) moves the polling to another replica; the time it takes is measured.
 */
import { rmSync } from "node:fs";
import { createTestDatabase } from "../support/db.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";
import { until } from "../support/wait.js";

const TOKEN = "replica-poller-token-0123456789abcdef";
const replicas: SpawnedKernel[] = [];
let env: NodeJS.ProcessEnv;

/** Polls of the default pool this replica's embedded poller made (0 when it made none, or does not answer). */
async function polls(k: SpawnedKernel): Promise<number> {
  const res = await fetch(`${k.url}/metrics`).catch(() => null);
  if (!res || res.status !== 200) return 0;
  const text = await res.text();
  return text
    .split("\n")
    .filter((l) => l.startsWith('nms_polling_polls_total{pool="default"'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

async function replica(): Promise<SpawnedKernel> {
  const k = await spawnKernel({ env, timeoutMs: 60_000 });
  replicas.push(k);
  return k;
}

/** The one replica whose poller has polled since `before` (a map of counts), waiting until exactly one has. */
async function pollingReplica(candidates: SpawnedKernel[], before: Map<SpawnedKernel, number>, timeoutMs: number): Promise<SpawnedKernel> {
  return until(
    "exactly one replica polling",
    async () => {
      const moved = [];
      for (const k of candidates) if ((await polls(k)) > (before.get(k) ?? 0)) moved.push(k);
      return moved.length === 1 ? moved[0] : null;
    },
    timeoutMs,
  );
}

beforeAll(async () => {
  env = {
    DATABASE_URL: await createTestDatabase(),
    NMS_BUILTIN_PLUGINS: "true",
    NMS_BOOTSTRAP_TOKEN: TOKEN,
    NMS__pluginConfig__polling__defaultIntervalSecs: "5",
    NMS__pluginConfig__polling__leaseRetryMs: "500",
  };
  await replica();
  await replica();
  const res = await fetch(`${replicas[0].url}/api/v1/nodes`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "loopback", address: "127.0.0.1" }),
  });
  expect(res.status).toBe(201);
}, 120_000);

afterAll(async () => {
  for (const k of replicas) {
    await k.stop("SIGKILL");
    rmSync(k.dataDir, { recursive: true, force: true });
  }
});

describe("the embedded poller across replicas", () => {
  it("polls on one replica only, and moves when that replica stops or is killed", async () => {
    const [a, b] = replicas;
    const leader = await pollingReplica([a, b], new Map(), 30_000);
    const standby = leader === a ? b : a;
    // Several intervals later the standby still has not polled.
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await polls(standby)).toBe(0);
    expect(await polls(leader)).toBeGreaterThan(1);

    // A third replica joins as a standby; then the leader stops gracefully.
    const c = await replica();
    const counts = new Map([
      [standby, 0],
      [c, await polls(c)],
    ]);
    const stopped = Date.now();
    expect(await leader.stop("SIGTERM")).toBe(0);
    const next = await pollingReplica([standby, c], counts, 15_000);
    const afterStop = Date.now() - stopped;

    // The new leader is killed: its lock goes with its connection, and the last replica takes over.
    const last = next === standby ? c : standby;
    const lastBefore = new Map([[last, await polls(last)]]);
    const killed = Date.now();
    await next.stop("SIGKILL");
    await pollingReplica([last], lastBefore, 15_000);
    const afterKill = Date.now() - killed;
    process.stdout.write(`embedded poller failover: ${afterStop} ms after SIGTERM, ${afterKill} ms after SIGKILL (lease retry 500 ms)\n`);
    expect(afterStop).toBeLessThan(15_000);
    expect(afterKill).toBeLessThan(15_000);
  }, 120_000);
});
