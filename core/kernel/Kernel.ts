import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { fileURLToPath } from "node:url";
import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Type } from "@tsed/core";
import { Ajv } from "ajv";
import { AccountController } from "../auth/controllers/AccountController.js";
import { SessionController } from "../auth/controllers/SessionController.js";
import { TokenController } from "../auth/controllers/TokenController.js";
import { AuthService } from "../auth/AuthService.js";
import { BundleController } from "../bundle/BundleController.js";
import { BUNDLE_IMPORT_BODY_LIMIT, BundleService, declaredBundleTables } from "../bundle/BundleService.js";
import { EventBus } from "../bus/EventBus.js";
import { loadConfig, type KernelConfig } from "../config/Config.js";
import { ListenerController } from "../health/ListenerController.js";
import { HealthController } from "../health/HealthController.js";
import { HealthService } from "../health/HealthService.js";
import { API_PREFIX, HttpApp } from "../http/HttpApp.js";
import { setKernelLogger } from "../http/requestContext.js";
import { JobScheduler } from "../jobs/JobScheduler.js";
import { JsonLogger, type LogSink, type Logger } from "../logging/Logger.js";
import { KernelMetrics } from "../metrics/KernelMetrics.js";
import { checkMetricsConfig } from "../metrics/metricsAccess.js";
import { metricsEndpoint } from "../metrics/metricsEndpoint.js";
import { kernelVersion } from "../paths.js";
import { discoverBuiltin, loadConfigured, orderPlugins, PluginLoadError, type LoadedPlugin } from "../pluginhost/PluginLoader.js";
import {
  pluginContextToken,
  type CommandEnvironment,
  type ListenerReport,
  type ListenerStatus,
  type PluginContext,
  type PluginManifest,
} from "../pluginhost/manifest.js";
import { checkProviderRules, ProviderOwners } from "../pluginhost/providerRules.js";
import { Realtime } from "../realtime/Realtime.js";
import { Secrets } from "../secrets/Secrets.js";
import { coreMigrations } from "../store/coreMigrations.js";
import { EmbeddedServer } from "../store/EmbeddedServer.js";
import { migratePlugin } from "../store/Migrator.js";
import { ReadReplicas } from "../store/ReadReplicas.js";
import { createPool, Store } from "../store/Store.js";
import { KernelRuntime } from "../config/KernelRuntime.js";
import { StopStack } from "./StopStack.js";

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

/** The kernel's own controllers (mounted before every plugin's). */
export const CORE_CONTROLLERS = [HealthController, ListenerController, SessionController, AccountController, TokenController, BundleController];

/** What a running kernel holds; built by the boot phases of startKernel. */
export interface KernelParts {
  config: KernelConfig;
  log: Logger;
  store: Store;
  bus: EventBus;
  secrets: Secrets;
  auth: AuthService;
  plugins: LoadedPlugin[];
  contexts: Map<string, PluginContext>;
  server: HttpServer;
  /** Every phase's stop, undone last-in-first-out. */
  stops: StopStack;
}

/** The running kernel: what started, and how to stop it (each boot phase's stop, in reverse). */
export class Kernel {
  readonly url: string;
  readonly port: number;
  readonly config: KernelConfig;
  readonly log: Logger;
  readonly store: Store;
  readonly bus: EventBus;
  readonly secrets: Secrets;
  readonly auth: AuthService;
  readonly plugins: LoadedPlugin[];
  private readonly contexts: Map<string, PluginContext>;
  private readonly stops: StopStack;
  private stopping?: Promise<void>;

  constructor(parts: KernelParts) {
    this.config = parts.config;
    this.log = parts.log;
    this.store = parts.store;
    this.bus = parts.bus;
    this.secrets = parts.secrets;
    this.auth = parts.auth;
    this.plugins = parts.plugins;
    this.contexts = parts.contexts;
    this.stops = parts.stops;
    const addr = parts.server.address() as AddressInfo;
    this.port = addr.port;
    const host = this.config.host === "0.0.0.0" || this.config.host === "::" ? "127.0.0.1" : this.config.host;
    this.url = this.config.publicUrl ?? `http://${host.includes(":") ? `[${host}]` : host}:${addr.port}`;
  }

  context(pluginId: string): PluginContext | undefined {
    return this.contexts.get(pluginId);
  }

  /**
   * Undoes the boot in reverse: traffic stops (sockets disconnected, requests in flight finish), jobs drain,
   * plugins stop in reverse order, then the Socket.IO adapter, Ts.ED, the bus, the pool, and last the embedded server.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.log.info("shutting down");
      await this.stops.unwind();
      this.log.info("stopped");
    })();
    return this.stopping;
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

/**
 * The environment of a plugin's CLI command (`nms poller …`): the same plugins a kernel with this configuration would
 * load, their extension points, and their config sections checked with defaults, without starting anything.
 */
export async function commandEnvironment(config: KernelConfig): Promise<{ plugins: LoadedPlugin[]; env: CommandEnvironment }> {
  const found = await findPlugins(config, [], kernelVersion());
  return {
    plugins: found.plugins,
    env: {
      config,
      extensions: { get: <T>(point: string) => Object.freeze([...((found.extensions.get(point) ?? []) as T[])]) },
      pluginConfig: <T>(id: string) => found.configs.get(id) as T,
    },
  };
}

// ---- Boot phases. Each does one thing and pushes what undoes it onto the stop stack. ----

interface FoundPlugins {
  plugins: LoadedPlugin[];
  configs: Map<string, unknown>;
  extensions: Map<string, unknown[]>;
  owners: ProviderOwners;
}

/** Phase "plugins": found, imported and checked before anything starts, so a bad plugin costs nothing and names itself. */
async function findPlugins(config: KernelConfig, given: PluginManifest[], version: string): Promise<FoundPlugins> {
  const found: LoadedPlugin[] = [];
  if (config.builtinPlugins) found.push(...(await discoverBuiltin(builtinPluginsDir())));
  const searchPaths = [...config.pluginSearchPaths, process.cwd()];
  for (const spec of config.plugins) found.push(await loadConfigured(spec, searchPaths));
  for (const m of given) found.push({ manifest: m, source: `given:${m.id}` });
  const plugins = orderPlugins(found, version);
  const owners = new ProviderOwners(plugins);
  checkProviderRules(plugins, owners);
  const configs = new Map(plugins.map((p) => [p.manifest.id, pluginConfig(p.manifest, config)]));
  return { plugins, configs, extensions: collectExtensions(plugins), owners };
}

interface OpenedStore {
  store: Store;
  kind: "external" | "embedded" | "none";
  url: string | null;
  embedded?: EmbeddedServer;
  replicas?: ReadReplicas;
}

/** Phase "store": the embedded server or DATABASE_URL, the pool, the kernel's and then each plugin's migrations. */
async function openStore(config: KernelConfig, plugins: LoadedPlugin[], log: Logger, stops: StopStack, checkpoint: () => void): Promise<OpenedStore> {
  if (config.mode !== "full") {
    log.info("skeleton mode: no durable store; writes answer 503");
    return { store: new Store(null), kind: "none", url: null };
  }
  let url = config.databaseUrl;
  let kind: OpenedStore["kind"] = "external";
  let embedded: EmbeddedServer | undefined;
  if (!url) {
    const server = (embedded = new EmbeddedServer(config.dataDir, log.child("store")));
    stops.push("embedded PostgreSQL", () => server.stop());
    url = (await server.start()).url;
    kind = "embedded";
    checkpoint();
  }
  const store = new Store(createPool(url, (err) => log.warn("database connection lost", { error: err.message })));
  store.configurePartitions(config.partitions);
  stops.push("database pool", () => store.close());
  await store.query("SELECT 1");
  let replicas: ReadReplicas | undefined;
  if (config.databaseReadUrls.length) {
    const opened = (replicas = new ReadReplicas(store.pool!, { urls: config.databaseReadUrls, ...config.readReplicas }, log.child("store")));
    stops.push("read replicas", () => opened.close());
    await opened.start();
    store.useReadReplicas(opened);
    log.info("read replicas", {
      replicas: opened.status().map((r) => ({ replica: r.name, serving: r.serving })),
      max_lag_secs: config.readReplicas.maxLagSecs,
    });
  }
  await migratePlugin(store, "core", coreMigrations, log.child("store"));
  for (const p of plugins) {
    if (p.manifest.migrations?.length) await migratePlugin(store, p.manifest.id, p.manifest.migrations, log.child("store"));
  }
  return { store, kind, url, embedded, replicas };
}

interface CoreServices {
  secrets: Secrets;
  auth: AuthService;
  bus: EventBus;
  jobs: JobScheduler;
  realtime: Realtime;
  listeners: Map<string, ListenerEntry>;
  metrics: KernelMetrics;
}

/** A declared listener and what its plugin last reported (counters by reference, copied when read). */
interface ListenerEntry {
  plugin: string;
  name: string;
  stream: string;
  protocol: ListenerStatus["protocol"];
  report: ListenerReport;
}

function listenerStatus(l: ListenerEntry): ListenerStatus {
  const c = l.report.counters;
  return {
    plugin: l.plugin,
    name: l.name,
    stream: l.stream,
    protocol: l.protocol,
    bound: l.report.bound,
    address: l.report.bound ? (l.report.address ?? null) : null,
    port: l.report.port,
    counters: { received: c?.received ?? 0, dropped: c?.dropped ?? 0, malformed: c?.malformed ?? 0 },
  };
}

/** Phase "services": secrets, accounts (the first admin), the bus, the scheduler with the kernel's own job, realtime. */
async function coreServices(
  config: KernelConfig,
  opened: OpenedStore,
  metrics: KernelMetrics,
  log: Logger,
  print: (line: string) => void,
  stops: StopStack,
): Promise<CoreServices> {
  const { store } = opened;
  const secrets = Secrets.fromConfig(config.secretKey, config.dataDir);
  const auth = new AuthService(store, config, log.child("auth"));
  await auth.bootstrap(print);
  const bus = new EventBus(log.child("bus"));
  stops.push("event bus", async () => bus.clear());
  const jobs = new JobScheduler(store.pool, `${hostname()}:${process.pid}`, config.jobs.processEvery, log.child("jobs"), config.jobs.lockLifetimeMs);
  jobs.observe = (job, outcome, seconds) => metrics.observeJob(job, outcome, seconds);
  jobs.define({
    fullName: "core.prune-sessions",
    every: "1 hour",
    run: async () => {
      const pruned = await auth.pruneSessions();
      if (pruned) log.info("expired sessions removed", { count: pruned });
    },
  });
  const realtime = new Realtime(auth, config.publicDashboard, log.child("realtime"));
  realtime.onBroadcast = (channel) => metrics.broadcasts.inc({ channel });
  metrics.realtimeConnections(() => realtime.connections);
  if (store.pool) metrics.pool(store.pool);
  if (opened.replicas) metrics.readReplicas(opened.replicas);
  const embedded = opened.embedded;
  metrics.store(opened.kind, embedded ? () => embedded.up : undefined);
  return { secrets, auth, bus, jobs, realtime, listeners: new Map(), metrics };
}

/**
 * Phase "contexts": one context per plugin; its jobs and channels declared. `ctx.get` resolves through `resolve`,
 * which the HTTP phase provides once the container is built, under the rules between plugins.
 */
function pluginContexts(
  config: KernelConfig,
  found: FoundPlugins,
  store: Store,
  core: CoreServices,
  log: Logger,
  resolve: (token: unknown) => unknown,
): Map<string, PluginContext> {
  const contexts = new Map<string, PluginContext>();
  for (const p of found.plugins) {
    const m = p.manifest;
    for (const l of m.listeners ?? [])
      core.listeners.set(`${m.id}.${l.name}`, {
        plugin: m.id,
        name: l.name,
        stream: l.stream ?? l.name,
        protocol: l.protocol,
        report: { bound: false, port: null },
      });
    const ctx: PluginContext = {
      id: m.id,
      version: m.version,
      mode: config.mode,
      config: found.configs.get(m.id),
      kernelConfig: config,
      store: store.forPlugin(m.id),
      bus: core.bus,
      jobs: core.jobs.forPlugin(m.id),
      secrets: core.secrets,
      realtime: core.realtime.forPlugin(m.id),
      extensions: { get: <T>(point: string) => Object.freeze([...((found.extensions.get(point) ?? []) as T[])]) },
      log: log.child(m.id),
      metrics: core.metrics.forPlugin(m.id),
      reportListener: (name, status) => {
        const entry = core.listeners.get(`${m.id}.${name}`);
        if (!entry) throw new Error(`plugin ${m.id} declared no listener "${name}"`);
        entry.report = { ...status };
      },
      get: <T>(token: abstract new (...args: never[]) => T): T => {
        const why = found.owners.refusal(m, token);
        if (why) throw new Error(`plugin "${m.id}": ctx.get(${token.name}) refused: ${why}`);
        return resolve(token) as T;
      },
    };
    contexts.set(m.id, ctx);
    for (const job of m.jobs ?? []) {
      core.jobs.define({
        fullName: `${m.id}.${job.name}`,
        every: job.every,
        concurrency: job.concurrency,
        lockLifetimeMs: job.lockLifetimeMs,
        run: (data) => job.handler({ data, name: `${m.id}.${job.name}` }, ctx),
      });
    }
    for (const ch of m.channels ?? [])
      core.realtime.declare({ fullName: `${m.id}.${ch.name}`, permission: ch.permission, scoped: ch.scoped, filter: ch.filter, maxBuffered: ch.maxBuffered });
  }
  return contexts;
}

/** Phase "http": Ts.ED with the kernel's and every plugin's controllers, the kernel's services and each plugin's context as providers. */
async function buildHttp(
  config: KernelConfig,
  found: FoundPlugins,
  opened: OpenedStore,
  core: CoreServices,
  contexts: Map<string, PluginContext>,
  runtime: KernelRuntime,
  version: string,
  log: Logger,
  stops: StopStack,
): Promise<HttpApp> {
  const { plugins } = found;
  const { store } = opened;
  const health = new HealthService(store, {
    mode: config.mode,
    publicDashboard: config.publicDashboard,
    version,
    storeKind: opened.kind,
    plugins: () => plugins.map((p) => ({ id: p.manifest.id, version: p.manifest.version })),
    listeners: () => [...core.listeners.values()].map(listenerStatus),
    readiness: () => runtime.reported,
  });
  const http = new HttpApp({
    controllers: [
      ...CORE_CONTROLLERS.map((token) => ({ owner: "core", token: token as Type<unknown> })),
      ...plugins.flatMap((p) => (p.manifest.controllers ?? []).map((token) => ({ owner: p.manifest.id, token }))),
    ],
    providers: [
      { token: Store, use: store },
      { token: EventBus, use: core.bus },
      { token: Secrets, use: core.secrets },
      { token: AuthService, use: core.auth },
      { token: Realtime, use: core.realtime },
      { token: JobScheduler, use: core.jobs },
      { token: HealthService, use: health },
      { token: KernelRuntime, use: runtime },
      { token: BundleService, use: new BundleService({ store, config, version, log: log.child("bundle"), tables: declaredBundleTables(plugins, contexts) }) },
      ...plugins.map((p) => ({ token: pluginContextToken(p.manifest.id), use: contexts.get(p.manifest.id) })),
      ...found.owners.bindings.map((b) => ({ token: b.token, alias: b.provider })),
    ],
    bodyLimit: config.http.bodyLimit,
    readiness: () => runtime.phase,
    tags: plugins.map((p) => [p.manifest.id, p.manifest.description ?? p.manifest.id]),
    staticAssets: plugins.flatMap((p) => (p.manifest.staticAssets ?? []).map((s) => ({ owner: p.manifest.id, ...s }))),
    bodyLimits: [{ path: `${API_PREFIX}/config/bundle/import`, limit: BUNDLE_IMPORT_BODY_LIMIT }],
    log,
    metrics: {
      endpoint: metricsEndpoint(core.metrics, config.metrics, log.child("metrics")),
      observeRequest: (method, route, status, seconds) => core.metrics.observeRequest(method, route, status, seconds),
    },
  });
  stops.push("http application", () => http.close());
  await http.build();
  return http;
}

/** Phase "realtime": Socket.IO on the HTTP server, with the PostgreSQL adapter when there is a store and it is wanted. */
async function attachRealtime(config: KernelConfig, opened: OpenedStore, core: CoreServices, server: HttpServer, log: Logger, stops: StopStack) {
  const applicationName = `nms-realtime-${randomBytes(6).toString("hex")}`;
  const adapterPool =
    config.realtime.adapter !== "memory" && opened.url
      ? createPool(opened.url, (err) => log.warn("realtime database connection lost", { error: err.message }), 3, applicationName)
      : null;
  stops.push("realtime", () => core.realtime.close());
  await core.realtime.attach(server, adapterPool ? { pool: adapterPool, applicationName, probe: opened.store } : null);
}

/** Phase "listen": the HTTP port. */
async function listen(config: KernelConfig, server: HttpServer): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new Error(err.code === "EADDRINUSE" ? `port ${config.port} on ${config.host} is already in use (set NMS_PORT)` : err.message)),
    );
    server.listen(config.port, config.host, () => resolve());
  });
}

/** Phase "plugins start": each plugin's start in dependency order; each one started pushes its stop. */
async function startPlugins(plugins: LoadedPlugin[], contexts: Map<string, PluginContext>, log: Logger, stops: StopStack): Promise<void> {
  for (const p of plugins) {
    const ctx = contexts.get(p.manifest.id)!;
    try {
      await p.manifest.start?.(ctx);
    } catch (err) {
      throw new PluginLoadError(`plugin "${p.manifest.id}": start failed: ${(err as Error).message}`);
    }
    stops.push(`plugin ${p.manifest.id}`, async () => {
      await p.manifest.stop?.(ctx);
      log.debug("plugin stopped", { plugin: p.manifest.id });
    });
    log.info("plugin started", { plugin: p.manifest.id, version: p.manifest.version });
  }
}

/** Boots the kernel in named phases (see docs/plugins.md#boot-order); a failure in any phase undoes the ones before it. */
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

  checkMetricsConfig(config.metrics);
  const found = await findPlugins(config, options.plugins ?? [], version);
  const stops = new StopStack(log);
  try {
    const opened = await openStore(config, found.plugins, log, stops, checkpoint);
    const core = await coreServices(config, opened, new KernelMetrics(log.child("metrics"), version), log, print, stops);
    const built: { http?: HttpApp } = {};
    const contexts = pluginContexts(config, found, opened.store, core, log, (token) => {
      if (!built.http) throw new Error("services are not available before the kernel has built its container (use them from start on)");
      return built.http.resolve(token);
    });
    checkpoint();
    const runtime = new KernelRuntime(config);
    const http = (built.http = await buildHttp(config, found, opened, core, contexts, runtime, version, log, stops));
    const server = http.server!;
    await attachRealtime(config, opened, core, server, log, stops);
    await listen(config, server);
    checkpoint();
    await startPlugins(found.plugins, contexts, log, stops);
    await core.jobs.start();
    stops.push("jobs", () => core.jobs.drain(config.jobs.drainMs));
    // Pushed last, so undone first: no new requests or sockets while the rest stops (requests in flight finish).
    stops.push("traffic", async () => {
      // Not ready from here on: what still arrives on open connections answers 503, and the health routes say so.
      runtime.phase = "stopping";
      core.realtime.disconnectAll();
      await http.stopAccepting();
    });
    if (config.http.stopDrainMs > 0) {
      // Undone before "traffic": first only the health routes say stopping, so a balancer's check drains this replica
      // while it still answers what arrives; then traffic stops as above.
      stops.push("drain", async () => {
        runtime.draining = true;
        log.info("draining: not ready, still serving", { ms: config.http.stopDrainMs });
        await new Promise((r) => setTimeout(r, config.http.stopDrainMs));
      });
    }
    checkpoint();

    const kernel = new Kernel({
      config,
      log,
      store: opened.store,
      bus: core.bus,
      secrets: core.secrets,
      auth: core.auth,
      plugins: found.plugins,
      contexts,
      server,
      stops,
    });
    runtime.phase = "ready";
    const names = found.plugins.map((p) => p.manifest.id).join(", ") || "none";
    const bound = [...core.listeners.values()].map(listenerStatus).filter((l) => l.bound);
    const listening = bound.length ? ` listening: ${bound.map((l) => `${l.stream} ${l.protocol} ${hostPort(l.address, l.port)}`).join(", ")}` : "";
    print(
      `nms-core ${version} ready at ${kernel.url} (mode ${config.mode}, store ${opened.kind}, plugins: ${names})${listening} in ${Date.now() - bootStarted} ms`,
    );
    return kernel;
  } catch (err) {
    await stops.unwind();
    throw err;
  }
}

/** `address:port`, an IPv6 address in brackets. */
function hostPort(address: string | null, port: number | null): string {
  const a = address ?? "?";
  return `${a.includes(":") ? `[${a}]` : a}:${port ?? "?"}`;
}
