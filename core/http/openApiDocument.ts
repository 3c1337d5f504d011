/**
 * The one OpenAPI document of the service, built at boot from every mounted controller, one controller at a time, so
 * that what Ts.ED would merge silently is seen: two different models publishing one schema name (a client typed from
 * the merged schema refuses valid bodies), or a route of the router missing from the document. Either refuses the
 * boot, naming both sides. Tags are plugin ids (with the manifest's description); operation ids read
 * `<plugin>.<controller>.<method>` (`reports.schedule.create`), stable across boots and unique.
 */
import { isDeepStrictEqual } from "node:util";
import type { Type } from "@tsed/core";
import { generateSpec } from "@tsed/schema";

export interface DocumentController {
  owner: string;
  token: Type<unknown>;
}

type Operation = { operationId?: string; tags?: string[] } & Record<string, unknown>;
type Paths = Record<string, Record<string, Operation>>;

export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  paths: Paths;
  components: { schemas: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
  tags: { name: string; description: string }[];
}

export class OpenApiConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OpenApiConflict";
  }
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** An Express route pattern (`/api/v1/nodes/:id`) as the document writes its path (`/api/v1/nodes/{id}`). */
export function documentPath(route: string): string {
  const clean = route.length > 1 ? route.replace(/\/+$/, "") : route;
  return clean.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

export function buildOpenApiDocument(options: {
  controllers: readonly DocumentController[];
  rootPath: string;
  info: Record<string, unknown>;
  securitySchemes?: Record<string, unknown>;
  /** Each owner's description (plugin manifests' `description`), for its tag. */
  tags: ReadonlyMap<string, string>;
}): OpenApiDocument {
  const doc: OpenApiDocument = {
    openapi: "3.0.3",
    info: options.info,
    paths: {},
    components: { schemas: {}, ...(options.securitySchemes ? { securitySchemes: options.securitySchemes } : {}) },
    tags: [],
  };
  const schemaSource = new Map<string, string>();
  const conflicts: string[] = [];
  const owners = new Set<string>();
  for (const { owner, token } of options.controllers) {
    const part = generateSpec({ tokens: [{ token: token as never, rootPath: options.rootPath }], specVersion: "3.0.3" }) as unknown as {
      paths?: Paths;
      components?: { schemas?: Record<string, unknown> };
    };
    const source = `plugin "${owner}" (${token.name})`;
    const prefix = lowerFirst(token.name);
    const stem = lowerFirst(token.name.replace(/Controller$/, ""));
    for (const [path, operations] of Object.entries(part.paths ?? {})) {
      for (const [method, op] of Object.entries(operations)) {
        // A route that binds the whole query object shows a parameter without a name (invalid OpenAPI 3): dropped; such
        // a route lists its parameters with @QueryDoc.
        if (Array.isArray(op.parameters)) op.parameters = (op.parameters as { name?: string }[]).filter((p) => typeof p.name === "string" && p.name !== "");
        const own = op.operationId?.startsWith(prefix) ? op.operationId.slice(prefix.length) : (op.operationId ?? method);
        op.operationId = `${owner}.${stem}.${lowerFirst(own)}`;
        op.tags = [owner];
        const existing = doc.paths[path]?.[method];
        if (existing) conflicts.push(`${method.toUpperCase()} ${path} is declared twice: ${existing.operationId} and ${op.operationId}`);
        (doc.paths[path] ??= {})[method] = op;
      }
    }
    for (const [name, schema] of Object.entries(part.components?.schemas ?? {})) {
      const prior = doc.components.schemas[name];
      if (prior !== undefined && !isDeepStrictEqual(prior, schema)) {
        conflicts.push(
          `two different models publish the schema name "${name}": one of ${schemaSource.get(name)}, one of ${source}; ` +
            `rename one so the name says its plugin (e.g. ${owner.replace(/(^|-)([a-z])/g, (_, _d: string, c: string) => c.toUpperCase())}${name})`,
        );
        continue;
      }
      if (prior === undefined) {
        doc.components.schemas[name] = schema;
        schemaSource.set(name, source);
      }
    }
    owners.add(owner);
  }
  if (conflicts.length) throw new OpenApiConflict(`the OpenAPI document cannot be built: ${conflicts.join("; ")}`);
  openFreeFormObjects(doc.paths);
  openFreeFormObjects(doc.components.schemas);
  doc.tags = [...owners].map((name) => ({ name, description: options.tags.get(name) ?? name }));
  return doc;
}

/** The routes of the router the document does not list (method and path as the document writes them). */
export function routesMissingFrom(doc: OpenApiDocument, routes: readonly { method: string; path: string }[]): string[] {
  return routes
    .map((r) => ({ method: r.method.toLowerCase(), path: documentPath(r.path) }))
    .filter((r) => r.method !== "all" && r.method !== "use" && !doc.paths[r.path]?.[r.method])
    .map((r) => `${r.method.toUpperCase()} ${r.path}`);
}

/**
 * Says `additionalProperties: true` on every object schema that lists no properties (a model's `Record<string, unknown>`
 * field: a report's spec, a tool's params). Ts.ED writes them as a bare `{type: "object"}`, which generators read as
 * "no property allowed" (openapi-typescript: `Record<string, never>`), so a typed client refused the bodies the server takes.
 */
function openFreeFormObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) openFreeFormObjects(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  const schema = node as Record<string, unknown>;
  if (schema.type === "object" && !("properties" in schema) && !("additionalProperties" in schema) && !("$ref" in schema)) {
    schema.additionalProperties = true;
  }
  for (const value of Object.values(schema)) openFreeFormObjects(value);
}
