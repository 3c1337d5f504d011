import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import type { Type } from "@tsed/core";
import { Ajv } from "ajv";
import { AccountController } from "../auth/controllers/AccountController.js";
import { SessionController } from "../auth/controllers/SessionController.js";
import { TokenController } from "../auth/controllers/TokenController.js";
import { AuthService } from "../auth/AuthService.js";
import { EventBus } from "../bus/EventBus.js";
import { loadConfig, type KernelConfig } from "../config/Config.js";
import { HealthController } from "../health/HealthController.js";
import { HealthService } from "../health/HealthService.js";
import { HttpApp } from "../http/HttpApp.js";
import { setKernelLogger } from "../http/requestContext.js";
import { JobScheduler } from "../jobs/JobScheduler.js";
import { JsonLogger, type LogSink, type Logger } from "../logging/Logger.js";
import { kernelVersion } from "../paths.js";
import { discoverBuiltin, loadConfigured, orderPlugins, PluginLoadError, type LoadedPlugin } from "../pluginhost/PluginLoader.js";
import { pluginContextToken, type ListenerStatus, type PluginContext, type PluginManifest } from "../pluginhost/manifest.js";
import { Realtime } from "../realtime/Realtime.js";
import { Secrets } from "../secrets/Secrets.js";
import { coreMigrations } from "../store/coreMigrations.js";
import { EmbeddedServer } from "../store/EmbeddedServer.js";
import { migratePlugin } from "../store/Migrator.js";
import { createPool, Store } from "../store/Store.js";
import { KernelRuntime } from "./KernelRuntime.js";

export interface StartOptions {
  /** Environment to read NMS_* from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Values that win over file and environment (tests). */
  overrides?: Partial<KernelConfig>;
  /** Manifests given directly (tests and embedding); loaded like configured plugins. */
  plugins?: PluginManifest[];
  /** Where one-time lines (ready line, generated admin password) go; default stdout. */
  print?: (line: string) => void;
  logSink?: LogSink;
  /** Aborts the boot (a signal arrived): what started so far is stopped, and startKernel rejects with BootAborted. */
  signal?: AbortSignal;
}

export class BootAborted extends Error {
  constructor() {
    super("boot aborted");
    this.name = "BootAborted";
  }
}

const CORE_CONTROLLERS = [HealthController, SessionController, AccountController, TokenController];

/** The running kernel: what started, in what order, and how to stop it. */
export class Kernel {
  readonly url: string;
  readonly port: number;
  private stopping?: Promise<void>;

  constructor(
    readonly config: KernelConfig,
    readonly log: Logger,
    readonly store: Store,
    readonly bus: EventBus,
    readonly secrets: Secrets,
    readonly auth: AuthService,
    readonly plugins: LoadedPlugin[],
    private readonly contexts: Map<string, PluginContext>,
    private readonly started: LoadedPlugin[],
    private readonly http: HttpApp,
    private readonly realtime: Realtime,
    private readonly jobs: JobScheduler,
    private readonly embedded: EmbeddedServer | null,
  ) {
    const addr = http.server!.address() as AddressInfo;
    this.port = addr.port;
    const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
    this.url = config.publicUrl ?? `http://${host.includes(":") ? `[${host}]` : host}:${addr.port}`;
  }

  context(pluginId: string): PluginContext | undefined {
    return this.contexts.get(pluginId);
  }

  /**
   * Stops in reverse of boot: no new requests or sockets (requests in flight finish),
   * jobs drained, plugins stopped in reverse order, the Socket.IO adapter, Ts.ED,
   * the pool, and last the embedded server.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.log.info("shutting down");
      this.realtime.disconnectAll();
      await this.http.stopAccepting().catch((err) => this.log.error("http close failed", { error: err }));
      await this.jobs.drain(this.config.jobs.drainMs).catch((err) => this.log.error("job drain failed", { error: err }));
      await stopPlugins(this.started, this.contexts, this.log);
      await this.realtime.close().catch((err) => this.log.error("realtime close failed", { error: err }));
      await this.http.close().catch((err) => this.log.error("http close failed", { error: err }));
      this.bus.clear();
      await this.store.close().catch(() => undefined);
      await this.embedded?.stop().catch((err) => this.log.error("embedded PostgreSQL stop failed", { error: err }));
      this.log.info("stopped");
    })();
    return this.stopping;
  }
}

async function stopPlugins(started: LoadedPlugin[], contexts: Map<string, PluginContext>, log: Logger): Promise<void> {
  for (const p of [...started].reverse()) {
    try {
      await p.manifest.stop?.(contexts.get(p.manifest.id)!);
      log.debug("plugin stopped", { plugin: p.manifest.id });
    } catch (err) {
      log.error("plugin stop failed", { plugin: p.manifest.id, error: err });
    }
  }
}

export function builtinPluginsDir(): string {
  // core/kernel/Kernel.(ts|js) → ../../plugins, in the sources and in dist alike.
  return fileURLToPath(new URL("../../plugins/", import.meta.url));
}

function pluginConfig(manifest: PluginManifest, config: KernelConfig): unknown {
  const section = structuredClone((config.pluginConfig ?? {})[manifest.id] ?? {});
  if (!manifest.config) return section;
  const validate = new Ajv({ allErrors: true, useDefaults: true, strict: false }).compile(manifest.config);
  if (!validate(section)) {
    const why = (validate.errors ?? []).map((e) => `"pluginConfig.${manifest.id}${e.instancePath.replace(/\//g, ".")}" ${e.message}`).join("; ");
    throw new PluginLoadError(`plugin "${manifest.id}": invalid configuration: ${why}`);
  }
  return section;
}

/** Every extension point's items, each contribution checked by its owner's validator (loader already checked who may contribute). */
function collectExtensions(plugins: LoadedPlugin[]): Map<string, unknown[]> {
  const extensions = new Map<string, unknown[]>();
  for (const p of plugins) {
    for (const point of p.manifest.extensionPoints ?? []) extensions.set(`${p.manifest.id}.${point.name}`, []);
  }
  for (const p of plugins) {
    for (const [point, items] of Object.entries(p.manifest.contributes ?? {})) {
      const [owner, ...rest] = point.split(".");
      const decl = plugins.find((o) => o.manifest.id === owner)!.manifest.extensionPoints!.find((e) => e.name === rest.join("."))!;
      for (const item of items) {
        try {
          decl.validate?.(item);
        } catch (err) {
          throw new PluginLoadError(`plugin "${p.manifest.id}": contribution to "${point}" refused: ${(err as Error).message}`);
        }
        extensions.get(point)!.push(item);
      }
    }
  }
  return extensions;
}

/** Boots the kernel: config, store, migrations, auth, plugins, HTTP + Socket.IO, jobs; prints the ready line. */
export async function startKernel(options: StartOptions = {}): Promise<Kernel> {
  const bootStarted = Date.now();
  const config = loadConfig(options.env ?? process.env, options.overrides);
  const print = options.print ?? ((line: string) => process.stdout.write(line + "\n"));
  const log = new JsonLogger(config.logLevel, "core", options.logSink);
  setKernelLogger(log);
  const version = kernelVersion();
  const checkpoint = () => {
    if (options.signal?.aborted) throw new BootAborted();
  };

  // Plugins are found and checked before anything starts, so a bad manifest costs nothing.
  const found: LoadedPlugin[] = [];
  if (config.builtinPlugins) found.push(...(await discoverBuiltin(builtinPluginsDir())));
  const searchPaths = [...config.pluginSearchPaths, process.cwd()];
  for (const spec of config.plugins) found.push(await loadConfigured(spec, searchPaths));
  for (const m of options.plugins ?? []) found.push({ manifest: m, source: `given:${m.id}` });
  const plugins = orderPlugins(found, version);
  const configs = new Map(plugins.map((p) => [p.manifest.id, pluginConfig(p.manifest, config)]));
  const extensions = collectExtensions(plugins);

  let embedded: EmbeddedServer | null = null;
  let store = new Store(null);
  const cleanup: (() => Promise<void>)[] = [];
  try {
    let storeKind: "external" | "embedded" | "none" = "none";
    let storeUrl: string | null = null;
    if (config.mode === "full") {
      let url = config.databaseUrl;
      if (!url) {
        embedded = new EmbeddedServer(config.dataDir, log.child("store"));
        cleanup.push(() => embedded!.stop());
        url = (await embedded.start()).url;
        storeKind = "embedded";
        checkpoint();
      } else {
        storeKind = "external";
      }
      storeUrl = url;
      store = new Store(createPool(url, (err) => log.warn("database connection lost", { error: err.message })));
      cleanup.unshift(() => store.close());
      await store.query("SELECT 1");
      await migratePlugin(store, "core", coreMigrations, log.child("store"));
      for (const p of plugins) {
        if (p.manifest.migrations?.length) await migratePlugin(store, p.manifest.id, p.manifest.migrations, log.child("store"));
      }
    } else {
      log.info("skeleton mode: no durable store; writes answer 503");
    }

    const secrets = Secrets.fromConfig(config.secretKey, config.dataDir);
    const auth = new AuthService(store, config, log.child("auth"));
    await auth.bootstrap(print);
    const bus = new EventBus(log.child("bus"));
    const jobs = new JobScheduler(store.pool, `${hostname()}:${process.pid}`, config.jobs.processEvery, log.child("jobs"), config.jobs.lockLifetimeMs);
    jobs.define({
      fullName: "core.prune-sessions",
      every: "1 hour",
      run: async () => {
        const pruned = await auth.pruneSessions();
        if (pruned) log.info("expired sessions removed", { count: pruned });
      },
    });
    const realtime = new Realtime(auth, config.publicDashboard, log.child("realtime"));
    const listeners = new Map<string, ListenerStatus>();

    const contexts = new Map<string, PluginContext>();
    for (const p of plugins) {
      const m = p.manifest;
      for (const l of m.listeners ?? []) listeners.set(`${m.id}.${l.name}`, { plugin: m.id, name: l.name, protocol: l.protocol, bound: false, port: null });
      const ctx: PluginContext = {
        id: m.id,
        version: m.version,
        mode: config.mode,
        config: configs.get(m.id),
        kernelConfig: config,
        store: store.forPlugin(m.id),
        bus,
        jobs: jobs.forPlugin(m.id),
        secrets,
        realtime: realtime.forPlugin(m.id),
        extensions: { get: <T>(point: string) => Object.freeze([...((extensions.get(point) ?? []) as T[])]) },
        log: log.child(m.id),
        reportListener: (name, status) => {
          const entry = listeners.get(`${m.id}.${name}`);
          if (!entry) throw new Error(`plugin ${m.id} declared no listener "${name}"`);
          Object.assign(entry, status);
        },
      };
      contexts.set(m.id, ctx);
      for (const job of m.jobs ?? []) {
        jobs.define({
          fullName: `${m.id}.${job.name}`,
          every: job.every,
          concurrency: job.concurrency,
          lockLifetimeMs: job.lockLifetimeMs,
          run: (data) => job.handler({ data, name: `${m.id}.${job.name}` }, ctx),
        });
      }
      for (const ch of m.channels ?? []) realtime.declare({ fullName: `${m.id}.${ch.name}`, permission: ch.permission, scoped: ch.scoped });
    }

    const health = new HealthService(store, {
      mode: config.mode,
      publicDashboard: config.publicDashboard,
      version,
      storeKind,
      plugins: () => plugins.map((p) => ({ id: p.manifest.id, version: p.manifest.version })),
      listeners: () => [...listeners.values()].map((l) => ({ ...l })),
    });
    const http = new HttpApp({
      controllers: [
        ...CORE_CONTROLLERS.map((token) => ({ owner: "core", token: token as Type<unknown> })),
        ...plugins.flatMap((p) => (p.manifest.controllers ?? []).map((token) => ({ owner: p.manifest.id, token }))),
      ],
      providers: [
        { token: Store, use: store },
        { token: EventBus, use: bus },
        { token: Secrets, use: secrets },
        { token: AuthService, use: auth },
        { token: Realtime, use: realtime },
        { token: JobScheduler, use: jobs },
        { token: HealthService, use: health },
        { token: KernelRuntime, use: new KernelRuntime(config) },
        ...plugins.map((p) => ({ token: pluginContextToken(p.manifest.id), use: contexts.get(p.manifest.id) })),
      ],
      bodyLimit: config.http.bodyLimit,
      log,
    });
    checkpoint();
    const server = await http.build();
    cleanup.unshift(() => http.close());
    const applicationName = `nms-realtime-${randomBytes(6).toString("hex")}`;
    const adapterPool =
      config.realtime.adapter !== "memory" && storeUrl
        ? createPool(storeUrl, (err) => log.warn("realtime database connection lost", { error: err.message }), 3, applicationName)
        : null;
    cleanup.unshift(() => realtime.close());
    await realtime.attach(server, adapterPool ? { pool: adapterPool, applicationName, probe: store } : null);
    await new Promise<void>((resolve, reject) => {
      server.once("error", (err: NodeJS.ErrnoException) =>
        reject(new Error(err.code === "EADDRINUSE" ? `port ${config.port} on ${config.host} is already in use (set NMS_PORT)` : err.message)),
      );
      server.listen(config.port, config.host, () => resolve());
    });

    checkpoint();
    const started: LoadedPlugin[] = [];
    cleanup.unshift(() => stopPlugins(started, contexts, log));
    for (const p of plugins) {
      try {
        await p.manifest.start?.(contexts.get(p.manifest.id)!);
      } catch (err) {
        throw new PluginLoadError(`plugin "${p.manifest.id}": start failed: ${(err as Error).message}`);
      }
      started.push(p);
      log.info("plugin started", { plugin: p.manifest.id, version: p.manifest.version });
    }
    await jobs.start();
    cleanup.unshift(() => jobs.drain(0));
    checkpoint();

    const kernel = new Kernel(config, log, store, bus, secrets, auth, plugins, contexts, started, http, realtime, jobs, embedded);
    const names = plugins.map((p) => p.manifest.id).join(", ") || "none";
    print(`nms-core ${version} ready at ${kernel.url} (mode ${config.mode}, store ${storeKind}, plugins: ${names}) in ${Date.now() - bootStarted} ms`);
    return kernel;
  } catch (err) {
    for (const step of cleanup) await step().catch(() => undefined);
    throw err;
  }
}
