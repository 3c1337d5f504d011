/**
 * Type tests of the public plugin API (`nms-core`), compiled by `npm run typecheck`: a change that would break a
 * third party's plugin fails to compile here. Each `@ts-expect-error` is a promise that something stays refused.
 * If a change here is intended, it is a change of the plugin API: say so in docs/plugins.md and bump the kernel's minor.
 */
import {
  definePlugin,
  pluginContextToken,
  type ConfigOf,
  type ExtensionRegistry,
  type JobDeclaration,
  type PluginContext,
  type PluginJobs,
  type PluginManifest,
  type PluginMetrics,
  type PluginRealtime,
  type ProviderToken,
} from "nms-core";
import type { AlertTransition } from "nms-core/contracts/alerts";
import type { NodeDirectoryRow } from "nms-core/contracts/inventory";
import type { Sample } from "nms-core/contracts/polling";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<_T extends true>(): void {}

// A config type is derived from its schema: defaults and `required` make a key present, the rest are optional.
const schema = {
  type: "object",
  additionalProperties: false,
  required: ["name"],
  properties: {
    name: { type: "string" },
    port: { type: ["integer", "null"], default: null },
    level: { enum: ["low", "high"], default: "low" },
    tags: { type: "array", items: { type: "string" }, default: [] },
    nested: { type: "object", properties: { on: { type: "boolean", default: true } }, default: {} },
    note: { type: "string" },
  },
} as const;
expectType<
  Equal<ConfigOf<typeof schema>, { name: string; port: number | null; level: "low" | "high"; tags: string[]; nested: { on: boolean }; note?: string }>
>();

// definePlugin types the context's config from the manifest's own schema, written inline or as a constant.
export const typedPlugin = definePlugin({
  id: "typed",
  version: "1.0.0",
  kernel: "^0.1.0",
  dependsOn: { alerts: "^0.1.0" },
  config: { type: "object", properties: { every: { type: "integer", default: 5 } } },
  jobs: [
    {
      name: "tick",
      every: "1 minute",
      handler: async (_job, ctx) => {
        expectType<Equal<typeof ctx.config, { every: number }>>();
      },
    },
  ],
  start(ctx) {
    expectType<Equal<typeof ctx.config, { every: number }>>();
    // Contracts declare their bus events: payloads are typed, unknown events refused.
    ctx.bus.on("alerts.fired", (t) => expectType<Equal<typeof t, AlertTransition>>());
    ctx.bus.on("polling.sample", (e) => expectType<Equal<typeof e.samples, Sample[]>>());
    // @ts-expect-error an event no contract declares
    ctx.bus.on("nobody.said.this", () => undefined);
  },
});
// A manifest typed with its config stays assignable to the untyped one the kernel takes.
export const asGiven: PluginManifest = typedPlugin;

// @ts-expect-error dependsOn maps ids to semver ranges, not a list of ids
definePlugin({ id: "x", version: "1.0.0", kernel: "^0.1.0", dependsOn: ["inventory"] });
// @ts-expect-error a manifest key the kernel does not know
definePlugin({ id: "x", version: "1.0.0", kernel: "^0.1.0", colour: "blue" });
// @ts-expect-error version and kernel are required
definePlugin({ id: "x" });

// The context's members and their types.
expectType<
  Equal<
    keyof PluginContext,
    | "id"
    | "version"
    | "mode"
    | "config"
    | "kernelConfig"
    | "store"
    | "bus"
    | "jobs"
    | "secrets"
    | "realtime"
    | "extensions"
    | "log"
    | "metrics"
    | "reportListener"
    | "get"
  >
>();
expectType<Equal<PluginContext["get"], <T>(token: ProviderToken<T>) => T>>();
expectType<Equal<PluginContext["mode"], "full" | "skeleton">>();
expectType<Equal<PluginContext<{ a: 1 }>["config"], { a: 1 }>>();
expectType<Equal<keyof PluginJobs, "now" | "schedule" | "cancel">>();
expectType<Equal<keyof PluginRealtime, "publish">>();
expectType<Equal<keyof PluginMetrics, "counter" | "gauge" | "histogram">>();
expectType<Equal<PluginContext["metrics"], PluginMetrics>>();
// A metric's label values are typed by its label names.
declare const metrics: PluginMetrics;
const typedCounter = metrics.counter({ name: "things_total", help: "Things.", labelNames: ["kind"] });
typedCounter.inc({ kind: "a" });
// @ts-expect-error a label the metric does not declare
typedCounter.inc({ colour: "blue" });
expectType<Equal<keyof ExtensionRegistry, "get">>();
expectType<Equal<Parameters<JobDeclaration["handler"]>[0], { data: unknown; name: string }>>();

// get() returns an instance of the class it is given.
declare const ctx: PluginContext;
class SomeService {
  ping(): string {
    return "pong";
  }
}
expectType<Equal<ReturnType<typeof ctx.get<SomeService>>, SomeService>>();
export const pong: string = ctx.get(SomeService).ping();

// The context token is a symbol, the same one for the same id.
expectType<Equal<ReturnType<typeof pluginContextToken>, symbol>>();

// Contract views are typed.
expectType<Equal<NodeDirectoryRow["folder_path"], string[]>>();
