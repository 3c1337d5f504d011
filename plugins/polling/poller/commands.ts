import { hostname } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { EventBus, isPoolName, Secrets, type CommandDeclaration, type CommandEnvironment, type KernelConfig, type Logger } from "../../../core/index.js";
import { PASSIVE_RECEIVERS_POINT, type PassiveReceiver, type RunningPassive } from "../contract.js";
import type { LoopLogger } from "./PollLoop.js";
import { defaultProbes } from "./probes.js";
import { CoreClient, RemotePoller } from "./RemotePoller.js";
import { POLLER_ID_PATTERN } from "./wire.js";
import { POLLING_VERSION } from "../version.js";

const USAGE = `Usage:
  nms poller --pool NAME --core URL --token TOKEN [--id ID] [--buffer-dir DIR] [--buffer-max-bytes N]
             [--concurrency N] [--refresh-secs N] [--log-level debug|info|warn|error]
  nms poller deploy --pool NAME --core URL --token TOKEN [--image IMAGE] [--id ID] [--name NAME]

A remote poller for one pool: registers with the core, polls the pool's nodes, heartbeats with its
host telemetry and ships samples; while the core is unreachable it keeps them in a bounded on-disk
buffer (default DATA_DIR/poller-<id>, 256 MiB) and backfills them in order when it returns.
The token is an API token of an admin account (ManageSystem); NMS_POLLER_TOKEN and NMS_POLLER_CORE
may stand for --token and --core (keeps the token out of the process list).

deploy starts the poller as a container through the Docker Engine API at NMS_DOCKER_HOST
(unix:///path, tcp://host:port) or /var/run/docker.sock; the image defaults to nms-core:latest
(docker build -t nms-core . in this repository).`;

const DEFAULT_BUFFER_MAX = 256 * 1024 * 1024;
const LEVELS = ["debug", "info", "warn", "error"] as const;
type Level = (typeof LEVELS)[number];

class UsageError extends Error {}

/** JSON lines on stderr (stdout stays free for what a person asked for). */
function stderrLogger(level: Level): LoopLogger {
  const min = LEVELS.indexOf(level);
  const write = (lvl: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS.indexOf(lvl) < min) return;
    process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: lvl, component: "poller", msg, ...fields }) + "\n");
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

/** The polling section of the configuration file / NMS__pluginConfig__polling__* (schema defaults where absent). */
function pollingSettings(config: KernelConfig): { concurrency: number; snmpTimeoutMs: number; snmpRetries: number } {
  const section = ((config.pluginConfig ?? {}) as Record<string, Record<string, unknown> | undefined>).polling ?? {};
  const num = (key: string, fallback: number) => (typeof section[key] === "number" ? (section[key] as number) : fallback);
  return { concurrency: num("concurrency", 32), snmpTimeoutMs: num("snmpTimeoutMs", 2000), snmpRetries: num("snmpRetries", 1) };
}

function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer`);
  return Number(value);
}

function defaultId(pool: string): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_.:-]/g, "-")
      .slice(0, 60) || "poller";
  return `${host}-${pool}`.slice(0, 100);
}

interface Common {
  pool: string;
  core: string;
  token: string;
  id: string;
}

function common(values: Record<string, string | boolean | undefined>): Common {
  const pool = values.pool as string | undefined;
  if (!pool) throw new UsageError("--pool is required");
  if (!isPoolName(pool)) throw new UsageError("--pool must be 1 to 63 letters, digits, _ or -");
  const core = (values.core as string | undefined) ?? process.env.NMS_POLLER_CORE;
  if (!core) throw new UsageError("--core (or NMS_POLLER_CORE) is required: the core's base URL");
  try {
    const u = new URL(core);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    throw new UsageError("--core must be an http:// or https:// URL");
  }
  const token = (values.token as string | undefined) ?? process.env.NMS_POLLER_TOKEN;
  if (!token) throw new UsageError("--token (or NMS_POLLER_TOKEN) is required: an API token of an admin account");
  const id = (values.id as string | undefined) ?? defaultId(pool);
  if (!POLLER_ID_PATTERN.test(id)) throw new UsageError("--id must be 1 to 100 letters, digits, _ . : or -");
  return { pool, core, token, id };
}

/** Starts every contributed passive receiver (syslog, traps …) for this poller's pool; one that fails is logged and left out. */
async function startPassive(env: CommandEnvironment, c: Common, log: LoopLogger): Promise<RunningPassive[]> {
  const client = new CoreClient(c.core, c.token, 10000);
  const busLog: Logger = {
    debug: (m, f) => log.debug(m, f),
    info: (m, f) => log.info(m, f),
    warn: (m, f) => log.warn(m, f),
    error: (m, f) => log.error(m, f),
    child: () => busLog,
  };
  const bus = new EventBus(busLog);
  const secrets = Secrets.fromConfig(env.config.secretKey, env.config.dataDir);
  const running: RunningPassive[] = [];
  for (const r of env.extensions.get<PassiveReceiver>(PASSIVE_RECEIVERS_POINT)) {
    try {
      running.push(
        await r.start({
          pollerId: c.id,
          pool: c.pool,
          dataDir: env.config.dataDir,
          pluginConfig: (id) => env.pluginConfig(id),
          post: async (path, body) => {
            try {
              return (await client.call("POST", path, body)).status;
            } catch {
              return 0;
            }
          },
          call: async (method, path, body) => {
            try {
              return await client.call(method, path, body);
            } catch {
              return { status: 0, body: null };
            }
          },
          bus,
          secrets,
          log,
        }),
      );
    } catch (err) {
      log.error("passive receiver not started", { receiver: r.name, error: (err as Error).message });
    }
  }
  return running;
}

async function runPoller(argv: string[], env: CommandEnvironment): Promise<number> {
  const config = env.config;
  const { values } = parseArgs({
    args: argv,
    options: {
      pool: { type: "string" },
      core: { type: "string" },
      token: { type: "string" },
      id: { type: "string" },
      "buffer-dir": { type: "string" },
      "buffer-max-bytes": { type: "string" },
      concurrency: { type: "string" },
      "refresh-secs": { type: "string" },
      "log-level": { type: "string" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const c = common(values);
  const level = (values["log-level"] ?? (config.logLevel as Level)) as Level;
  if (!LEVELS.includes(level)) throw new UsageError(`--log-level must be one of ${LEVELS.join(", ")}`);
  const settings = pollingSettings(config);
  const log = stderrLogger(level);
  const passive = await startPassive(env, c, log);
  const poller = new RemotePoller({
    pollerId: c.id,
    pool: c.pool,
    coreUrl: c.core,
    token: c.token,
    version: POLLING_VERSION,
    bufferDir: values["buffer-dir"] ?? join(config.dataDir, `poller-${c.id}`),
    bufferMaxBytes: positiveInt(values["buffer-max-bytes"], "buffer-max-bytes", DEFAULT_BUFFER_MAX),
    concurrency: positiveInt(values.concurrency, "concurrency", settings.concurrency),
    refreshSecs: positiveInt(values["refresh-secs"], "refresh-secs", 30),
    probes: await defaultProbes({ snmpTimeoutMs: settings.snmpTimeoutMs, snmpRetries: settings.snmpRetries, log }),
    log,
    listeners: passive.flatMap((p) => p.listeners),
    counters: () => Object.assign({}, ...passive.map((p) => p.counters?.() ?? {})) as Record<string, number>,
  });
  await poller.start();
  log.info("poller running", { poller_id: c.id, pool: c.pool, core: c.core });
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", () => resolve());
    process.once("SIGINT", () => resolve());
  });
  log.info("stopping");
  await poller.stop();
  for (const p of passive) await p.stop().catch(() => undefined);
  const left = poller.status().buffer;
  log.info("poller stopped", { buffered_bytes_left: left.bytes });
  return 0;
}

/** NMS_DOCKER_HOST (unix:///path, tcp://host:port, http(s)://host:port) or the default socket. */
export function dockerTarget(env: NodeJS.ProcessEnv = process.env): { label: string; options: Record<string, unknown> } {
  const raw = env.NMS_DOCKER_HOST?.trim();
  if (!raw) return { label: "unix:///var/run/docker.sock", options: { socketPath: "/var/run/docker.sock" } };
  if (raw.startsWith("unix://")) return { label: raw, options: { socketPath: raw.slice("unix://".length) } };
  if (raw.startsWith("/")) return { label: `unix://${raw}`, options: { socketPath: raw } };
  let url: URL;
  try {
    url = new URL(raw.replace(/^tcp:\/\//, "http://"));
  } catch {
    throw new UsageError("NMS_DOCKER_HOST must be unix:///path, tcp://host:port or http(s)://host:port");
  }
  const protocol = url.protocol === "https:" ? "https" : "http";
  return { label: raw, options: { host: url.hostname, port: url.port || (protocol === "https" ? 2376 : 2375), protocol } };
}

async function runDeploy(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      pool: { type: "string" },
      core: { type: "string" },
      token: { type: "string" },
      id: { type: "string" },
      image: { type: "string" },
      name: { type: "string" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const c = common({ ...values, id: values.id ?? `container-${values.pool ?? ""}` });
  const image = values.image ?? "nms-core:latest";
  const name = values.name ?? `nms-poller-${c.pool}`;
  const target = dockerTarget();
  const { default: Docker } = await import("dockerode");
  const docker = new Docker({ ...target.options, timeout: 5000 });
  try {
    await docker.ping();
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    process.stderr.write(`nms poller deploy: no Docker Engine answers at ${target.label} (${why}); set NMS_DOCKER_HOST to the engine's address\n`);
    return 2;
  }
  const spec = {
    name,
    Image: image,
    // The token goes in the environment, not the command line (docker inspect shows both to whoever may use the engine).
    Cmd: ["node", "dist/core/cli/main.js", "poller", "--pool", c.pool, "--core", c.core, "--id", c.id, "--buffer-dir", "/data/poller-buffer"],
    Env: [`NMS_POLLER_TOKEN=${c.token}`, "NMS_BUILTIN_PLUGINS=true"],
    Labels: { "nms.role": "poller", "nms.pool": c.pool },
    HostConfig: { RestartPolicy: { Name: "unless-stopped" }, Binds: [`${name}-data:/data`] },
  };
  let container;
  try {
    container = await docker.createContainer(spec);
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== 404) throw err;
    process.stdout.write(`pulling ${image}\n`);
    const stream = await docker.pull(image);
    await new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (e: Error | null) => (e ? reject(e) : resolve())));
    container = await docker.createContainer(spec);
  }
  await container.start();
  process.stdout.write(`started poller container ${name} (${container.id.slice(0, 12)}) for pool ${c.pool}, image ${image}\n`);
  return 0;
}

/** `nms poller ...` and `nms poller deploy ...` (the manifest's `commands.poller`). */
export const pollerCommand: CommandDeclaration = {
  description: "Run a remote poller for one pool (store and forward), or deploy one as a Docker container",
  async run(argv, env) {
    try {
      return argv[0] === "deploy" ? await runDeploy(argv.slice(1)) : await runPoller(argv, env);
    } catch (err) {
      const parse = err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith("ERR_PARSE_ARGS");
      if (err instanceof UsageError || parse) {
        process.stderr.write(`nms poller: ${(err as Error).message}\n\n${USAGE}\n`);
        return 2;
      }
      process.stderr.write(`nms poller: ${(err as Error).message}\n`);
      return 1;
    }
  },
};
