import { createReadStream, createWriteStream, readFileSync } from "node:fs";
import { once } from "node:events";
import { parseArgs } from "node:util";
import type { KernelConfig } from "../config/Config.js";
import { JsonLogger } from "../logging/Logger.js";
import { kernelVersion } from "../paths.js";
import { injector } from "@tsed/di";
import {
  exportBinding,
  pluginContextToken,
  type CommandEnvironment,
  type ExtensionRegistry,
  type PluginContext,
  type PluginManifest,
} from "../pluginhost/manifest.js";
import type { LoadedPlugin } from "../pluginhost/PluginLoader.js";
import { Secrets } from "../secrets/Secrets.js";
import { coreMigrations } from "../store/coreMigrations.js";
import { EmbeddedServer } from "../store/EmbeddedServer.js";
import { migratePlugin } from "../store/Migrator.js";
import { createPool, Store } from "../store/Store.js";
import { BundleService, declaredBundleTables, type BundleProgress } from "./BundleService.js";

export const BUNDLE_USAGE = `  bundle export <file>                               write the configuration bundle (no secrets) to <file> ("-" = stdout)
  bundle import <file> [--dry-run] [--mode merge|replace]   import a bundle in one transaction; prints the result`;

class UsageError extends Error {}

/**
 * The plugin contexts of an offline command: store, secrets and configuration, but no running services (a table whose
 * export or import needs one says so and the command fails; use the HTTP routes of a running service instead).
 */
function offlineContexts(
  config: KernelConfig,
  plugins: { manifest: Pick<PluginManifest, "id" | "version" | "exports"> }[],
  store: Store,
  pluginConfig: (id: string) => unknown,
  extensions: ExtensionRegistry,
) {
  const secrets = Secrets.fromConfig(config.secretKey, config.dataDir);
  const log = new JsonLogger("warn", "cli", (line) => process.stderr.write(line + "\n"));
  const contexts = new Map<string, PluginContext>();
  for (const p of plugins) {
    const id = p.manifest.id;
    const unavailable = (what: string) => () => {
      throw new Error(`plugin "${id}": ${what} is not available to the offline bundle command; use the service's /api/v1/config/bundle routes`);
    };
    contexts.set(id, {
      id,
      version: p.manifest.version,
      mode: config.mode,
      config: pluginConfig(id),
      kernelConfig: config,
      store: store.forPlugin(id),
      secrets,
      log: log.child(id),
      // The plugin's services, built on demand by Ts.ED's injector (no HTTP, no start hooks): what a table's export or
      // import calls works on the store as it does in the service.
      get: (token: unknown) => injector().invoke(token as never),
      reportListener: () => undefined,
      get bus(): never {
        return unavailable("the bus")();
      },
      get jobs(): never {
        return unavailable("jobs")();
      },
      get realtime(): never {
        return unavailable("realtime")();
      },
      extensions,
      get metrics(): never {
        return unavailable("metrics")();
      },
    } as unknown as PluginContext);
  }
  for (const [id, ctx] of contexts) injector().addProvider(pluginContextToken(id), { useValue: ctx });
  for (const p of plugins) {
    for (const entry of p.manifest.exports ?? []) {
      const { provide, use } = exportBinding(entry);
      if (provide !== use) injector().addProvider(provide, { useFactory: () => injector().invoke(use) });
    }
  }
  injector().addProvider(Store, { useValue: store });
  injector().addProvider(Secrets, { useValue: secrets });
  return { contexts, log };
}

/** The loaded plugins and their command environment (the CLI gets them from the kernel; the bundle layer lies below it). */
export type CommandPlugins = { plugins: LoadedPlugin[]; env: CommandEnvironment };

/**
 * `nms bundle export|import`: offline, on the configured store (the service must not run on an embedded data dir).
 * `progress` hears of each table done (the CLI's bar on a terminal).
 */
export async function bundleCommand(
  config: KernelConfig,
  argv: string[],
  loadPlugins: () => Promise<CommandPlugins>,
  progress?: BundleProgress,
): Promise<number> {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { "dry-run": { type: "boolean" }, mode: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  if ((verb !== "export" && verb !== "import") || positionals.length !== 1) throw new UsageError(`usage:\n${BUNDLE_USAGE}`);
  if (verb === "export" && (values["dry-run"] || values.mode)) throw new UsageError("--dry-run and --mode are options of bundle import");
  const mode = values.mode ?? "merge";
  if (mode !== "merge" && mode !== "replace") throw new UsageError(`--mode must be merge or replace; "${mode}" is neither`);
  if (config.mode === "skeleton") throw new UsageError("skeleton mode has no store: there is no configuration to export or import");
  const file = positionals[0];

  const { plugins, env } = await loadPlugins();
  const stderrLog = new JsonLogger("warn", "cli", (line) => process.stderr.write(line + "\n"));
  let embedded: EmbeddedServer | null = null;
  let url = config.databaseUrl;
  if (!url) {
    embedded = new EmbeddedServer(config.dataDir, stderrLog);
    url = (await embedded.start()).url;
  }
  const store = new Store(createPool(url, (err) => stderrLog.warn("database connection lost", { error: err.message }), 4));
  try {
    await migratePlugin(store, "core", coreMigrations, stderrLog);
    for (const p of plugins) if (p.manifest.migrations?.length) await migratePlugin(store, p.manifest.id, p.manifest.migrations, stderrLog);
    const { contexts, log } = offlineContexts(config, plugins, store, (id) => env.pluginConfig(id), env.extensions);
    const bundles = new BundleService({ store, config, version: kernelVersion(), log, tables: declaredBundleTables(plugins, contexts), notifyChanges: false });
    if (verb === "export") {
      const out = file === "-" ? process.stdout : createWriteStream(file);
      for await (const piece of await bundles.export(progress)) if (!out.write(piece)) await once(out, "drain");
      if (out !== process.stdout) {
        out.end();
        await once(out, "finish");
        process.stderr.write(`wrote the configuration bundle to ${file}\n`);
      }
      return 0;
    }
    const text = file === "-" ? await readAll(createReadStream("/dev/stdin")) : readFileSync(file, "utf8");
    let bundle: unknown;
    try {
      bundle = JSON.parse(text);
    } catch {
      throw new UsageError(`${file} is not JSON`);
    }
    const outcome = await bundles.import(bundle, { mode, dryRun: values["dry-run"] ?? false, progress });
    process.stdout.write(JSON.stringify(outcome, null, 2) + "\n");
    return 0;
  } finally {
    await store.close();
    await embedded?.stop();
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === "string" ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString("utf8");
}

export { UsageError as BundleUsageError };
