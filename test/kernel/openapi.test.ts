import { fixtureWidgetsPlugin } from "../fixtures/plugins/widgets/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

let k: TestKernel;
beforeAll(async () => {
  k = await startTestKernel({ plugins: [fixtureWidgetsPlugin] });
});
afterAll(async () => {
  await k?.stop();
});

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  security?: unknown[];
}

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
    const spec = (await k.http.get("/api/v1/openapi.json")).body as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(spec.components.schemas.ErrorEnvelope).toBeDefined();
    const problems: string[] = [];
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const codes = Object.keys(op.responses);
        const where = `${method.toUpperCase()} ${path}`;
        if (!codes.some((c) => /^2\d\d$/.test(c))) problems.push(`${where}: no success response`);
        if (!codes.includes("500")) problems.push(`${where}: no 500`);
        if (op.security && !codes.includes("401")) problems.push(`${where}: secured without 401`);
        for (const c of codes.filter((c) => /^[45]\d\d$/.test(c) && !(path === "/api/v1/health" && c === "503"))) {
          const ref = op.responses[c].content?.["application/json"]?.schema?.$ref;
          if (ref !== "#/components/schemas/ErrorEnvelope") problems.push(`${where}: ${c} is not the envelope`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("serves Swagger UI at /api/docs", async () => {
    const res = await k.http.get("/api/docs/");
    expect(res.status).toBe(200);
    expect(res.text).toContain("swagger");
  });
});
