import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { netcloudPlugin } from "../index.js";

let s: TestKernel;
beforeAll(async () => {
  s = await startTestKernel({ skeleton: true, plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, netcloudPlugin] });
});
afterAll(async () => {
  await s?.stop();
});

it("answers 503 store_unavailable on every route in skeleton mode, before reaching the platform", async () => {
  const id = randomUUID();
  const auth = { Authorization: `Bearer ${s.adminToken}` };
  const B = "/api/v1/netcloud/orgs";
  expectError(await s.http.post(`${B}/discover`).set(auth).send({ api_key: "k" }), 503, "store_unavailable");
  expectError(await s.http.post(B).set(auth).send({ org_id: "o-1", api_key: "k" }), 503, "store_unavailable");
  expectError(await s.http.get(B).set(auth), 503, "store_unavailable");
  expectError(await s.http.get(`${B}/${id}`).set(auth), 503, "store_unavailable");
  expectError(await s.http.delete(`${B}/${id}`).set(auth), 503, "store_unavailable");
  expectError(await s.http.put(`${B}/${id}/import-settings`).set(auth).send({ import_devices: true, file_by_prefix: false }), 503, "store_unavailable");
  expectError(await s.http.get(`${B}/${id}/networks`).set(auth), 503, "store_unavailable");
  expectError(await s.http.put(`${B}/${id}/networks/N1`).set(auth).send({ watched: true }), 503, "store_unavailable");
});
