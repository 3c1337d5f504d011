/**
 * `@Query()` reads a query model field by field as separate `@QueryParams("field")` did (core/http/params.ts): the same
 * casts, defaults and 400 messages. GET /accounts (AccountListQuery) and GET /tokens (TokenListQuery) are core routes.
 */
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

let k: TestKernel;

beforeAll(async () => {
  k = await startTestKernel();
});
afterAll(async () => {
  await k?.stop();
});

const get = (path: string) => k.http.get(`/api/v1${path}`).set({ Authorization: `Bearer ${k.adminToken}` });
const message = async (path: string) => {
  const res = await get(path);
  expect(res.status).toBe(400);
  return (res.body as { error: { code: string; message: string } }).error;
};

describe("a query model", () => {
  it("casts numbers and takes the class's default for an absent or empty field", async () => {
    expect((await get("/accounts?limit=5")).status).toBe(200);
    expect((await get("/accounts?limit=")).status).toBe(200);
    expect((await get("/accounts")).status).toBe(200);
  });

  it("answers a field that fails its schema as a single parameter would, naming it", async () => {
    expect(await message("/accounts?limit=0")).toEqual({ code: "validation_failed", message: 'Invalid query parameter "limit": value must be >= 1.' });
    expect(await message("/accounts?limit=five")).toEqual({ code: "validation_failed", message: 'Invalid query parameter "limit": value must be integer.' });
    expect(await message("/accounts?limit=1&limit=2")).toEqual({
      code: "validation_failed",
      message: 'Invalid query parameter "limit": value must be integer.',
    });
    expect(await message("/tokens?before_id=nope")).toEqual({
      code: "validation_failed",
      message: 'Invalid query parameter "before_id": value must match format "uuid".',
    });
  });

  it("reports the first failing field in the model's order", async () => {
    expect((await message("/tokens?before_id=nope&limit=0")).message).toBe('Invalid query parameter "limit": value must be >= 1.');
  });

  it("ignores parameters the model does not name", async () => {
    expect((await get("/accounts?zz_unknown=1")).status).toBe(200);
  });
});
