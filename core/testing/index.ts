/**
 * `nms-core/testing`: start a real kernel for a plugin's tests, on a real PostgreSQL, over real HTTP.
 * No test framework is assumed (it works under node:test, jest, vitest, mocha …).
 *
 * The database: `databaseUrl` when given; else a fresh database on the server named by
 * NMS_TEST_ADMIN_DATABASE_URL or DATABASE_URL (that user must be allowed to CREATE DATABASE);
 * else an embedded PostgreSQL of the test kernel's own, in a temporary folder, removed on stop.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Role, Scope } from "../auth/Caller.js";
import type { KernelConfig } from "../config/Config.js";
import { startKernel, type Kernel } from "../kernel/Kernel.js";
import { JsonLogger } from "../logging/Logger.js";
import type { PluginContext, PluginManifest } from "../pluginhost/manifest.js";
import { EmbeddedServer } from "../store/EmbeddedServer.js";

/** The admin API token every test kernel accepts (its bootstrap token). */
export const TEST_ADMIN_TOKEN = "test-bootstrap-token-0123456789abcdef";

export interface TestKernelOptions {
  /** The plugins under test (manifests), loaded after the built-in ones. */
  plugins?: PluginManifest[];
  /** Load the built-in plugins (inventory, polling, alerts) too; default true. The embedded poller stays off unless `overrides` turn it on. */
  builtinPlugins?: boolean;
  /** Configuration values that win over everything (pluginConfig sections included). */
  overrides?: Partial<KernelConfig>;
  /** NMS_* variables, as the service would read them. */
  env?: NodeJS.ProcessEnv;
  /** Skeleton mode: no database at all. */
  skeleton?: boolean;
  /** Use this database as it is (a second replica, a restart). */
  databaseUrl?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** The JSON body, or the text when it is not JSON, or null when empty. */
  body: unknown;
}

export interface TestKernel {
  kernel: Kernel;
  /** The base URL, e.g. http://127.0.0.1:40123 (the API is under /api/v1). */
  url: string;
  databaseUrl: string | null;
  dataDir: string;
  /** Every log line the kernel wrote (JSON text). */
  logs: string[];
  /** Everything printed (ready line, generated password). */
  printed: string[];
  adminToken: string;
  /** A plugin's context (its store, bus, config, `get` …). */
  context<C = unknown>(pluginId: string): PluginContext<C>;
  /** An API token with this role and scope. */
  token(role: Role, scope?: Scope, name?: string): Promise<string>;
  /** An account with this role and scope, logged in: its session token. */
  session(role: Role, scope?: Scope, username?: string): Promise<string>;
  /** One HTTP request to the kernel: `path` under /api/v1 ("/nodes"), JSON body; `token` defaults to the admin token (null = none). */
  request(method: string, path: string, options?: { token?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<TestResponse>;
  /** Stops the kernel, and the embedded server and folders it made. */
  stop(): Promise<void>;
}

/** The events plugin's listeners off, under what the test set (its syslog and traps sections merged key by key). */
function passiveOff(events: Record<string, unknown> = {}): Record<string, unknown> {
  const section = (name: string, off: Record<string, null>) => ({ ...off, ...(events[name] as object | undefined) });
  return { ...events, syslog: section("syslog", { udp: null, tcp: null, tls: null }), traps: section("traps", { udp: null }) };
}

let running: Kernel | null = null;
let counter = 0;

/** A new, empty database on the server at `adminUrl`; returns its URL. */
export async function createDatabase(adminUrl: string, prefix = "nms_t"): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function testDatabase(options: TestKernelOptions, cleanup: (() => Promise<void>)[]): Promise<string | null> {
  if (options.skeleton) return null;
  if (options.databaseUrl) return options.databaseUrl;
  const admin = process.env.NMS_TEST_ADMIN_DATABASE_URL ?? process.env.DATABASE_URL;
  if (admin) return createDatabase(admin);
  const dir = mkdtempSync(join(tmpdir(), "nms-test-pg-"));
  const server = new EmbeddedServer(dir, new JsonLogger("warn", "test-pg", () => undefined));
  cleanup.push(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return (await server.start()).url;
}

/**
 * Starts a kernel on a free loopback port with the plugins under test. One at a time per process: Ts.ED's
 * container is one per process, so stop a test kernel before starting the next.
 */
export async function startTestKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  if (running) throw new Error("another test kernel is still running in this process: stop it first (Ts.ED's container is one per process)");
  const cleanup: (() => Promise<void>)[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "nms-test-data-"));
  cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const logs: string[] = [];
  const printed: string[] = [];
  let kernel: Kernel;
  let databaseUrl: string | null;
  try {
    databaseUrl = await testDatabase(options, cleanup);
    kernel = await startKernel({
      env: { NMS_BOOTSTRAP_TOKEN: TEST_ADMIN_TOKEN, ...(options.env ?? {}) },
      overrides: {
        port: 0,
        host: "127.0.0.1",
        dataDir,
        databaseUrl,
        mode: options.skeleton ? "skeleton" : "full",
        builtinPlugins: options.builtinPlugins ?? true,
        logLevel: "debug",
        jobs: { drainMs: 5000, processEvery: "1 second", lockLifetimeMs: 2000 },
        ...options.overrides,
        // Test kernels poll nothing and bind no passive listener (syslog, traps, flows) unless a test asks (port 0 = any free port).
        pluginConfig: {
          ...options.overrides?.pluginConfig,
          polling: { embeddedPoller: false, ...(options.overrides?.pluginConfig?.polling as object | undefined) },
          events: passiveOff(options.overrides?.pluginConfig?.events as Record<string, unknown> | undefined),
          flows: { udp: null, ...(options.overrides?.pluginConfig?.flows as object | undefined) },
        },
      },
      plugins: options.plugins ?? [],
      print: (line) => printed.push(line),
      logSink: (line) => logs.push(line),
    });
  } catch (err) {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    throw err;
  }
  running = kernel;
  return {
    kernel,
    url: kernel.url,
    databaseUrl,
    dataDir,
    logs,
    printed,
    adminToken: TEST_ADMIN_TOKEN,
    context<C>(pluginId: string) {
      const ctx = kernel.context(pluginId);
      if (!ctx) throw new Error(`no plugin "${pluginId}" in this test kernel`);
      return ctx as PluginContext<C>;
    },
    async token(role, scope = "All", name) {
      return (await kernel.auth.createToken({ name: name ?? `t-${role}-${++counter}`, role, scope })).token;
    },
    async session(role, scope = "All", username) {
      const user = username ?? `u-${role}-${++counter}`;
      await kernel.auth.createAccount({ username: user, password: "test-password-1", role, scope });
      return (await kernel.auth.login(user, "test-password-1", `10.255.${counter % 250}.1`)).token;
    },
    async request(method, path, { token = TEST_ADMIN_TOKEN, body, headers = {} } = {}) {
      const res = await fetch(`${kernel.url}/api/v1${path}`, {
        method,
        headers: {
          ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text || null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async stop() {
      try {
        await kernel.stop();
      } finally {
        if (running === kernel) running = null;
        for (const step of cleanup.reverse()) await step().catch(() => undefined);
      }
    },
  };
}
