import { ConfigError } from "./config/Config.js";
import { startKernel } from "./kernel/Kernel.js";
import { PluginLoadError } from "./pluginhost/PluginLoader.js";

/** `npm start`: boot, print the ready line, stop cleanly on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let kernel;
  try {
    kernel = await startKernel();
  } catch (err) {
    const known = err instanceof ConfigError || err instanceof PluginLoadError;
    process.stderr.write(`nms-core failed to start: ${known ? (err as Error).message : ((err as Error)?.stack ?? String(err))}\n`);
    process.exit(1);
  }
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) {
      process.stderr.write(`second ${signal}: exiting now\n`);
      process.exit(130);
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
}

void main();
