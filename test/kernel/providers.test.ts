import { Inject, Injectable } from "@tsed/di";
import { startKernel } from "../../core/kernel/Kernel.js";
import { definePlugin, type PluginManifest } from "../../core/pluginhost/manifest.js";
import { startTestKernel } from "../support/testKernel.js";

// Three plugins' services: the owner exports one and keeps one to itself.
@Injectable()
class OwnerPublic {
  hello(): string {
    return "public";
  }
}

@Injectable()
class OwnerPrivate {}

@Injectable()
class TakesPrivate {
  @Inject(OwnerPrivate)
  private inner: OwnerPrivate;
}

@Injectable()
class TakesPublicInConstructor {
  constructor(readonly inner: OwnerPublic) {}
}

@Injectable()
class TakesPublic {
  @Inject(OwnerPublic)
  readonly inner: OwnerPublic;
}

const owner = definePlugin({ id: "owner", version: "1.4.0", kernel: "^0.1.0", providers: [OwnerPublic, OwnerPrivate], exports: [OwnerPublic] });

const user = (extra: Partial<PluginManifest>) => definePlugin({ id: "user", version: "1.0.0", kernel: "^0.1.0", ...extra });

async function refusal(plugins: PluginManifest[]): Promise<string> {
  const err = await startKernel({
    env: {},
    overrides: { mode: "skeleton", builtinPlugins: false, port: 0, host: "127.0.0.1", logLevel: "error" },
    plugins,
    print: () => undefined,
    logSink: () => undefined,
  }).then(
    async (k) => {
      await k.stop();
      throw new Error("the kernel booted");
    },
    (e: Error) => e,
  );
  expect(err.name).toBe("PluginLoadError");
  return err.message;
}

describe("the rules between plugins, at boot", () => {
  it("refuses a plugin that injects a provider its owner does not export", async () => {
    expect(await refusal([owner, user({ dependsOn: { owner: "^1.0.0" }, providers: [TakesPrivate] })])).toBe(
      'plugin "user": TakesPrivate injects OwnerPrivate (property inner), but OwnerPrivate is not exported by plugin "owner" (its manifest\'s exports)',
    );
  });

  it("refuses a plugin that injects an exported provider of a plugin it does not depend on", async () => {
    expect(await refusal([owner, user({ providers: [TakesPublicInConstructor] })])).toBe(
      'plugin "user": TakesPublicInConstructor injects OwnerPublic (constructor parameter 0), but OwnerPublic belongs to plugin "owner", which it does not list in dependsOn',
    );
  });
});

describe("ctx.get", () => {
  it("resolves the plugin's own and its dependencies' exported providers, and refuses the rest", async () => {
    const k = await startTestKernel({ skeleton: true, plugins: [owner, user({ dependsOn: { owner: "^1.0.0" }, providers: [TakesPublic] })] });
    try {
      const ctx = k.kernel.context("user")!;
      expect(ctx.get(TakesPublic).inner.hello()).toBe("public");
      expect(ctx.get(OwnerPublic)).toBe(ctx.get(TakesPublic).inner);
      expect(() => ctx.get(OwnerPrivate)).toThrow(
        'plugin "user": ctx.get(OwnerPrivate) refused: OwnerPrivate is not exported by plugin "owner" (its manifest\'s exports)',
      );
      expect(() => k.kernel.context("owner")!.get(TakesPublic)).toThrow(/TakesPublic belongs to plugin "user", which it does not list in dependsOn/);
      class Unlisted {}
      expect(() => ctx.get(Unlisted)).toThrow(/Unlisted is not a provider of any loaded plugin/);
    } finally {
      await k.stop();
    }
  });
});
