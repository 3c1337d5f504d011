/**
 * A real remote poller process (`nms poller`, from dist, as operators run it) against a core the test started, with
 * the plugins it loads and the configuration it reads (NMS__pluginConfig__… variables). Stop it with stop().
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./spawnKernel.js";

export interface RemotePollerProcess {
  /** What it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then waits for it to exit and removes its data dir. */
  stop(): Promise<void>;
}

export function startRemotePoller(o: {
  coreUrl: string;
  token: string;
  id: string;
  pool: string;
  plugins: string[];
  env?: NodeJS.ProcessEnv;
}): RemotePollerProcess {
  const work = mkdtempSync(join(tmpdir(), "nms-remote-poller-"));
  const child = spawn(
    process.execPath,
    [join(ROOT, "dist/core/cli/main.js"), "poller", "--pool", o.pool, "--core", o.coreUrl, "--id", o.id, "--refresh-secs", "2"],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NMS_POLLER_TOKEN: o.token,
        NMS_BUILTIN_PLUGINS: "false",
        NMS_PLUGINS: o.plugins.map((p) => join(ROOT, "dist/plugins", p)).join(","),
        NMS_DATA_DIR: work,
        ...o.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(work, { recursive: true, force: true });
    },
  };
}
