import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { Ajv, type ErrorObject } from "ajv";
import { projectRoot } from "../paths.js";

/** The typed configuration every kernel service reads (config/default.json + NMS_* variables). */
export interface KernelConfig {
  port: number;
  host: string;
  publicUrl: string | null;
  dataDir: string;
  databaseUrl: string | null;
  /** Streaming replicas serving the heavy read routes (empty: every read on the primary). */
  databaseReadUrls: string[];
  readReplicas: { maxLagSecs: number; checkIntervalMs: number };
  mode: "full" | "skeleton";
  publicDashboard: boolean;
  bootstrapToken: string | null;
  adminPassword: string | null;
  secretKey: string | null;
  logLevel: "debug" | "info" | "warn" | "error";
  builtinPlugins: boolean;
  plugins: string[];
  pluginSearchPaths: string[];
  auth: { sessionTtlSecs: number; loginMaxFailures: number; loginWindowSecs: number };
  /** Partitioned engines (ADR 0017). */
  partitions: { count: number; retryMs: number };
  jobs: { drainMs: number; processEvery: string; lockLifetimeMs: number };
  realtime: { adapter: "auto" | "memory" | "postgres" };
  http: { bodyLimit: string; stopDrainMs: number };
  /** Limits shared by every plugin: the JSON-document cap (report specs, analysis params ...). */
  limits: { jsonDocumentMaxBytes: number };
  /** Configuration bundle: the most rows one table may carry. */
  bundle: { maxRows: number };
  /** Who may scrape GET /metrics. */
  metrics: { access: "loopback" | "token" | "open" | "off"; token: string | null };
  pluginConfig: Record<string, unknown>;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Environment variables with a fixed meaning; each names one configuration key. */
const ENV_KEYS: Record<string, string> = {
  NMS_PORT: "port",
  NMS_HOST: "host",
  NMS_PUBLIC_URL: "publicUrl",
  NMS_DATA_DIR: "dataDir",
  DATABASE_URL: "databaseUrl",
  NMS_DATABASE_URL: "databaseUrl",
  DATABASE_READ_URL: "databaseReadUrls",
  NMS_DATABASE_READ_URL: "databaseReadUrls",
  NMS_READ_MAX_LAG_SECS: "readReplicas.maxLagSecs",
  NMS_READ_CHECK_INTERVAL_MS: "readReplicas.checkIntervalMs",
  NMS_MODE: "mode",
  NMS_PUBLIC_DASHBOARD: "publicDashboard",
  NMS_BOOTSTRAP_TOKEN: "bootstrapToken",
  NMS_ADMIN_PASSWORD: "adminPassword",
  NMS_SECRET_KEY: "secretKey",
  NMS_LOG_LEVEL: "logLevel",
  NMS_BUILTIN_PLUGINS: "builtinPlugins",
  NMS_PLUGINS: "plugins",
  NMS_PLUGIN_SEARCH_PATHS: "pluginSearchPaths",
  NMS_SESSION_TTL_SECS: "auth.sessionTtlSecs",
  NMS_LOGIN_MAX_FAILURES: "auth.loginMaxFailures",
  NMS_LOGIN_WINDOW_SECS: "auth.loginWindowSecs",
  NMS_PARTITIONS: "partitions.count",
  NMS_PARTITIONS_RETRY_MS: "partitions.retryMs",
  NMS_JOBS_DRAIN_MS: "jobs.drainMs",
  NMS_JOBS_PROCESS_EVERY: "jobs.processEvery",
  NMS_JOBS_LOCK_LIFETIME_MS: "jobs.lockLifetimeMs",
  NMS_REALTIME_ADAPTER: "realtime.adapter",
  NMS_HTTP_BODY_LIMIT: "http.bodyLimit",
  NMS_STOP_DRAIN_MS: "http.stopDrainMs",
  NMS_JSON_DOCUMENT_MAX_BYTES: "limits.jsonDocumentMaxBytes",
  NMS_BUNDLE_MAX_ROWS: "bundle.maxRows",
  NMS_METRICS_ACCESS: "metrics.access",
  NMS_METRICS_TOKEN: "metrics.token",
};

type Json = Record<string, unknown>;

function readJson(path: string): Json {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Json;
  } catch (err) {
    throw new ConfigError(`Cannot read configuration file ${path}: ${(err as Error).message}`);
  }
}

function schemaAt(schema: Json, path: string[]): Json | undefined {
  let node: Json | undefined = schema;
  for (const part of path) {
    const props = node?.properties as Record<string, Json> | undefined;
    node = props?.[part];
  }
  return node;
}

/** Turns an environment string into the type the schema wants; leaves it a string when it cannot, so validation names it. */
function coerce(raw: string, schema: Json | undefined): unknown {
  const types = ([] as unknown[]).concat(schema?.type ?? (schema?.enum ? "string" : "any"));
  if (types.includes("null") && raw === "") return null;
  if (types.includes("integer") || types.includes("number")) {
    return /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw;
  }
  if (types.includes("boolean")) {
    if (/^(true|1|yes|on)$/i.test(raw)) return true;
    if (/^(false|0|no|off)$/i.test(raw)) return false;
    return raw;
  }
  if (types.includes("array"))
    return raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  if (types.includes("any")) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

function setPath(target: Json, path: string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    if (typeof node[part] !== "object" || node[part] === null) node[part] = {};
    node = node[part] as Json;
  }
  node[path[path.length - 1]] = value;
}

function merge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = v && typeof v === "object" && !Array.isArray(v) && b && typeof b === "object" && !Array.isArray(b) ? merge(b as Json, v as Json) : v;
  }
  return out;
}

function describe(e: ErrorObject, sources: Map<string, string>): string {
  const pointer = e.instancePath.replace(/^\//, "").split("/").filter(Boolean);
  if (e.keyword === "additionalProperties") pointer.push(String((e.params as { additionalProperty: string }).additionalProperty));
  const key = pointer.join(".") || "(root)";
  const from = sources.get(key);
  const what = e.keyword === "additionalProperties" ? "is not a known setting" : e.message;
  const allowed = e.keyword === "enum" ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(", ")})` : "";
  return `"${key}"${from ? ` (from ${from})` : ""} ${what}${allowed}`;
}

/**
 * Loads config/default.json, then the file named by NMS_CONFIG, then NMS_* variables;
 * `NMS__a__b=value` sets any nested key (plugin sections included). Validation
 * failures name every offending key and where it came from.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<KernelConfig> = {}): KernelConfig {
  const root = projectRoot();
  const schema = readJson(join(root, "config", "schema.json"));
  let config = readJson(join(root, "config", "default.json"));
  const sources = new Map<string, string>();
  if (env.NMS_CONFIG) {
    const file = isAbsolute(env.NMS_CONFIG) ? env.NMS_CONFIG : resolve(env.NMS_CONFIG);
    const extra = readJson(file);
    for (const k of Object.keys(extra)) sources.set(k, file);
    config = merge(config, extra);
  }
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined) continue;
    const path = key.split(".");
    setPath(config, path, coerce(raw, schemaAt(schema, path)));
    sources.set(key, name);
  }
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith("NMS__") || raw === undefined) continue;
    const path = name.slice(5).split("__").filter(Boolean);
    if (path.length === 0) continue;
    setPath(config, path, coerce(raw, schemaAt(schema, path)));
    sources.set(path.join("."), name);
  }
  config = merge(config, overrides as Json);

  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  if (!validate(config)) {
    const lines = (validate.errors ?? []).map((e) => "  - " + describe(e, sources));
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const typed = config as unknown as KernelConfig;
  typed.dataDir = resolve(typed.dataDir);
  return typed;
}
