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
      'plugin "user": TakesPrivate injects OwnerPrivate (property inner), but OwnerPrivate is not exported by plugin "owner" (inject the contract token its manifest\'s exports name)',
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
        'plugin "user": ctx.get(OwnerPrivate) refused: OwnerPrivate is not exported by plugin "owner" (inject the contract token its manifest\'s exports name)',
      );
      expect(() => k.kernel.context("owner")!.get(TakesPublic)).toThrow(/TakesPublic belongs to plugin "user", which it does not list in dependsOn/);
      class Unlisted {}
      expect(() => ctx.get(Unlisted)).toThrow(/Unlisted is not a provider of any loaded plugin/);
    } finally {
      await k.stop();
    }
  });
});

// A contract token (what a contract.ts declares) and the provider that implements it.
abstract class Greeter {
  abstract greet(name: string): string;
}

@Injectable()
class GreeterService implements Greeter {
  calls = 0;
  greet(name: string): string {
    this.calls++;
    return `hello ${name}`;
  }
}

@Injectable()
class NeedsGreeter {
  constructor(readonly greeter: Greeter) {}
}

@Injectable()
class NeedsGreeterService {
  @Inject(GreeterService)
  readonly greeter: GreeterService;
}

const greeterOwner = definePlugin({
  id: "greeter",
  version: "2.0.0",
  kernel: "^0.1.0",
  providers: [GreeterService],
  exports: [{ provide: Greeter, use: GreeterService }],
});

describe("contract tokens", () => {
  it("hand dependants the implementing provider's one instance under the token, never the class", async () => {
    const k = await startTestKernel({
      skeleton: true,
      plugins: [greeterOwner, user({ dependsOn: { greeter: "^2.0.0" }, providers: [NeedsGreeter] })],
    });
    try {
      const ctx = k.kernel.context("user")!;
      const greeter = ctx.get(Greeter);
      expect(greeter.greet("you")).toBe("hello you");
      expect(ctx.get(NeedsGreeter).greeter).toBe(greeter);
      expect(k.kernel.context("greeter")!.get(GreeterService)).toBe(greeter);
      expect(() => ctx.get(GreeterService)).toThrow(
        `plugin "user": ctx.get(GreeterService) refused: GreeterService is not exported by plugin "greeter" (inject the contract token its manifest's exports name)`,
      );
    } finally {
      await k.stop();
    }
  });

  it("refuse a dependant that injects the implementing class", async () => {
    expect(await refusal([greeterOwner, user({ dependsOn: { greeter: "^2.0.0" }, providers: [NeedsGreeterService] })])).toBe(
      `plugin "user": NeedsGreeterService injects GreeterService (property greeter), but GreeterService is not exported by plugin "greeter" (inject the contract token its manifest's exports name)`,
    );
  });

  it("are refused when bound to a class the plugin does not provide, or claimed by two plugins", async () => {
    expect(await refusal([definePlugin({ ...greeterOwner, providers: [] })])).toMatch(/exports GreeterService, a provider it does not list in providers/);
    const twin = definePlugin({ ...greeterOwner, id: "twin" });
    expect(await refusal([greeterOwner, twin])).toMatch(/exports the token Greeter, which plugin "greeter" already owns/);
  });

  it("reach a plugin that lists the owner in optionalDependsOn, which starts after it when it is loaded", async () => {
    const k = await startTestKernel({
      skeleton: true,
      plugins: [user({ optionalDependsOn: { greeter: "^2.0.0" }, providers: [NeedsGreeter] }), greeterOwner],
    });
    try {
      expect(k.kernel.context("user")!.get(Greeter).greet("x")).toBe("hello x");
    } finally {
      await k.stop();
    }
    const alone = await startTestKernel({ skeleton: true, plugins: [user({ optionalDependsOn: { greeter: "^2.0.0" } })] });
    await alone.stop();
    expect(await refusal([greeterOwner, user({ optionalDependsOn: { greeter: "^3.0.0" } })])).toBe(
      'plugin "user": works with "greeter" ^3.0.0 (optional), but "greeter" 2.0.0 is loaded',
    );
  });
});
