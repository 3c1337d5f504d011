/* global fetch */
// Boot-time and idle-memory benchmark of the kernel process (`npm run bench:boot`; needs `npm run build` first).
//
// Starts `node dist/core/main.js` as a real process on loopback with a free port and the embedded
// PostgreSQL (no DATABASE_URL), exactly as `npm start` would, and prints one line per figure:
//   boot_fresh_ms      spawn → ready line on a new data dir (initdb included), median of 3
//   boot_existing_ms   spawn → ready line on an existing data dir, median of 3
//   idle_rss_service_kb   VmRSS of the node process after 5 s idle
//   idle_rss_postgres_kb  VmRSS summed over the embedded server's processes (shared memory is counted in each)
// plus the details behind them (samples, the kernel's own "in N ms", initdb time, PSS of the server).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MAIN = join(ROOT, "dist/core/main.js");
const RUNS = 3;
const IDLE_MS = 5000;

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first (npm run bench:boot does).`);
  process.exit(1);
}

const children = new Set();
const dirs = [];
const cleanup = () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
};
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

function newDir() {
  const d = mkdtempSync(join(tmpdir(), "nms-bench-"));
  dirs.push(d);
  return d;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** JSON log lines of the kernel, by message. */
function logTime(out, msg) {
  for (const line of out.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const rec = JSON.parse(line);
      if (rec.msg === msg) return Date.parse(rec.time);
    } catch {
      // not a log record
    }
  }
  return null;
}

/** Spawns the kernel on dataDir; resolves at the ready line with timings and a stop() function. */
function boot(dataDir) {
  const started = performance.now();
  const child = spawn(process.execPath, [`--openssl-config=${join(ROOT, "config/openssl.cnf")}`, MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NMS_PORT: "0", NMS_HOST: "127.0.0.1", NMS_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (err += c));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => (children.delete(child), resolve(code ?? signal))));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 120 s\n${out}\n${err}`)), 120000);
    void exited.then((code) => reject(new Error(`kernel exited (${code}) before ready\n${out}\n${err}`)));
    child.stdout.on("data", () => {
      const m = /ready at (\S+) .* in (\d+) ms/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      const wallMs = performance.now() - started;
      const initStart = logTime(out, "initialising embedded PostgreSQL");
      const pgUp = logTime(out, "embedded PostgreSQL started");
      resolve({
        pid: child.pid,
        wallMs,
        kernelMs: Number(m[2]),
        initdbMs: initStart && pgUp ? pgUp - initStart : null,
        async stop() {
          // Ask for health first: the kernel installs its SIGTERM handler only after the ready line (see docs/performance.md).
          const health = await fetch(`${m[1]}/api/v1/health`);
          if (health.status !== 200) throw new Error(`health answered ${health.status}`);
          child.kill("SIGTERM");
          const code = await exited;
          if (code !== 0) throw new Error(`kernel stopped with ${code}\n${err}`);
        },
      });
    });
  });
}

function statusKb(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // exited meanwhile
  }
}

function pssKb(pid) {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The postmaster (from postmaster.pid) and every process below it. */
function postgresTree(dataDir) {
  const root = Number(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
  const parentOf = new Map();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      parentOf.set(Number(e), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of parentOf) {
      if (tree.includes(ppid) && !tree.includes(pid)) {
        tree.push(pid);
        grew = true;
      }
    }
  }
  return tree;
}

const print = (key, value) => console.log(`${key}=${value}`);

try {
  console.log(
    `# node ${process.version}, ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}, ${new Date().toISOString()}`,
  );

  const fresh = [];
  for (let i = 0; i < RUNS; i++) {
    const k = await boot(newDir());
    fresh.push(k);
    await k.stop();
  }
  const existingDir = dirs[0];
  const existing = [];
  for (let i = 0; i < RUNS; i++) {
    const k = await boot(existingDir);
    existing.push(k);
    await k.stop();
  }

  print("boot_fresh_ms", Math.round(median(fresh.map((k) => k.wallMs))));
  print("boot_fresh_samples_ms", fresh.map((k) => Math.round(k.wallMs)).join(","));
  print("boot_fresh_kernel_ms", median(fresh.map((k) => k.kernelMs)));
  print("boot_fresh_initdb_ms", median(fresh.map((k) => k.initdbMs)));
  print("boot_existing_ms", Math.round(median(existing.map((k) => k.wallMs))));
  print("boot_existing_samples_ms", existing.map((k) => Math.round(k.wallMs)).join(","));
  print("boot_existing_kernel_ms", median(existing.map((k) => k.kernelMs)));

  const idle = await boot(existingDir);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const pg = postgresTree(existingDir);
  print("idle_rss_service_kb", statusKb(idle.pid, "VmRSS"));
  print(
    "idle_rss_postgres_kb",
    pg.reduce((sum, pid) => sum + statusKb(pid, "VmRSS"), 0),
  );
  print(
    "idle_pss_postgres_kb",
    pg.reduce((sum, pid) => sum + pssKb(pid), 0),
  );
  print("idle_postgres_processes", pg.length);
  await idle.stop();
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
} finally {
  cleanup();
}
