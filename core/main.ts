import "./runtime-check.js";
import { ConfigError } from "./config/Config.js";
import { BootAborted, startKernel, type Kernel } from "./kernel/Kernel.js";
import { PluginLoadError } from "./pluginhost/PluginLoader.js";

/**
 * `npm start`: boot, print the ready line, stop cleanly on SIGINT/SIGTERM. The
 * handlers exist from the first moment: a signal during boot aborts it, and what
 * had started (the embedded server above all) is stopped, never orphaned.
 */
async function main(): Promise<void> {
  const abort = new AbortController();
  let kernel: Kernel | undefined;
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) {
      process.stderr.write(`second ${signal}: exiting now\n`);
      process.exit(130);
    }
    if (!kernel) {
      abort.abort();
      return;
    }
    kernel
      .stop()
      .then(() => process.exit(0))
      .catch((err) => {
        process.stderr.write(`shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      });
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  try {
    kernel = await startKernel({ signal: abort.signal });
  } catch (err) {
    if (err instanceof BootAborted) {
      process.stderr.write("nms-core: stopped during boot by a signal\n");
      process.exit(0);
    }
    const known = err instanceof ConfigError || err instanceof PluginLoadError;
    process.stderr.write(`nms-core failed to start: ${known ? (err as Error).message : ((err as Error)?.stack ?? String(err))}\n`);
    process.exit(1);
  }
  // A signal that arrived between the last boot checkpoint and now.
  if (abort.signal.aborted) {
    signals = 0;
    shutdown("SIGTERM");
  }
}

void main();
