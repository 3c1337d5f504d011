import { Controller } from "@tsed/di";
import { Integer, MinLength, Post, Required, Status } from "@tsed/schema";
import { Body, definePlugin, Permission } from "../../core/index.js";
import { routesMissingFrom } from "../../core/http/openApiDocument.js";
import { startKernel } from "../../core/kernel/Kernel.js";
import { fixtureWidgetsPlugin } from "../fixtures/plugins/widgets/index.js";
import { responseProblems } from "../support/openapi.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

let k: TestKernel;
beforeAll(async () => {
  k = await startTestKernel({ plugins: [fixtureWidgetsPlugin] });
});
afterAll(async () => {
  await k?.stop();
});

describe("OpenAPI document", () => {
  it("is served at /api/v1/openapi.json without a token and covers core and plugin routes", async () => {
    const res = await k.http.get("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(res.body.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    const paths = Object.keys(res.body.paths);
    for (const p of [
      "/api/v1/health",
      "/api/v1/auth/sessions",
      "/api/v1/auth/me",
      "/api/v1/accounts/{id}",
      "/api/v1/tokens",
      "/api/v1/widgets",
      "/api/v1/widgets/{id}",
    ]) {
      expect(paths).toContain(p);
    }
  });

  it("lists a success and error envelopes for every operation; secured ones list 401", async () => {
    expect(responseProblems((await k.http.get("/api/v1/openapi.json")).body)).toEqual([]);
  });

  it("serves Swagger UI at /api/docs", async () => {
    const res = await k.http.get("/api/docs/");
    expect(res.status).toBe(200);
    expect(res.text).toContain("swagger");
  });
});

// Two plugins whose models share a class name, as reports and analysis once did with ScheduleBody.
class Twin {
  @Required() @MinLength(1) name: string;
}
class TwinOther {
  @Required() @Integer() size: number;
}
Object.defineProperty(TwinOther, "name", { value: "Twin" });

@Controller("/twin-a")
class TwinAController {
  @Post("/")
  @Permission("ManageConfig")
  @Status(201, Twin)
  create(@Body() body: Twin): Twin {
    return body;
  }
}

@Controller("/twin-b")
class TwinBController {
  @Post("/")
  @Permission("ManageConfig")
  @Status(201, TwinOther)
  create(@Body() body: TwinOther): TwinOther {
    return body;
  }
}

describe("the document's names", () => {
  it("tags every operation with its plugin, described, and gives it a readable unique id", async () => {
    const doc = (await k.http.get("/api/v1/openapi.json")).body as {
      paths: Record<string, Record<string, { operationId: string; tags: string[] }>>;
      tags: { name: string; description: string }[];
    };
    const ops = Object.values(doc.paths).flatMap((o) => Object.values(o));
    expect(new Set(ops.map((o) => o.operationId)).size).toBe(ops.length);
    expect(doc.paths["/api/v1/widgets"].post).toMatchObject({ operationId: "fixture-widgets.widget.create", tags: ["fixture-widgets"] });
    expect(doc.paths["/api/v1/health"].get).toMatchObject({ operationId: "core.health.get", tags: ["core"] });
    expect(doc.tags.map((t) => t.name)).toEqual(["core", "fixture-widgets"]);
    expect(doc.tags.every((t) => t.description.length > 10)).toBe(true);
  });

  it("refuses to boot when two models would publish one schema name, naming both", async () => {
    const a = definePlugin({ id: "twin-a", version: "1.0.0", kernel: "^0.1.0", controllers: [TwinAController] });
    const b = definePlugin({ id: "twin-b", version: "1.0.0", kernel: "^0.1.0", controllers: [TwinBController] });
    const err = await startKernel({
      env: {},
      overrides: { mode: "skeleton", builtinPlugins: false, port: 0, host: "127.0.0.1", logLevel: "error" },
      plugins: [a, b],
      print: () => undefined,
      logSink: () => undefined,
    }).then(
      async (kernel) => {
        await kernel.stop();
        return null;
      },
      (e: Error) => e,
    );
    expect(err?.message).toMatch(
      /two different models publish the schema name "Twin": one of plugin "twin-a" \(TwinAController\), one of plugin "twin-b" \(TwinBController\)/,
    );
  });

  it("finds a route of the router the document lacks", () => {
    const doc = { openapi: "3.0.3", info: {}, paths: { "/api/v1/x/{id}": { get: {} } }, components: { schemas: {} }, tags: [] };
    expect(
      routesMissingFrom(doc, [
        { method: "get", path: "/api/v1/x/:id" },
        { method: "delete", path: "/api/v1/x/:id" },
      ]),
    ).toEqual(["DELETE /api/v1/x/{id}"]);
  });
});
