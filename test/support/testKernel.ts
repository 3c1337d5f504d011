import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import type { Role, Scope } from "../../core/auth/Caller.js";
import type { KernelConfig } from "../../core/config/Config.js";
import { startKernel, type Kernel } from "../../core/kernel/Kernel.js";
import type { PluginManifest } from "../../core/pluginhost/manifest.js";
import { createTestDatabase } from "./db.js";

export const BOOTSTRAP_TOKEN = "test-bootstrap-token-0123456789abcdef";

export interface TestKernel {
  kernel: Kernel;
  url: string;
  databaseUrl: string | null;
  dataDir: string;
  /** Every log line the kernel wrote (JSON text), for "never in the logs" checks. */
  logs: string[];
  /** Everything printed (ready line, generated password). */
  printed: string[];
  http: ReturnType<typeof request>;
  adminToken: string;
  /** An API token with this role and scope. */
  token(role: Role, scope?: Scope, name?: string): Promise<string>;
  /** An account with this role and scope, logged in: its session token. */
  session(role: Role, scope?: Scope, username?: string): Promise<string>;
  stop(): Promise<void>;
}

export interface TestKernelOptions {
  plugins?: PluginManifest[];
  overrides?: Partial<KernelConfig>;
  env?: NodeJS.ProcessEnv;
  /** Skeleton mode: no database at all. */
  skeleton?: boolean;
  /** Reuse a database (second replica, restart). */
  databaseUrl?: string;
}

let counter = 0;

let running: Kernel | null = null;

/**
 * A kernel on a fresh database of the run's PostgreSQL, on a free loopback port, with only the given plugins.
 * One at a time per test file: Ts.ED's container is one per process, so a second kernel started while
 * another runs would serve requests with the first one's services (use spawnKernel for replicas).
 */
export async function startTestKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  if (running) throw new Error("another test kernel is still running in this process: stop it first (Ts.ED's container is per process)");
  const databaseUrl = options.skeleton ? null : (options.databaseUrl ?? (await createTestDatabase()));
  const dataDir = mkdtempSync(join(tmpdir(), "nms-test-data-"));
  const logs: string[] = [];
  const printed: string[] = [];
  const kernel = await startKernel({
    env: { NMS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN, ...(options.env ?? {}) },
    overrides: {
      port: 0,
      host: "127.0.0.1",
      dataDir,
      databaseUrl,
      mode: options.skeleton ? "skeleton" : "full",
      builtinPlugins: false,
      logLevel: "debug",
      jobs: { drainMs: 5000, processEvery: "1 second", lockLifetimeMs: 2000 },
      ...options.overrides,
      // Test kernels poll nothing unless a test turns the embedded poller on.
      pluginConfig: {
        ...options.overrides?.pluginConfig,
        polling: { embeddedPoller: false, ...(options.overrides?.pluginConfig?.polling as object | undefined) },
      },
    },
    plugins: options.plugins ?? [],
    print: (line) => printed.push(line),
    logSink: (line) => logs.push(line),
  });
  running = kernel;
  const http = request(kernel.url);
  const t: TestKernel = {
    kernel,
    url: kernel.url,
    databaseUrl,
    dataDir,
    logs,
    printed,
    http,
    adminToken: BOOTSTRAP_TOKEN,
    async token(role, scope = "All", name) {
      const created = await kernel.auth.createToken({ name: name ?? `t-${role}-${++counter}`, role, scope });
      return created.token;
    },
    async session(role, scope = "All", username) {
      const user = username ?? `u-${role}-${++counter}`;
      await kernel.auth.createAccount({ username: user, password: "test-password-1", role, scope });
      return (await kernel.auth.login(user, "test-password-1", `10.255.${counter % 250}.1`)).token;
    },
    stop: async () => {
      await kernel.stop();
      if (running === kernel) running = null;
    },
  };
  return t;
}
