import { fixtureWidgetsPlugin } from "../fixtures/plugins/widgets/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { expectEnvelope } from "../support/assertions.js";

let k: TestKernel;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [fixtureWidgetsPlugin] });
});
afterAll(async () => {
  await k?.stop();
});

const auth = () => ({ Authorization: `Bearer ${k.adminToken}` });

describe("error envelope", () => {
  it("answers malformed JSON with 400 malformed_json", async () => {
    const res = await k.http.post("/api/v1/widgets").set(auth()).set("Content-Type", "application/json").send("{not json");
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "malformed_json");
  });

  it("answers wrong types with 400 validation_failed naming the field, without echoing the value", async () => {
    const res = await k.http.post("/api/v1/widgets").set(auth()).send({ name: 42, secret: "do-not-echo-me" });
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "validation_failed");
    expect(res.body.error.message).toContain("name");
    expect(JSON.stringify(res.body)).not.toContain("do-not-echo-me");
  });

  it("answers a missing body with 400", async () => {
    const res = await k.http.post("/api/v1/widgets").set(auth());
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "validation_failed");
  });

  it("answers an unknown route with 404 route_not_found", async () => {
    const res = await k.http.get("/api/v1/no-such-thing").set(auth());
    expect(res.status).toBe(404);
    expectEnvelope(res.body, "route_not_found");
  });

  it("answers a known path with another method with 405 and Allow", async () => {
    const res = await k.http.patch("/api/v1/widgets").set(auth()).send({});
    expect(res.status).toBe(405);
    expectEnvelope(res.body, "method_not_allowed");
    expect(res.headers.allow).toContain("GET");
    expect(res.headers.allow).toContain("POST");
  });

  it("answers a thrown error with 500 internal_error, leaking nothing, logging the detail with the request id", async () => {
    const res = await k.http.get("/api/v1/widgets/boom").set(auth());
    expect(res.status).toBe(500);
    expectEnvelope(res.body, "internal_error");
    expect(JSON.stringify(res.body)).not.toMatch(/hunter2|postgres:|secret internal/);
    const requestId = res.headers["x-request-id"];
    expect(requestId).toBeTruthy();
    expect(res.body.error.message).toContain(requestId);
    const logged = k.logs.find((l) => l.includes('"request failed"') && l.includes(requestId));
    expect(logged).toContain("secret internal detail");
  });
});

describe("query coercion", () => {
  it("still parses integer query parameters", async () => {
    const ok = await k.http.get("/api/v1/accounts?limit=5").set(auth());
    expect(ok.status).toBe(200);
    const bad = await k.http.get("/api/v1/accounts?limit=five").set(auth());
    expect(bad.status).toBe(400);
    expectEnvelope(bad.body, "validation_failed");
  });
});
