/** `nms flows …` as operators run it: the built CLI in a child process, asynchronously (the kernel it talks to runs in the test's process). */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../../../test/support/spawnKernel.js";

const CLI = join(ROOT, "dist/core/cli/main.js");
const PLUGINS = ["inventory", "polling", "flows"].map((p) => join(ROOT, "dist/plugins", p)).join(",");

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `nms flows <args>` against the core at `coreUrl` with `token`, the plugins from dist, `dataDir` as its data folder. */
export function flowsCli(args: string[], o: { coreUrl: string; token: string; dataDir: string; timeoutMs: number }): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, "flows", ...args],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          NMS_BUILTIN_PLUGINS: "false",
          NMS_PLUGINS: PLUGINS,
          NMS_DATA_DIR: o.dataDir,
          NMS_CORE: o.coreUrl,
          NMS_TOKEN: o.token,
        },
        timeout: o.timeoutMs,
      },
      (err, stdout, stderr) => resolve({ status: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr }),
    );
  });
}
