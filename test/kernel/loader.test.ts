import { definePlugin, type PluginManifest } from "../../core/pluginhost/manifest.js";
import { orderPlugins, PluginLoadError, validateManifest } from "../../core/pluginhost/PluginLoader.js";

const KERNEL = "0.1.0";

function p(id: string, extra: Partial<PluginManifest> = {}) {
  return { manifest: definePlugin({ id, version: "1.0.0", kernel: "^0.1.0", ...extra }), source: `test:${id}` };
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PluginLoadError);
    return (err as Error).message;
  }
  throw new Error("expected a PluginLoadError");
}

describe("plugin loader", () => {
  it("orders plugins so dependencies start first, alphabetically among equals", () => {
    const ordered = orderPlugins([p("zeta", { dependsOn: { alpha: "*" } }), p("mid", { dependsOn: { zeta: "*", beta: "*" } }), p("beta"), p("alpha")], KERNEL);
    expect(ordered.map((x) => x.manifest.id)).toEqual(["alpha", "beta", "zeta", "mid"]);
  });

  it("refuses a cycle, naming the plugins in it", () => {
    const msg = refusal(() => orderPlugins([p("a", { dependsOn: { b: "*" } }), p("b", { dependsOn: { c: "*" } }), p("c", { dependsOn: { a: "*" } })], KERNEL));
    expect(msg).toMatch(/dependency cycle a -> b -> c -> a/);
  });

  it("refuses a missing dependency, naming both", () => {
    expect(refusal(() => orderPlugins([p("alerts", { dependsOn: { inventory: "*" } })], KERNEL))).toBe(
      'plugin "alerts": depends on "inventory", which is not loaded',
    );
  });

  it("checks each dependency's version against the range it is given", () => {
    const dep = { manifest: definePlugin({ id: "inventory", version: "0.3.2", kernel: "^0.1.0" }), source: "test:inventory" };
    expect(orderPlugins([dep, p("alerts", { dependsOn: { inventory: ">=0.3.0 <0.4.0" } })], KERNEL).map((x) => x.manifest.id)).toEqual(["inventory", "alerts"]);
    expect(refusal(() => orderPlugins([dep, p("alerts", { dependsOn: { inventory: "^0.1.0" } })], KERNEL))).toBe(
      'plugin "alerts": needs "inventory" ^0.1.0, but "inventory" 0.3.2 is loaded',
    );
  });

  it("refuses a dependsOn that is not a map of semver ranges", () => {
    expect(refusal(() => orderPlugins([p("alerts", { dependsOn: ["inventory"] as never })], KERNEL))).toMatch(/dependsOn must map plugin ids to semver ranges/);
    expect(refusal(() => orderPlugins([p("alerts", { dependsOn: { inventory: "not a range" } })], KERNEL))).toBe(
      'plugin "alerts": dependsOn "inventory": "not a range" is not a semver range',
    );
  });

  it("refuses duplicate ids, naming both sources", () => {
    expect(refusal(() => orderPlugins([p("dup"), { ...p("dup"), source: "other:dup" }], KERNEL))).toMatch(
      /"dup": duplicate id \(from test:dup and other:dup\)/,
    );
  });

  it("refuses unknown manifest keys", () => {
    const m = { ...p("x").manifest, routes: [] } as unknown as PluginManifest;
    expect(refusal(() => validateManifest(m, "test:x", KERNEL))).toBe('plugin "x": unknown manifest key "routes"');
  });

  it("refuses bad ids, versions, kernel ranges and reserved ids", () => {
    expect(refusal(() => validateManifest(p("Bad_Id").manifest, "s", KERNEL))).toContain("kebab-case");
    expect(refusal(() => validateManifest(p("core").manifest, "s", KERNEL))).toContain("reserved");
    expect(refusal(() => validateManifest({ ...p("v").manifest, version: "one" }, "s", KERNEL))).toContain("semver version");
    expect(refusal(() => validateManifest({ ...p("k").manifest, kernel: "^2.0.0" }, "s", KERNEL))).toContain("needs kernel ^2.0.0, this kernel is 0.1.0");
  });

  it("refuses malformed declarations", () => {
    const noHandler = { ...p("j").manifest, jobs: [{ name: "tick" }] } as unknown as PluginManifest;
    expect(refusal(() => validateManifest(noHandler, "s", KERNEL))).toContain('job "tick" has no handler');
    const twice = {
      ...p("c").manifest,
      channels: [
        { name: "live", permission: "read", scoped: false },
        { name: "live", permission: "read", scoped: true },
      ],
    } as PluginManifest;
    expect(refusal(() => validateManifest(twice, "s", KERNEL))).toContain('channel "live" is declared twice');
    class A {}
    expect(refusal(() => validateManifest({ ...p("e").manifest, exports: [A] }, "s", KERNEL))).toContain("does not list in providers");
  });

  it("refuses contributions to plugins it does not depend on, or to undeclared extension points", () => {
    const owner = p("owner", { extensionPoints: [{ name: "kinds" }] });
    expect(refusal(() => orderPlugins([owner, p("guest", { contributes: { "owner.kinds": [1] } })], KERNEL))).toContain('does not depend on plugin "owner"');
    expect(refusal(() => orderPlugins([owner, p("guest", { dependsOn: { owner: "*" }, contributes: { "owner.shapes": [1] } })], KERNEL))).toContain(
      'declares no extension point "shapes"',
    );
    expect(orderPlugins([owner, p("guest", { dependsOn: { owner: "*" }, contributes: { "owner.kinds": [1] } })], KERNEL)).toHaveLength(2);
  });
});
