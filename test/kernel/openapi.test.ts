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
