/** Skeleton mode (no store): the three lists answer [], every other route 503 store_unavailable; nothing is walked. */
import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { topologyPlugin } from "../index.js";

let s: TestKernel;
beforeAll(async () => {
  s = await startTestKernel({ skeleton: true, plugins: [inventoryPlugin, topologyPlugin] });
});
afterAll(async () => {
  await s?.stop();
});

it("answers [] for the lists and 503 store_unavailable elsewhere", async () => {
  const id = randomUUID();
  for (const path of ["/topology/links", "/topology/neighbors/unknown"]) {
    const res = await s.request("GET", path);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: [] });
  }
  expectError(await s.request("GET", `/nodes/${id}/neighbors`), 503, "store_unavailable");
  expectError(await s.request("GET", `/nodes/${id}/upstream`), 503, "store_unavailable");
  expectError(await s.request("PUT", `/nodes/${id}/parent`, { body: { parent_id: randomUUID() } }), 503, "store_unavailable");
  expectError(await s.request("DELETE", `/nodes/${id}/parent`), 503, "store_unavailable");
  expectError(await s.request("POST", "/topology/discover", { body: {} }), 503, "store_unavailable");
  expectError(await s.request("POST", `/topology/neighbors/unknown/${id}/import`, { body: {} }), 503, "store_unavailable");
  // Still 401 without a token.
  expectError(await s.request("GET", "/topology/links", { token: null }), 401, "unauthorized");
});
