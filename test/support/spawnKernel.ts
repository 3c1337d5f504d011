import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const MAIN = join(ROOT, "dist/core/main.js");
/** The node options the service runs with (`npm start`, the Dockerfile): config/openssl.cnf turns TLS 1.3 session tickets off. */
export const NODE_ARGS = [`--openssl-config=${join(ROOT, "config/openssl.cnf")}`];
/** Built fixture plugins (npm test compiles them with tsconfig.fixtures.json). */
export const FIXTURE_WIDGETS = join(ROOT, "dist/test/fixtures/plugins/widgets/index.js");
export const FIXTURE_AUDIT = join(ROOT, "dist/test/fixtures/plugins/audit/index.js");

export interface SpawnedKernel {
  child: ChildProcess;
  /** Base URL from the ready line. */
  url: string;
  dataDir: string;
  stdout: () => string;
  stderr: () => string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
}

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  dataDir?: string;
  /** ms to wait for the ready line (a fresh embedded cluster takes ~1-2 s). */
  timeoutMs?: number;
  /** Start it as the leader of a process group of its own, as a shell does, so a test can signal the whole group (a terminal's Ctrl-C). */
  ownGroup?: boolean;
}

/** Starts `node dist/core/main.js` as a real process on a free port; resolves at the ready line. */
/** A spawned kernel binds no syslog, trap or flow port unless a test asks (the production defaults are 514, 6514, 162 and 2055). */
export const PASSIVE_OFF: NodeJS.ProcessEnv = {
  NMS__pluginConfig__events__syslog__udp: "null",
  NMS__pluginConfig__events__syslog__tcp: "null",
  NMS__pluginConfig__events__syslog__tls: "null",
  NMS__pluginConfig__events__traps__udp: "null",
  NMS__pluginConfig__flows__udp: "null",
};

/** What a spawned kernel runs with unless a test says otherwise: a free loopback port, its data dir, no built-in plugin. */
function baseEnv(dataDir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NMS_PORT: "0",
    NMS_HOST: "127.0.0.1",
    NMS_DATA_DIR: dataDir,
    NMS_BUILTIN_PLUGINS: "false",
    ...PASSIVE_OFF,
  };
}

export async function spawnKernel(options: SpawnOptions = {}): Promise<SpawnedKernel> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "nms-proc-"));
  const child = spawn(process.execPath, [...NODE_ARGS, MAIN], {
    cwd: ROOT,
    env: { ...baseEnv(dataDir), ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.ownGroup ?? false,
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no ready line within ${options.timeoutMs ?? 30000} ms\nstdout:\n${out}\nstderr:\n${err}`));
    }, options.timeoutMs ?? 30000);
    const check = () => {
      const m = /ready at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`kernel exited with ${code} before ready\nstdout:\n${out}\nstderr:\n${err}`));
    });
  });
  return {
    child,
    url,
    dataDir,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

/** Runs the kernel expecting it to fail at boot; resolves with exit code and output. */
export async function bootFailure(env: NodeJS.ProcessEnv, timeoutMs = 30000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dataDir = env.NMS_DATA_DIR ?? mkdtempSync(join(tmpdir(), "nms-proc-"));
  const child = spawn(process.execPath, [...NODE_ARGS, MAIN], {
    cwd: ROOT,
    env: { ...baseEnv(dataDir), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  clearTimeout(timer);
  if (!env.NMS_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
  return { code, stdout, stderr };
}
