import type { Type } from "@tsed/core";
import type { ConfigOf, ConfigSchema } from "./configSchema.js";
import type { PermissionName } from "../auth/Caller.js";
import type { KernelConfig } from "../config/Config.js";
import type { EventBus } from "../bus/EventBus.js";
import type { Logger } from "../logging/Logger.js";
import type { StaticAssetsDeclaration } from "../http/staticAssets.js";
import type { PluginMetrics } from "../metrics/PluginMetrics.js";
import type { Secrets } from "../secrets/Secrets.js";
import type { Migration } from "../store/Migrator.js";
import type { PluginStore, Queryable } from "../store/Store.js";

export const MANIFEST_BRAND = Symbol.for("nms-core.plugin-manifest");

/** A job the kernel defines as `<pluginId>.<name>` in Agenda and, with `every`, schedules once across replicas. */
export interface JobDeclaration<C = unknown> {
  name: string;
  /** Interval ("5 minutes", "30 seconds") or cron expression; omitted = run only when the plugin schedules it. */
  every?: string;
  concurrency?: number;
  lockLifetimeMs?: number;
  // Method syntax on purpose, as for start/stop: a job typed with its plugin's config stays assignable.
  handler(job: { data: unknown; name: string }, ctx: PluginContext<C>): Promise<void>;
}

/** A Socket.IO channel `<pluginId>.<name>`; `scoped` channels deliver an event only to sockets whose folder scope covers it. */
/**
 * A subscriber's filter on a channel: called with what the client sent as `filter` when it subscribed; returns
 * the test each published item must pass for that subscriber, or a sentence saying why the filter is refused.
 */
export type ChannelFilter = (params: unknown) => { ok: true; test: (item: unknown) => boolean } | { ok: false; message: string };

export interface ChannelDeclaration {
  name: string;
  permission: PermissionName;
  scoped: boolean;
  description?: string;
  /**
   * Filtered channels: a publish carries an array of items, and each subscriber gets (as one message) the items that
   * pass its own filter; a subscriber whose unsent messages exceed `maxBuffered` is disconnected (the publisher never waits).
   */
  filter?: ChannelFilter;
  maxBuffered?: number;
}

/** A network listener the plugin runs (it binds it in `start`), reported in health and for monitoring gaps. */
export interface ListenerDeclaration {
  name: string;
  protocol: "udp" | "tcp" | "tls";
  /** The stream it receives (`syslog`, `trap`, `flow` …); default the listener's name. */
  stream?: string;
  /** Key of the plugin's config section holding the port. */
  portKey: string;
  description?: string;
}

/** The spec's note codes of the configuration bundle (informational; ignored on import). */
export type BundleNoteCode =
  | "skipped_builtin"
  | "skipped_missing_reference"
  | "reference_dropped"
  | "secret_dropped_imported_disabled"
  | "webhook_token_reset"
  | "schedule_next_run_recomputed"
  | "skipped_invalid_value";

/** A bundle note: how many rows of `table` something happened to, and which field when one is named. */
export interface BundleNote {
  table: string;
  code: BundleNoteCode;
  count: number;
  field: string | null;
}

/** What a table's export runs with. */
export interface BundleExportContext {
  /** Adds `count` (default 1) to the note (code, field) of this table. */
  note(code: BundleNoteCode, count?: number, field?: string | null): void;
  /** The export's snapshot (one read-only REPEATABLE READ transaction for every table): read through it for a consistent bundle. */
  readonly client?: Queryable;
}

/** What a table's import runs with: one transaction shared by every table of the import. */
export interface BundleImportContext {
  /** The import's transaction (every table's rows go through it; a dry run rolls it back at the end). */
  readonly client: Queryable;
  /** merge: upsert by id, keep rows the bundle does not name; replace: also delete the table's rows the bundle does not name. */
  readonly mode: "merge" | "replace";
  readonly dryRun: boolean;
  /** Adds `count` (default 1) to the note (code, field) of this table. */
  note(code: BundleNoteCode, count?: number, field?: string | null): void;
}

/** What a table's import did. */
export interface BundleImportResult {
  created: number;
  updated: number;
  /** rows the bundle carried that were not imported (each also counted in a note saying why) */
  skipped: number;
  /** rows of the deployment removed (replace mode) */
  deleted: number;
}

/** A table the plugin contributes to the configuration bundle (spec: Configuration bundle). */
export interface BundleTable {
  /** The bundle's array name (`nodes`, `report_definitions` …). */
  name: string;
  /** Rows with exactly the record fields of the spec; no secrets. An async iterable lets big tables stream. */
  export: (ctx: PluginContext, exp?: BundleExportContext) => Promise<unknown[]> | AsyncIterable<unknown>;
  /**
   * Reads rows (of this or an older bundle version: missing newer fields take the spec's defaults) into the
   * deployment through `imp.client`. A row whose reference is missing is skipped or has the reference dropped, with a note.
   */
  import?: (ctx: PluginContext, rows: unknown[], imp: BundleImportContext) => Promise<BundleImportResult>;
  /** Bundle tables (any plugin's) whose rows this table references: imported before it, deleted after it. */
  after?: string[];
  /** How many rows `export` would give (checked against bundle.maxRows before anything is written); without it a big table is counted while it streams. */
  count?: (ctx: PluginContext, exp?: BundleExportContext) => Promise<number>;
  /**
   * Replace mode: deletes the deployment's rows the bundle did not name (`rows`, as given to `import`), through
   * `imp.client`; called after every table was imported, dependents first. Without it, `import` deletes them itself.
   */
  prune?: (ctx: PluginContext, rows: unknown[], imp: BundleImportContext) => Promise<number>;
  /** After a committed (not dry-run) import that touched this table, on the serving kernel: reload caches. */
  changed?: (ctx: PluginContext) => Promise<void> | void;
}

export interface ExtensionPointDeclaration {
  name: string;
  /** Throws (with a sentence) when a contributed item does not fit; called at boot for every contribution. */
  validate?: (item: unknown) => void;
  description?: string;
}

/** A command of the `nms` CLI a plugin provides (`nms <name> ...`), e.g. a remote poller process. */
/** What a plugin's CLI command runs with: the configuration, the loaded plugins' extension points, and each plugin's checked config section. */
export interface CommandEnvironment {
  config: KernelConfig;
  extensions: ExtensionRegistry;
  /** A plugin's `pluginConfig` section, checked against its schema with the defaults applied (throws naming what is wrong). */
  pluginConfig<T = unknown>(pluginId: string): T;
}

export interface CommandDeclaration {
  description: string;
  /** Runs with the arguments after the command name; resolves with the process exit code. */
  run(argv: string[], env: CommandEnvironment): Promise<number>;
}

export interface PluginManifest<C = unknown> {
  /** kebab-case, unique; also the schema name (dashes → underscores) and the job / channel / event prefix. */
  id: string;
  /** Plugin semver. */
  version: string;
  /** Semver range of the kernel API it supports, e.g. "^0.1.0". */
  kernel: string;
  description?: string;
  /** Plugins it needs, with the semver range of each it works with: `{ inventory: "^0.1.0" }`. */
  dependsOn?: Readonly<Record<string, string>>;
  /**
   * Plugins it uses when they are loaded and does without otherwise (a published view it reads only if present),
   * with the semver range of each: started after them when present, their range checked; absent is no error.
   */
  optionalDependsOn?: Readonly<Record<string, string>>;
  /** Ts.ED controllers, mounted under /api/v1. Every route must carry an access decorator. */
  controllers?: Type<unknown>[];
  /** Ts.ED injectables it registers (importing the module registers them; listing them documents and checks it). */
  providers?: Type<unknown>[];
  /**
   * Its public services for dependants: each a contract token (an abstract class in its contract.ts) bound to the
   * provider that implements it, `{ provide: NodeFacts, use: NodeService }`. Dependants inject the token and get the
   * provider's one instance; the implementing class stays private. A bare provider class exports itself as its token.
   */
  exports?: (Type<unknown> | ContractExport)[];
  migrations?: Migration[];
  jobs?: JobDeclaration<C>[];
  channels?: ChannelDeclaration[];
  listeners?: ListenerDeclaration[];
  bundle?: { tables: BundleTable[] };
  /** Registries this plugin owns; others add to them through `contributes`. */
  extensionPoints?: ExtensionPointDeclaration[];
  /** Items added to other plugins' extension points: `{"<ownerId>.<point>": [items]}`; the owner must be in dependsOn. */
  contributes?: Record<string, unknown[]>;
  /** Commands it adds to the `nms` CLI (`npm run nms -- <name> ...`). */
  commands?: Record<string, CommandDeclaration>;
  /** Static files it serves outside /api/v1 (a web app at "/"): `{mount, dir, fallback?, htmlHeaders?}`. */
  staticAssets?: StaticAssetsDeclaration[];
  /** JSON schema of its section of `pluginConfig`; defaults in the schema are applied, and the context's `config` is typed from it. */
  config?: ConfigSchema;
  // Method syntax on purpose: a manifest typed with its own config stays assignable to PluginManifest<unknown>.
  start?(ctx: PluginContext<C>): void | Promise<void>;
  stop?(ctx: PluginContext<C>): void | Promise<void>;
  readonly [MANIFEST_BRAND]?: true;
}

export const MANIFEST_KEYS: ReadonlySet<string> = new Set([
  "id",
  "version",
  "kernel",
  "description",
  "dependsOn",
  "optionalDependsOn",
  "controllers",
  "providers",
  "exports",
  "migrations",
  "jobs",
  "channels",
  "listeners",
  "bundle",
  "extensionPoints",
  "contributes",
  "commands",
  "staticAssets",
  "config",
  "start",
  "stop",
]);

export interface PluginJobs {
  /** Runs `<pluginId>.<name>` once, now (or at `when`), with data. */
  now(name: string, data?: unknown): Promise<void>;
  schedule(when: string | Date, name: string, data?: unknown): Promise<void>;
  cancel(name: string): Promise<number>;
}

export interface PublishOptions {
  /** The folder the event's subject is filed under, with its ancestors; empty or absent = tree root (only scope All sees it on a scoped channel). */
  folders?: readonly string[];
}

export interface PluginRealtime {
  /** Emits `<pluginId>.<event>` to sockets subscribed to channel `<pluginId>.<channel>`. */
  publish(channel: string, event: string, payload: unknown, options?: PublishOptions): void;
}

export interface ExtensionRegistry {
  /** Items contributed to `<ownerId>.<point>` (read-only; registries only ever add). */
  get<T = unknown>(point: string): readonly T[];
}

/** Counters a listener keeps (read live by GET /listeners). */
export interface ListenerCounters {
  /** Messages read off the wire, malformed ones included. */
  received: number;
  /** Messages refused or lost: over a limit, a full queue, an unknown community. */
  dropped: number;
  /** Messages that did not parse. */
  malformed: number;
}

export interface ListenerStatus {
  plugin: string;
  name: string;
  stream: string;
  protocol: "udp" | "tcp" | "tls";
  bound: boolean;
  /** The address it is bound to (null while unbound). */
  address: string | null;
  port: number | null;
  counters: ListenerCounters;
}

/** What a plugin reports for one of its declared listeners; `counters` is kept by reference and read when listed. */
export interface ListenerReport {
  bound: boolean;
  port: number | null;
  address?: string | null;
  counters?: ListenerCounters;
}

/** A class a plugin registers as a provider (an `@Injectable()`), used as its own DI token. */
export type ProviderToken<T> = abstract new (...args: never[]) => T;

/** A contract token and the provider (one of the plugin's `providers`) whose instance dependants get for it. */
export interface ContractExport<T = unknown> {
  provide: ProviderToken<T>;
  use: Type<T>;
}

/** The token and the implementing provider of an `exports` entry. */
export function exportBinding(entry: Type<unknown> | ContractExport): ContractExport {
  return typeof entry === "function" ? { provide: entry, use: entry } : entry;
}

/** Everything the kernel gives a plugin: its store, the bus, jobs, secrets, realtime, its config, a logger, its metrics, and its services. */
export interface PluginContext<C = unknown> {
  readonly id: string;
  readonly version: string;
  readonly mode: "full" | "skeleton";
  readonly config: C;
  readonly kernelConfig: Readonly<KernelConfig>;
  readonly store: PluginStore;
  readonly bus: EventBus;
  readonly jobs: PluginJobs;
  readonly secrets: Secrets;
  readonly realtime: PluginRealtime;
  readonly extensions: ExtensionRegistry;
  readonly log: Logger;
  /** Its Prometheus metrics, served at GET /metrics as `nms_<pluginId>_<name>` (docs/metrics.md). */
  readonly metrics: PluginMetrics;
  /** Records that one of the declared listeners is bound (or released). */
  reportListener(name: string, status: ListenerReport): void;
  /**
   * A provider instance: one of this plugin's `providers`, or one that a plugin in its `dependsOn` lists in `exports`.
   * Anything else throws, naming the provider and the rule. Usable once the kernel has built its container (from `start` on).
   */
  get<T>(token: ProviderToken<T>): T;
}

/**
 * Declares a plugin. Export the result as `<camelId>Plugin` from the plugin's index. The context's `config`
 * is typed from the manifest's `config` schema (`ConfigOf<typeof schema>`), so the schema is written once.
 */
export function definePlugin<const S extends ConfigSchema = ConfigSchema>(manifest: PluginManifest<ConfigOf<S>> & { config?: S }): PluginManifest<ConfigOf<S>> {
  Object.defineProperty(manifest, MANIFEST_BRAND, { value: true, enumerable: false });
  return manifest;
}

export function isManifest(value: unknown): value is PluginManifest {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MANIFEST_BRAND] === true;
}

/**
 * The DI token of a plugin's context. Write it once per plugin (its `context.ts`) and inject it into services with
 * `@Inject(TOKEN) private ctx: PluginContext<Config>`.
 */
export function pluginContextToken(pluginId: string): symbol {
  return Symbol.for(`nms-core.plugin-context:${pluginId}`);
}
