import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { register } from "node:module";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import semver from "semver";
import type { Type } from "@tsed/core";
import { exportBinding, isManifest, MANIFEST_KEYS, type PluginManifest } from "./manifest.js";

export class PluginLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PluginLoadError";
  }
}

const ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const RESERVED_IDS = new Set(["core", "public", "auth", "pg", "information-schema", "agenda"]);

export interface LoadedPlugin {
  manifest: PluginManifest;
  /** Where it came from: "builtin:<folder>", a path, or a package name. */
  source: string;
}

let resolverRegistered = false;

/** Lets plugins outside this package `import ... from "nms-core"` (see kernelResolve.ts). Only for compiled runs: jest maps the name itself. */
function registerKernelResolver(): void {
  if (resolverRegistered || !import.meta.url.endsWith(".js")) return;
  resolverRegistered = true;
  register(new URL("./kernelResolve.js", import.meta.url), { data: { target: new URL("../index.js", import.meta.url).href } });
}

async function importManifest(entry: string, source: string): Promise<PluginManifest> {
  registerKernelResolver();
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
  } catch (err) {
    throw new PluginLoadError(`plugin ${source}: cannot be imported: ${(err as Error).message}`);
  }
  const found = Object.entries(mod).filter(([name, value]) => name.endsWith("Plugin") && isManifest(value));
  if (found.length !== 1) {
    throw new PluginLoadError(
      `plugin ${source}: must export exactly one manifest made with definePlugin() as a named export "<camelId>Plugin" (found ${found.length})`,
    );
  }
  const [exportName, manifest] = found[0] as [string, PluginManifest];
  const expected = `${String(manifest.id).replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())}Plugin`;
  if (exportName !== expected)
    throw new PluginLoadError(`plugin "${manifest.id}" (${source}): its manifest must be exported as "${expected}", not "${exportName}"`);
  return manifest;
}

function indexIn(dir: string): string | undefined {
  for (const name of ["index.js", "index.mjs", "index.ts"]) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** Built-in plugins: every folder under `plugins/` (next to core/, in dist or sources) with an index. */
export async function discoverBuiltin(pluginsDir: string): Promise<LoadedPlugin[]> {
  if (!existsSync(pluginsDir)) return [];
  const out: LoadedPlugin[] = [];
  for (const name of readdirSync(pluginsDir).sort()) {
    const dir = join(pluginsDir, name);
    if (!statSync(dir).isDirectory()) continue;
    const entry = indexIn(dir);
    if (!entry) continue;
    out.push({ manifest: await importManifest(entry, `builtin:${name}`), source: `builtin:${name}` });
  }
  return out;
}

/** A configured plugin: a path (absolute, or starting with . or /) or an npm package name resolved from the search paths. */
export async function loadConfigured(spec: string, searchPaths: string[]): Promise<LoadedPlugin> {
  let entry: string | undefined;
  if (isAbsolute(spec) || spec.startsWith(".")) {
    const path = resolve(spec);
    entry = existsSync(path) && statSync(path).isDirectory() ? (entryOf(path) ?? indexIn(path)) : path;
    if (!entry || !existsSync(entry)) throw new PluginLoadError(`plugin ${spec}: no such file or folder (${path})`);
  } else {
    entry = packageEntry(spec, spec, searchPaths);
  }
  return { manifest: await importManifest(entry, spec), source: spec };
}

/**
 * Finds an installed package under `<base>/node_modules` (walking up) and its ESM
 * entry: `exports["."]` (string, or its import/default condition), else `main`,
 * else index.js. Works for import-only packages, which require.resolve refuses.
 */
function packageEntry(request: string, spec: string, searchPaths: string[]): string {
  for (const base of searchPaths) {
    let dir = resolve(base);
    for (;;) {
      const pkgDir = basename(dir) === "node_modules" ? join(dir, request) : join(dir, "node_modules", request);
      const entry = entryOf(pkgDir);
      if (entry) return entry;
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  throw new PluginLoadError(`plugin ${spec}: package not found (searched node_modules from ${searchPaths.join(", ")})`);
}

type Exports = string | { [condition: string]: Exports } | null | undefined;

function pickExport(exp: Exports): string | undefined {
  if (typeof exp === "string") return exp;
  if (!exp || typeof exp !== "object") return undefined;
  if ("." in exp) return pickExport(exp["."]);
  for (const condition of ["import", "node", "default"]) if (condition in exp) return pickExport(exp[condition]);
  return undefined;
}

/** The entry file of a package folder, or undefined when the folder holds no package. */
function entryOf(pkgDir: string): string | undefined {
  const manifest = join(pkgDir, "package.json");
  if (!existsSync(manifest)) return undefined;
  const pkg = JSON.parse(readFileSync(manifest, "utf8")) as { exports?: Exports; main?: string };
  const rel = pickExport(pkg.exports) ?? pkg.main ?? "index.js";
  const entry = join(pkgDir, rel);
  return existsSync(entry) ? entry : undefined;
}

function fail(m: PluginManifest | undefined, source: string, why: string): never {
  const name = m && typeof m.id === "string" ? `"${m.id}"` : source;
  throw new PluginLoadError(`plugin ${name}: ${why}`);
}

/** Checks one manifest's shape; unknown keys, bad ids, bad versions and malformed declarations stop the boot. */
export function validateManifest(m: PluginManifest, source: string, kernelVersion: string): void {
  for (const key of Object.keys(m)) if (!MANIFEST_KEYS.has(key)) fail(m, source, `unknown manifest key "${key}"`);
  if (typeof m.id !== "string" || !ID.test(m.id) || m.id.length > 40) fail(m, source, "id must be kebab-case (a-z, 0-9, dashes), at most 40 characters");
  if (RESERVED_IDS.has(m.id)) fail(m, source, `id "${m.id}" is reserved`);
  if (typeof m.version !== "string" || !semver.valid(m.version)) fail(m, source, "version must be a semver version");
  if (typeof m.kernel !== "string" || !semver.validRange(m.kernel)) fail(m, source, "kernel must be a semver range");
  if (!semver.satisfies(kernelVersion, m.kernel, { includePrerelease: true })) fail(m, source, `needs kernel ${m.kernel}, this kernel is ${kernelVersion}`);
  const arrays = ["controllers", "providers", "exports", "migrations", "jobs", "channels", "listeners", "extensionPoints"] as const;
  for (const key of arrays) if (m[key] !== undefined && !Array.isArray(m[key])) fail(m, source, `${key} must be an array`);
  for (const key of ["dependsOn", "optionalDependsOn"] as const) {
    const deps = m[key];
    if (deps === undefined) continue;
    if (typeof deps !== "object" || deps === null || Array.isArray(deps))
      fail(m, source, `${key} must map plugin ids to semver ranges, e.g. { inventory: "^0.1.0" }`);
    for (const [dep, range] of Object.entries(deps)) {
      if (typeof range !== "string" || !semver.validRange(range)) fail(m, source, `${key} "${dep}": "${String(range)}" is not a semver range`);
      if (key === "optionalDependsOn" && Object.hasOwn(m.dependsOn ?? {}, dep)) fail(m, source, `"${dep}" is in both dependsOn and optionalDependsOn`);
    }
  }
  for (const fn of ["start", "stop"] as const) if (m[fn] !== undefined && typeof m[fn] !== "function") fail(m, source, `${fn} must be a function`);
  const names = (list: { name: string }[] | undefined, what: string, pattern = /^[a-z][a-zA-Z0-9-]*(\.[a-z][a-zA-Z0-9-]*)*$/) => {
    const seen = new Set<string>();
    for (const item of list ?? []) {
      if (typeof item?.name !== "string" || !pattern.test(item.name)) fail(m, source, `${what} name "${String(item?.name)}" is not a valid name`);
      if (seen.has(item.name)) fail(m, source, `${what} "${item.name}" is declared twice`);
      seen.add(item.name);
    }
  };
  names(m.jobs, "job");
  names(m.channels, "channel");
  names(m.listeners, "listener");
  names(m.extensionPoints, "extension point");
  names(m.migrations, "migration", /^[A-Za-z0-9_.-]+$/);
  for (const job of m.jobs ?? []) if (typeof job.handler !== "function") fail(m, source, `job "${job.name}" has no handler`);
  for (const ch of m.channels ?? [])
    if (typeof ch.scoped !== "boolean" || typeof ch.permission !== "string") fail(m, source, `channel "${ch.name}" needs permission and scoped`);
  const tokens = new Set<unknown>();
  for (const entry of m.exports ?? []) {
    if (typeof entry !== "function" && (typeof entry?.provide !== "function" || typeof entry.use !== "function"))
      fail(m, source, "an exports entry must be a provider class or { provide: ContractToken, use: ProviderClass }");
    const { provide, use } = exportBinding(entry);
    if (!(m.providers ?? []).includes(use)) fail(m, source, `exports ${use.name}, a provider it does not list in providers`);
    if (provide !== use && (m.providers ?? []).includes(provide as Type<unknown>))
      fail(m, source, `exports the token ${provide.name}, which is itself a provider: a contract token is an abstract class of its contract.ts`);
    if (tokens.has(provide)) fail(m, source, `exports the token ${provide.name} twice`);
    tokens.add(provide);
  }
  if (m.config !== undefined && (typeof m.config !== "object" || m.config === null)) fail(m, source, "config must be a JSON schema object");
  for (const [name, cmd] of Object.entries(m.commands ?? {})) {
    if (!/^[a-z][a-z0-9-]*$/.test(name) || typeof cmd?.run !== "function") fail(m, source, `command "${name}" needs a kebab-case name and a run function`);
  }
}

export function dependsOn(m: PluginManifest, id: string): boolean {
  return Object.hasOwn(m.dependsOn ?? {}, id);
}

/** Whether `m` lists `id` in dependsOn or optionalDependsOn. */
export function usesPlugin(m: PluginManifest, id: string): boolean {
  return dependsOn(m, id) || Object.hasOwn(m.optionalDependsOn ?? {}, id);
}

/**
 * Validates the set: unique ids, known dependencies, contributions only to
 * declared extension points of dependencies, no cycles. Returns the plugins in
 * dependency order (stable: alphabetical among equals).
 */
export function orderPlugins(plugins: LoadedPlugin[], kernelVersion: string): LoadedPlugin[] {
  const byId = new Map<string, LoadedPlugin>();
  for (const p of plugins) {
    validateManifest(p.manifest, p.source, kernelVersion);
    const prior = byId.get(p.manifest.id);
    if (prior) throw new PluginLoadError(`plugin "${p.manifest.id}": duplicate id (from ${prior.source} and ${p.source})`);
    byId.set(p.manifest.id, p);
  }
  for (const p of plugins) {
    for (const [dep, range] of Object.entries(p.manifest.dependsOn ?? {})) {
      const found = byId.get(dep);
      if (!found) throw new PluginLoadError(`plugin "${p.manifest.id}": depends on "${dep}", which is not loaded`);
      if (!semver.satisfies(found.manifest.version, range, { includePrerelease: true }))
        throw new PluginLoadError(`plugin "${p.manifest.id}": needs "${dep}" ${range}, but "${dep}" ${found.manifest.version} is loaded`);
    }
    for (const [dep, range] of Object.entries(p.manifest.optionalDependsOn ?? {})) {
      const found = byId.get(dep);
      if (found && !semver.satisfies(found.manifest.version, range, { includePrerelease: true }))
        throw new PluginLoadError(`plugin "${p.manifest.id}": works with "${dep}" ${range} (optional), but "${dep}" ${found.manifest.version} is loaded`);
    }
    for (const point of Object.keys(p.manifest.contributes ?? {})) {
      const [owner, ...rest] = point.split(".");
      const ownerPlugin = byId.get(owner);
      if (!ownerPlugin || !dependsOn(p.manifest, owner)) {
        throw new PluginLoadError(`plugin "${p.manifest.id}": contributes to "${point}" but does not depend on plugin "${owner}"`);
      }
      if (!(ownerPlugin.manifest.extensionPoints ?? []).some((e) => e.name === rest.join("."))) {
        throw new PluginLoadError(`plugin "${p.manifest.id}": "${owner}" declares no extension point "${rest.join(".")}"`);
      }
    }
  }
  const ordered: LoadedPlugin[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (id: string, path: string[]) => {
    if (state.get(id) === "done") return;
    if (state.get(id) === "visiting") {
      const cycle = [...path.slice(path.indexOf(id)), id];
      throw new PluginLoadError(`plugin "${id}": dependency cycle ${cycle.join(" -> ")}`);
    }
    state.set(id, "visiting");
    const m = byId.get(id)!.manifest;
    const deps = [...Object.keys(m.dependsOn ?? {}), ...Object.keys(m.optionalDependsOn ?? {}).filter((dep) => byId.has(dep))];
    for (const dep of deps.sort()) visit(dep, [...path, id]);
    state.set(id, "done");
    ordered.push(byId.get(id)!);
  };
  for (const id of [...byId.keys()].sort()) visit(id, []);
  return ordered;
}
