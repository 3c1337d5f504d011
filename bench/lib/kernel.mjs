// Starts the built kernel (`node dist/core/main.js`) as a real process for a benchmark, the way `npm start` does.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const MAIN = join(ROOT, "dist/core/main.js");

/** One `key=value` figure line on stdout (what the benchmarks print). */
export const print = (key, value) => console.log(`${key}=${value}`);
/** The load averages, "1/5/15": every figure is printed with the machine's load at the time. */
export const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join("/");

/** A benchmark kernel's quiet settings: no embedded poller, no syslog, trap or flow listener (spread, then override). */
export const QUIET_KERNEL_ENV = {
  NMS_LOG_LEVEL: "warn",
  NMS__pluginConfig__polling__embeddedPoller: "false",
  NMS__pluginConfig__events__syslog__udp: "null",
  NMS__pluginConfig__events__syslog__tcp: "null",
  NMS__pluginConfig__events__syslog__tls: "null",
  NMS__pluginConfig__events__traps__udp: "null",
  NMS__pluginConfig__flows__udp: "null",
};

/** Kernels still running, for a benchmark's cleanup on failure or SIGINT. */
export const running = new Set();

/**
 * Spawns the kernel with `env` (PATH and HOME are passed on; NMS_PORT=0 and loopback by default) and resolves
 * at its ready line with `{url, stop()}`; stop() sends SIGTERM and fails unless the kernel exits 0.
 */
export function bootKernel(env, timeoutMs = 120000, root = ROOT) {
  const child = spawn(process.execPath, [`--openssl-config=${join(root, "config/openssl.cnf")}`, join(root, "dist/core/main.js")], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NMS_PORT: "0", NMS_HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (err += c));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => (running.delete(child), resolve(code ?? signal))));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within ${timeoutMs / 1000} s\n${out}\n${err}`)), timeoutMs);
    void exited.then((code) => reject(new Error(`kernel exited (${code}) before ready\n${out}\n${err}`)));
    child.stdout.on("data", () => {
      const m = /ready at (\S+) /.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        url: m[1],
        child,
        async stop() {
          child.kill("SIGTERM");
          const code = await exited;
          if (code !== 0) throw new Error(`kernel stopped with ${code}\n${err}`);
        },
      });
    });
  });
}

/** Kills every kernel still running (benchmark cleanup). */
export function killKernels() {
  for (const c of running) c.kill("SIGKILL");
  running.clear();
}

/**
 * A benchmark's PostgreSQL and folders. `database()` makes a fresh database on DATABASE_URL, or else on an embedded
 * server (the kernel's own helper) started once in its own temporary folder (it may run as another user, root →
 * postgres, which must reach it). `dataDir` is a temporary folder for the kernel. `cleanup()` kills the kernels,
 * stops the server and removes the folders; SIGINT runs it too.
 */
export function benchStore(prefix) {
  const dataDir = mkdtempSync(join(tmpdir(), `nms-bench-${prefix}-`));
  let embedded = null;
  let serverDir = null;
  const cleanup = async () => {
    killKernels();
    await embedded?.stop().catch(() => undefined);
    embedded = null;
    rmSync(dataDir, { recursive: true, force: true });
    if (serverDir) rmSync(serverDir, { recursive: true, force: true });
  };
  process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));
  const adminUrl = async () => {
    if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
    const { EmbeddedServer } = await import(join(ROOT, "dist/core/store/EmbeddedServer.js"));
    const { JsonLogger } = await import(join(ROOT, "dist/core/logging/Logger.js"));
    serverDir = mkdtempSync(join(tmpdir(), `nms-bench-${prefix}-pg-`));
    embedded = new EmbeddedServer(serverDir, new JsonLogger("warn", "bench-pg", () => undefined));
    return (await embedded.start()).url;
  };
  const database = async () => {
    const admin = await adminUrl();
    const name = `nms_bench_${randomBytes(4).toString("hex")}`;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
    const url = new URL(admin);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return { dataDir, database, cleanup };
}

/**
 * A benchmark inventory, straight in PostgreSQL as the tests' fixtures are: `sites` folders with `racks` folders each,
 * and `nodes` nodes named `<prefix><n>` spread over the racks, addressed by the SQL expression `address` of `n`.
 */
export async function seedInventory(
  db,
  { sites, racks, nodes, prefix = "node-", pad = 5, address = "('10.' || (n / 256) || '.' || (n % 256) || '.1')::inet" },
) {
  await db.query(`INSERT INTO inventory.node_groups (name) SELECT 'site-' || s FROM generate_series(1, ${sites}) s`);
  await db.query(
    `INSERT INTO inventory.node_groups (name, parent_id)
     SELECT 'rack-' || g.name || '-' || r, g.id FROM inventory.node_groups g, generate_series(1, ${racks}) r WHERE g.parent_id IS NULL`,
  );
  await db.query(
    `INSERT INTO inventory.nodes (name, address, group_id)
     SELECT '${prefix}' || lpad(n::text, ${pad}, '0'), ${address},
            (SELECT id FROM inventory.node_groups WHERE parent_id IS NOT NULL ORDER BY name OFFSET (n % ${sites * racks}) LIMIT 1)
       FROM generate_series(1, ${nodes}) n`,
  );
}
