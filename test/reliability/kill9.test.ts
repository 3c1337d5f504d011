/**
 * Durability on kill -9 (docs/operations.md#durability), on the real service: `node dist/core/main.js` as a child
 * process with its embedded PostgreSQL, on loopback and free ports.
 *
 * 1. Writes go through the API from concurrent workers; each is recorded as answered 2xx (with what it created) or
 *    not answered. Mid-load the service is SIGKILLed, then its PostgreSQL. After a restart on the same data dir every
 *    answered write is there, and no multi-row write (a discovery import, a bulk mute) is half there.
 * 2. The embedded PostgreSQL alone is SIGKILLed under a running service: requests answer 503 store_unavailable (never
 *    a 500, never a hang), readiness says not ready, the service restarts its server and serves again by itself.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { JsonLogger } from "../../core/logging/Logger.js";
import { EmbeddedServer } from "../../core/store/EmbeddedServer.js";
import { HEALTH_STORE_TIMEOUT_MS } from "../../core/health/HealthService.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";

const BOOTSTRAP = "kill9-test-bootstrap-token-0123456789";
const ENV: NodeJS.ProcessEnv = {
  NMS_BUILTIN_PLUGINS: "true",
  NMS_BOOTSTRAP_TOKEN: BOOTSTRAP,
  NMS__pluginConfig__polling__embeddedPoller: "false",
};
/** A request that takes longer than this counts as a hang. */
const REQUEST_TIMEOUT_MS = 10000;
const IMPORT_SIZE = 25;

interface Answer {
  status: number;
  body: unknown;
}
type Row = Record<string, unknown>;

async function api(base: string, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body: parsed };
}

/** Every item of a paged list (?cursor= from X-Next-Cursor). */
async function listAll(base: string, token: string, path: string): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (;;) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await fetch(`${base}/api/v1${path}${sep}limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    expect(res.status).toBe(200);
    rows.push(...((await res.json()) as Row[]));
    cursor = res.headers.get("x-next-cursor");
    if (!cursor) return rows;
  }
}

// ---------------------------------------------------------------- processes

const dirs: string[] = [];
const live: SpawnedKernel[] = [];

async function start(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<{ k: SpawnedKernel; readyMs: number }> {
  const t0 = Date.now();
  const k = await spawnKernel({ env: { ...ENV, ...env }, dataDir, timeoutMs: 60000 });
  live.push(k);
  return { k, readyMs: Date.now() - t0 };
}

function postmasterPid(dataDir: string): number {
  const file = join(dataDir, "pg", "postmaster.pid");
  expect(existsSync(file)).toBe(true);
  return Number(readFileSync(file, "utf8").split("\n")[0]);
}

/** Running (a zombie, ended but not yet reaped, is not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** The processes of the PostgreSQL on `dataDir` (each server process runs in its data directory). */
function serverProcesses(dataDir: string): number[] {
  const pgDir = join(dataDir, "pg");
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return readlinkSync(`/proc/${n}/cwd`) === pgDir;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The direct children of a process. */
function childrenOf(ppid: number): number[] {
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const stat = readFileSync(`/proc/${n}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === ppid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * SIGKILLs a postmaster. With `freezeChildren`, its children are stopped first (SIGSTOP), so they outlive it attached
 * to its shared memory, the worst case of what a killed server leaves: the next start must end them, or fail.
 */
function killPostmaster(pm: number, freezeChildren = false): number[] {
  const frozen = freezeChildren ? childrenOf(pm) : [];
  for (const c of frozen) killQuietly(c, "SIGSTOP");
  killQuietly(pm);
  return frozen;
}

function killQuietly(pid: number | undefined, signal: NodeJS.Signals = "SIGKILL"): void {
  if (!pid) return;
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}

afterAll(async () => {
  for (const k of live) {
    if (k.child.exitCode === null && k.child.signalCode === null) {
      k.child.kill("SIGTERM");
      const timer = setTimeout(() => k.child.kill("SIGKILL"), 10000);
      await k.exited;
      clearTimeout(timer);
    }
  }
  // Whatever a killed service left: its PostgreSQL's processes.
  for (const dir of dirs) {
    for (const p of serverProcesses(dir)) killQuietly(p);
    rmSync(dir, { recursive: true, force: true });
  }
});

function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "nms-kill9-"));
  dirs.push(dir);
  return dir;
}

async function adminToken(k: SpawnedKernel): Promise<string> {
  const res = await api(k.url, BOOTSTRAP, "POST", "/tokens", { name: `admin-${randomUUID()}`, role: "admin" });
  expect(res.status).toBe(201);
  return (res.body as { token: string }).token;
}

// ---------------------------------------------------------------- 1. service and PostgreSQL killed

type Kind = "node" | "folder" | "threshold" | "channel" | "import" | "mute";

interface Write {
  kind: Kind;
  /** The request's own key: the import's name prefix, the mute's metric name. */
  key: string;
  /** The expected row count of a multi-row write. */
  rows?: number;
  /** Answered 2xx (what it returned), or not answered (undefined) ... */
  answered?: { status: number; id?: string };
  /** ... or answered with an error status, which is not an acceptance. */
  refused?: number;
}

describe("kill -9 of the service and of its PostgreSQL", () => {
  it("keeps every write answered 2xx and no half of a multi-row write", async () => {
    const dataDir = newDataDir();
    const { k } = await start(dataDir);
    const token = await adminToken(k);

    // Nodes for the bulk mutes to name.
    const muted: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await api(k.url, token, "POST", "/nodes", { name: `mute-target-${i}`, address: `192.0.2.${i + 1}` });
      expect(res.status).toBe(201);
      muted.push((res.body as { id: string }).id);
    }

    const writes: Write[] = [];
    let seq = 0;
    let stopped = false;
    const request = (n: number): { w: Write; method: string; path: string; body: unknown } => {
      const key = `k${n}`;
      switch (n % 6) {
        case 0:
          return {
            w: { kind: "node", key },
            method: "POST",
            path: "/nodes",
            body: { name: `node-${key}`, address: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` },
          };
        case 1:
          return { w: { kind: "folder", key }, method: "POST", path: "/node-groups", body: { name: `folder-${key}` } };
        case 2:
          return {
            w: { kind: "threshold", key },
            method: "POST",
            path: "/thresholds",
            body: { metric: `m_${key}`, scope_level: "global", direction: "above", warning: 80, critical: 90 },
          };
        case 3:
          return {
            w: { kind: "channel", key },
            method: "POST",
            path: "/notification-channels",
            body: { name: `channel-${key}`, kind: "webhook", config: { url: `http://127.0.0.1:9/${key}` } },
          };
        case 4: {
          // Each import its own name prefix and /16, so its rows are easy to count afterwards.
          const nodes = Array.from({ length: IMPORT_SIZE }, (_, i) => ({ name: `imp-${key}-${i}`, address: `172.${16 + (n % 16)}.${n >> 4}.${i + 1}` }));
          return { w: { kind: "import", key: `imp-${key}-`, rows: IMPORT_SIZE }, method: "POST", path: "/discovery/import", body: { nodes } };
        }
        default:
          return {
            w: { kind: "mute", key: `mute_${key}`, rows: muted.length },
            method: "POST",
            path: "/mutes/bulk",
            body: { node_ids: muted, metric_name: `mute_${key}`, reason: "kill9", until: "2099-01-01T00:00:00Z" },
          };
      }
    };
    const worker = async () => {
      while (!stopped) {
        const { w, method, path, body } = request(seq++);
        writes.push(w);
        try {
          const res = await api(k.url, token, method, path, body);
          if (res.status >= 200 && res.status < 300) w.answered = { status: res.status, id: (res.body as { id?: string } | null)?.id };
          else w.refused = res.status;
        } catch {
          // not answered: the service died under it (or it hung past the timeout)
        }
      }
    };
    const workers = Array.from({ length: 8 }, () => worker());

    // Mid-load: enough answered writes of every kind, then the service, then its PostgreSQL, with requests in flight.
    const deadline = Date.now() + 30000;
    while (Date.now() < deadline) {
      const answered = new Set(writes.filter((w) => w.answered).map((w) => w.kind));
      if (answered.size === 6 && writes.filter((w) => w.answered).length >= 60) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const pm = postmasterPid(dataDir);
    k.child.kill("SIGKILL");
    const frozen = killPostmaster(pm, true);
    expect(frozen.length).toBeGreaterThan(0);
    stopped = true;
    await Promise.all(workers);
    await k.exited;

    // Refusals before the kill would hide a broken body shape in this test: there must be none.
    expect(writes.filter((w) => w.refused !== undefined && w.refused !== 503).map((w) => `${w.kind} ${w.refused}`)).toEqual([]);
    const answered = writes.filter((w) => w.answered);
    const unanswered = writes.filter((w) => !w.answered && w.refused === undefined);

    const { k: k2, readyMs } = await start(dataDir);
    console.log(
      `kill -9 of service + PostgreSQL: ${answered.length} writes answered 2xx, ${unanswered.length} in flight; spawn to ready after the kill: ${readyMs} ms`,
    );
    expect(k2.stdout()).toMatch(/ending processes of a killed embedded PostgreSQL that are still running/);
    expect(k2.stdout()).toMatch(/removed a stale postmaster\.pid/);
    expect(frozen.filter(alive)).toEqual([]);

    // Every answered single-row write is there.
    const paths: Partial<Record<Kind, string>> = { node: "/nodes", folder: "/node-groups", threshold: "/thresholds", channel: "/notification-channels" };
    const missing: string[] = [];
    for (const w of answered.filter((x) => paths[x.kind])) {
      expect(w.answered!.id).toMatch(/^[0-9a-f-]{36}$/);
      const res = await api(k2.url, token, "GET", `${paths[w.kind]}/${w.answered!.id}`);
      if (res.status !== 200) missing.push(`${w.kind} ${w.key} ${res.status}`);
    }
    expect(missing).toEqual([]);

    // Multi-row writes: all or nothing, and all when answered.
    const nodes = await listAll(k2.url, token, "/nodes");
    const mutes = await listAll(k2.url, token, "/mutes");
    const counts = new Map<string, number>();
    for (const n of nodes) {
      const m = /^(imp-k\d+-)\d+$/.exec(String(n.name));
      if (m) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
    }
    for (const m of mutes) counts.set(String(m.metric_name), (counts.get(String(m.metric_name)) ?? 0) + 1);
    const multi = writes.filter((w) => w.kind === "import" || w.kind === "mute");
    const wrong = multi
      .map((w) => ({ w, found: counts.get(w.key) ?? 0 }))
      .filter(({ w, found }) => (w.answered ? found !== w.rows : found !== 0 && found !== w.rows))
      .map(({ w, found }) => `${w.kind} ${w.key}: ${found} of ${w.rows} (${w.answered ? "answered" : "not answered"})`);
    expect(wrong).toEqual([]);
    expect(multi.filter((w) => w.answered).length).toBeGreaterThan(0);

    // And the service writes again.
    expect((await api(k2.url, token, "POST", "/node-groups", { name: "after-restart" })).status).toBe(201);
    // ~15 s alone on two cores; the margin is for a loaded machine.
  }, 120000);
});

// ---------------------------------------------------------------- 2. PostgreSQL alone killed

interface Envelope {
  error: { code: string; message: string };
}

/** The LISTEN connections on the embedded server (the job scheduler's, the Socket.IO adapter's), by application name. */
async function listeners(dataDir: string): Promise<string[]> {
  const lines = readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n");
  const password = readFileSync(join(dataDir, "pg.credentials"), "utf8").trim();
  const client = new pg.Client({ host: "127.0.0.1", port: Number(lines[3]), user: "nms", password, database: "postgres" });
  await client.connect();
  try {
    const { rows } = await client.query<{ app: string }>(
      "SELECT application_name AS app FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' ORDER BY application_name",
    );
    return rows.map((r) => r.app.replace(/^nms-realtime-.*/, "nms-realtime"));
  } finally {
    await client.end();
  }
}

/** Waits (up to `ms`) until the scheduler and the Socket.IO adapter both LISTEN again. */
async function listening(dataDir: string, ms: number): Promise<string[]> {
  const deadline = Date.now() + ms;
  let found: string[] = [];
  while (Date.now() < deadline) {
    found = [...new Set(await listeners(dataDir))];
    if (found.includes("nms-core") && found.includes("nms-realtime")) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return found;
}

describe("kill -9 of the embedded PostgreSQL under a running service", () => {
  it("answers 503 store_unavailable meanwhile, restarts its server and serves again without a restart", async () => {
    const dataDir = newDataDir();
    const { k } = await start(dataDir);
    const token = await adminToken(k);
    const folder = (await api(k.url, token, "POST", "/node-groups", { name: "before" })).body as { id: string };

    expect(await listening(dataDir, 5000)).toEqual(["nms-core", "nms-realtime"]);

    // Three rounds: a pool that kept the slot of each dropped LISTEN client (the Socket.IO adapter's holds 3) would run dry.
    const outages: number[] = [];
    for (let round = 1; round <= 3; round++) {
      const pm = postmasterPid(dataDir);
      const killedAt = Date.now();
      // Round 2: with its children left behind, holding the shared memory.
      const frozen = killPostmaster(pm, round === 2);

      // Until it serves again: every answer is a 503 envelope or a 200, none takes long, and readiness follows.
      const seen = new Map<number, number>();
      let unready = 0;
      let servingAt = 0;
      while (Date.now() - killedAt < 30000) {
        const t0 = Date.now();
        const res = await api(k.url, token, "GET", `/node-groups/${folder.id}`);
        expect(Date.now() - t0).toBeLessThan(REQUEST_TIMEOUT_MS);
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        if (res.status === 503) expect((res.body as Envelope).error).toEqual({ code: "store_unavailable", message: expect.stringMatching(/database/i) });
        else expect(res.status).toBe(200);
        const write = await api(k.url, token, "POST", "/node-groups", { name: `during-${round}-${t0}` });
        expect([201, 503]).toContain(write.status);
        if (write.status === 503) expect((write.body as Envelope).error.code).toBe("store_unavailable");
        if (res.status === 200 && write.status === 201) {
          servingAt = Date.now();
          break;
        }
        const health = await fetch(`${k.url}/api/v1/health`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const body = (await health.json()) as { store: { status: string } };
        if (health.status === 503) {
          expect(body.store.status).toBe("down");
          unready++;
        } else {
          expect(health.status).toBe(200);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(servingAt).toBeGreaterThan(0);
      expect(seen.get(503) ?? 0).toBeGreaterThan(0);
      expect(unready).toBeGreaterThan(0);
      expect(k.child.exitCode).toBeNull();
      const health = await fetch(`${k.url}/api/v1/health`);
      expect(health.status).toBe(200);
      expect(((await health.json()) as { store: unknown }).store).toEqual({ kind: "embedded", status: "ok" });
      expect(postmasterPid(dataDir)).not.toBe(pm);
      expect(alive(pm)).toBe(false);
      expect(frozen.filter(alive)).toEqual([]);
      outages.push(servingAt - killedAt);
      // The libraries holding a LISTEN connection reconnect by themselves (within a few seconds).
      expect(await listening(dataDir, 15000)).toEqual(["nms-core", "nms-realtime"]);
    }
    console.log(`kill -9 of the embedded PostgreSQL alone: kill to serving again ${outages.map((ms) => `${ms} ms`).join(", ")} (three rounds)`);
    expect(k.stdout()).toMatch(/embedded PostgreSQL exited unexpectedly; restarting it/);
    expect(k.stdout()).toMatch(/embedded PostgreSQL restarted/);
    expect(k.stdout()).toMatch(/ending processes of a killed embedded PostgreSQL that are still running/);
    expect(k.stdout() + k.stderr()).not.toMatch(/"level":"error".*"status":500|unhandled/i);
    // The job scheduler's polls fail while the store is gone: a warning at most once a minute, never error lines.
    expect(k.stdout()).not.toMatch(/"scheduler error"/);
    expect((k.stdout().match(/scheduler: the database is unreachable/g) ?? []).length).toBeLessThanOrEqual(3);

    // Still one service, and it stops cleanly.
    const stopStarted = Date.now();
    k.child.kill("SIGTERM");
    expect(await k.exited).toBe(0);
    expect(Date.now() - stopStarted).toBeLessThan(15000);
    // ~25 s alone on two cores; the margin is for a loaded machine.
  }, 120000);
});

describe("a frozen embedded PostgreSQL (it hangs rather than refuses)", () => {
  it("answers the health routes in time, the store down, and ok again once it thaws", async () => {
    const dataDir = newDataDir();
    const { k } = await start(dataDir);
    const health = (path: string) => fetch(`${k.url}/api/v1${path}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    expect((await health("/health")).status).toBe(200);
    const frozen = serverProcesses(dataDir);
    expect(frozen.length).toBeGreaterThan(0);
    for (const pid of frozen) process.kill(pid, "SIGSTOP");
    try {
      for (const path of ["/health", "/health/ready"]) {
        const t0 = Date.now();
        const res = await health(path);
        const took = Date.now() - t0;
        expect(res.status).toBe(503);
        const body = (await res.json()) as { status: string; ready: boolean; store?: { status: string } };
        expect(body).toMatchObject({ status: "degraded", ready: false });
        if (path === "/health") expect(body.store).toEqual({ kind: "embedded", status: "down" });
        // The probe's bound, with room for a loaded machine: a query sent to a frozen server never answers by itself.
        expect(took).toBeGreaterThanOrEqual(HEALTH_STORE_TIMEOUT_MS - 50);
        expect(took).toBeLessThan(HEALTH_STORE_TIMEOUT_MS + 3000);
      }
      // Liveness asks nothing of the store.
      expect((await health("/health/live")).status).toBe(200);
    } finally {
      for (const pid of frozen) process.kill(pid, "SIGCONT");
    }
    const back = Date.now();
    while ((await health("/health")).status !== 200) {
      expect(Date.now() - back).toBeLessThan(30000);
      await new Promise((r) => setTimeout(r, 200));
    }
    k.child.kill("SIGTERM");
    expect(await k.exited).toBe(0);
  }, 90000);
});

// ---------------------------------------------------------------- 3. an external PostgreSQL (DATABASE_URL) killed

describe("kill -9 of an external PostgreSQL (DATABASE_URL)", () => {
  let external: EmbeddedServer | undefined;
  afterAll(() => external?.stop());

  it("answers 503 store_unavailable while it is gone and reconnects when it is back, starting no server of its own", async () => {
    // The "external" server: a PostgreSQL of the test's own, which (like a supervised server) comes back after a kill.
    const serverDir = newDataDir();
    const serverLog: string[] = [];
    external = new EmbeddedServer(serverDir, new JsonLogger("info", "external", (line) => serverLog.push(line)));
    const { url } = await external.start();
    const { k } = await start(newDataDir(), { DATABASE_URL: url });
    const token = await adminToken(k);

    const killedAt = Date.now();
    killQuietly(postmasterPid(serverDir));
    const seen = new Map<number, number>();
    let servingAt = 0;
    while (Date.now() - killedAt < 30000) {
      const t0 = Date.now();
      const res = await api(k.url, token, "POST", "/node-groups", { name: `external-${t0}` });
      expect(Date.now() - t0).toBeLessThan(REQUEST_TIMEOUT_MS);
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      if (res.status === 201) {
        servingAt = Date.now();
        break;
      }
      expect(res.status).toBe(503);
      expect((res.body as Envelope).error.code).toBe("store_unavailable");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(servingAt).toBeGreaterThan(0);
    expect(seen.get(503) ?? 0).toBeGreaterThan(0);
    expect(serverLog.join("\n")).toMatch(/embedded PostgreSQL restarted/);
    const health = await fetch(`${k.url}/api/v1/health`);
    expect(((await health.json()) as { store: unknown }).store).toEqual({ kind: "external", status: "ok" });
    expect(k.stdout()).not.toMatch(/embedded PostgreSQL/);
    console.log(`kill -9 of an external PostgreSQL (back by itself): kill to serving again ${servingAt - killedAt} ms`);

    k.child.kill("SIGTERM");
    expect(await k.exited).toBe(0);
  }, 90000);
});
