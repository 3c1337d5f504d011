// Starts the built kernel (`node dist/core/main.js`) as a real process for a benchmark, the way `npm start` does.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const MAIN = join(ROOT, "dist/core/main.js");

/** Kernels still running, for a benchmark's cleanup on failure or SIGINT. */
export const running = new Set();

/**
 * Spawns the kernel with `env` (PATH and HOME are passed on; NMS_PORT=0 and loopback by default) and resolves
 * at its ready line with `{url, stop()}`; stop() sends SIGTERM and fails unless the kernel exits 0.
 */
export function bootKernel(env, timeoutMs = 120000) {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
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
