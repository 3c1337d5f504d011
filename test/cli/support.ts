/** The built `nms` CLI in a child process, asynchronously (a kernel the test runs in its own process keeps serving). */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../support/spawnKernel.js";

export const CLI = join(ROOT, "dist/core/cli/main.js");

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `nms <args>` with only PATH, HOME and `env` in its environment (no terminal: pipes for stdout and stderr). */
export function nmsAsync(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60000): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, NMS_BUILTIN_PLUGINS: "false", ...env }, timeout: timeoutMs, encoding: "utf8" },
      (err, out, errOut) => resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, out, err: errOut }),
    );
  });
}
