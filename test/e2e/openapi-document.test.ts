/**
 * The document every built-in plugin publishes together, as an integrator reads it: every schema named once, every
 * parameter named (the routes that read their whole query list each parameter), tags per plugin, and what the typed
 * client is generated from.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { getJsonSchema, getOperationsRoutes } from "@tsed/schema";
import { CORE_CONTROLLERS } from "../../core/kernel/Kernel.js";
import { isManifest, type PluginManifest } from "../../core/pluginhost/manifest.js";
import { startTestKernel, type TestKernel } from "../../core/testing/index.js";
import { ROOT } from "../support/spawnKernel.js";

let k: TestKernel;
beforeAll(async () => {
  k = await startTestKernel({ skeleton: true, builtinPlugins: true, overrides: { logLevel: "error" } });
}, 60_000);
afterAll(async () => {
  await k?.stop();
});

interface Operation {
  operationId: string;
  tags: string[];
  parameters?: { in: string; name?: string }[];
}

it("names every parameter, and lists the query of the events and flow routes", async () => {
  const doc = (await (await fetch(`${k.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>>; tags: { name: string }[] };
  const ops = Object.entries(doc.paths).flatMap(([path, o]) => Object.entries(o).map(([method, op]) => ({ where: `${method} ${path}`, op })));
  expect(ops.filter(({ op }) => (op.parameters ?? []).some((p) => !p.name)).map(({ where }) => where)).toEqual([]);
  const query = (path: string) => (doc.paths[path].get.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
  expect(query("/api/v1/flow/conversations")).toEqual(["from", "to", "limit", "proto", "port", "peer", "asn", "exporter", "dir"]);
  expect(query("/api/v1/flow/top-as")).toEqual(query("/api/v1/flow/conversations"));
  expect(query("/api/v1/events")).toEqual(expect.arrayContaining(["limit", "cursor", "start", "end", "kind", "node_id", "q", "src", "src_not"]));
  expect(query("/api/v1/events/stats")).toEqual(expect.arrayContaining(["start", "kind", "group_by", "limit", "bucket_secs", "split"]));
  // Tags are the plugins; operation ids are unique and name their plugin.
  expect(doc.tags.map((t) => t.name).sort()).toEqual(
    ["core", "inventory", "polling", "alerts", "notifications", "events", "flows", "forwarding", "analysis", "reports", "ipam", "netcloud", "topology"].sort(),
  );
  expect(new Set(ops.map(({ op }) => op.operationId)).size).toBe(ops.length);
  expect(ops.find(({ where }) => where === "post /api/v1/reports/schedules")?.op.operationId).toBe("reports.schedule.create");
  expect(ops.find(({ where }) => where === "post /api/v1/analysis/schedules")?.op.operationId).toBe("analysis.schedule.create");
});

it("describes every component schema (and counts the properties still without a description)", async () => {
  type Schema = { description?: string; properties?: Record<string, { description?: string }> };
  const doc = (await (await fetch(`${k.url}/api/v1/openapi.json`)).json()) as { components: { schemas: Record<string, Schema> } };
  const schemas = Object.entries(doc.components.schemas);
  expect(schemas.filter(([, s]) => !s.description?.trim()).map(([name]) => name)).toEqual([]);
  // Reported, not asserted: a property whose meaning is obvious (an id, a name, a timestamp) may go without one.
  const props = schemas.flatMap(([name, s]) => Object.entries(s.properties ?? {}).map(([p, v]) => ({ where: `${name}.${p}`, described: !!v.description })));
  console.log(`OpenAPI properties without a description: ${props.filter((p) => !p.described).length} of ${props.length}`);
});

it("declares every query parameter a route's handler binds (compared with what the router binds)", async () => {
  const doc = (await (await fetch(`${k.url}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
  };
  const controllers: unknown[] = [...CORE_CONTROLLERS];
  for (const id of readdirSync(join(ROOT, "plugins"))) {
    const mod = (await import(join(ROOT, "plugins", id, "index.ts"))) as Record<string, unknown>;
    const manifest = Object.values(mod).find(isManifest) as PluginManifest | undefined;
    controllers.push(...(manifest?.controllers ?? []));
  }
  const undeclared: string[] = [];
  let bound = 0;
  for (const c of controllers) {
    for (const op of getOperationsRoutes(c as never)) {
      const path = `/api/v1${String(op.fullPath)}`.replace(/:([A-Za-z0-9_]+)/g, "{$1}").replace(/\/$/, "");
      const documented = new Set((doc.paths[path]?.[op.method.toLowerCase()]?.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name));
      for (const p of op.endpoint.parameters.values()) {
        if (p.paramType !== "QUERY") continue;
        // A named parameter; a query model (its fields); or the whole query object, which must list its names (@QueryDoc).
        const names = p.expression ? [String(p.expression)] : p.type && p.type !== Object ? Object.keys(getJsonSchema(p.type).properties ?? {}) : null;
        if (names === null) {
          if (documented.size === 0) undeclared.push(`${op.method} ${path}: reads the whole query, declares none`);
          continue;
        }
        for (const name of names) {
          bound++;
          if (!documented.has(name)) undeclared.push(`${op.method} ${path}: ${name}`);
        }
      }
    }
  }
  expect(bound).toBeGreaterThan(100);
  expect(undeclared).toEqual([]);
});
