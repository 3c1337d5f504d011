/**
 * The rules between plugins, for services: a plugin may use its own providers, and the contract tokens a plugin
 * it lists in `dependsOn` (or `optionalDependsOn`) names in `exports`. Nothing else: a dependant never gets the
 * implementing class by its own name. Checked twice: at boot over every injection
 * TypeScript describes (constructor parameters and `@Inject()` properties, by their declared class), and
 * at run time by `ctx.get()`.
 */
import { Metadata } from "@tsed/core";
import { DI_INJECTABLE_PROPS, getConstructorDependencies } from "@tsed/di";
import { exportBinding, type PluginManifest } from "./manifest.js";
import { PluginLoadError, usesPlugin, type LoadedPlugin } from "./PluginLoader.js";

type Token = abstract new (...args: never[]) => unknown;

/** Which plugin registered each provider and controller class, and which plugin exports each contract token. */
export class ProviderOwners {
  private readonly owners = new Map<unknown, PluginManifest>();
  private readonly exported = new Set<unknown>();
  /** Each exported contract token with the provider whose instance it stands for. */
  readonly bindings: { token: Token; provider: Token }[] = [];

  constructor(plugins: LoadedPlugin[]) {
    for (const { manifest } of plugins) {
      for (const token of [...(manifest.providers ?? []), ...(manifest.controllers ?? [])]) this.owners.set(token, manifest);
    }
    for (const { manifest } of plugins) {
      for (const entry of manifest.exports ?? []) {
        const { provide, use } = exportBinding(entry);
        const prior = provide !== use ? this.owners.get(provide) : undefined;
        if (prior) throw new PluginLoadError(`plugin "${manifest.id}": exports the token ${provide.name}, which plugin "${prior.id}" already owns`);
        this.owners.set(provide, manifest);
        this.exported.add(provide);
        if (provide !== use) this.bindings.push({ token: provide, provider: use });
      }
    }
  }

  ownerOf(token: unknown): PluginManifest | undefined {
    return this.owners.get(token);
  }

  /** Why `user` may not use `token` (a sentence), or null when it may. */
  refusal(user: PluginManifest, token: Token): string | null {
    const owner = this.owners.get(token);
    if (!owner) return `${token.name} is not a provider of any loaded plugin`;
    if (owner === user) return null;
    if (!usesPlugin(user, owner.id)) return `${token.name} belongs to plugin "${owner.id}", which it does not list in dependsOn`;
    if (!this.exported.has(token)) return `${token.name} is not exported by plugin "${owner.id}" (inject the contract token its manifest's exports name)`;
    return null;
  }
}

/** What a class has injected: constructor parameter types and `@Inject()` properties with their declared class. */
export function injectedTokens(cls: Token): { via: string; token: unknown }[] {
  const found: { via: string; token: unknown }[] = [];
  const params = (getConstructorDependencies(cls) ?? []) as unknown[];
  params.forEach((token, i) => found.push({ via: `constructor parameter ${i}`, token: Array.isArray(token) ? token[0] : token }));
  const seen = new Set<string | symbol>();
  for (let proto = cls.prototype as object | null; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const own = Object.getOwnPropertyDescriptor(proto, DI_INJECTABLE_PROPS)?.value as Set<string | symbol> | undefined;
    for (const key of own ?? []) {
      if (seen.has(key)) continue;
      seen.add(key);
      found.push({ via: `property ${String(key)}`, token: Metadata.getType(proto, key) });
    }
  }
  return found;
}

/** Refuses the boot when a plugin's provider or controller injects another plugin's provider against the rules. */
export function checkProviderRules(plugins: LoadedPlugin[], owners: ProviderOwners): void {
  for (const { manifest } of plugins) {
    for (const cls of [...(manifest.providers ?? []), ...(manifest.controllers ?? [])]) {
      for (const { via, token } of injectedTokens(cls)) {
        const owner = owners.ownerOf(token);
        if (!owner || owner === manifest) continue;
        const why = owners.refusal(manifest, token as Token);
        if (why) throw new PluginLoadError(`plugin "${manifest.id}": ${cls.name} injects ${(token as Token).name} (${via}), but ${why}`);
      }
    }
  }
}
