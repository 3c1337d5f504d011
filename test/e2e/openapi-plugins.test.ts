import { alertsPlugin } from "../../plugins/alerts/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { responseProblems } from "../support/openapi.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

let k: TestKernel;
beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin] });
});
afterAll(async () => {
  await k?.stop();
});

describe("OpenAPI document of the built-in plugins", () => {
  it("covers the spec's routes", async () => {
    const paths = Object.keys((await k.http.get("/api/v1/openapi.json")).body.paths);
    for (const p of [
      "/api/v1/nodes",
      "/api/v1/node-groups/{id}/pool",
      "/api/v1/discovery/import",
      "/api/v1/reclassify/apply",
      "/api/v1/nodes/{id}/url-check",
      "/api/v1/classification-rules",
      "/api/v1/pins/groups/{group_id}",
      "/api/v1/metrics/interface-top",
      "/api/v1/system/hosts",
      "/api/v1/monitoring-gaps",
      "/api/v1/thresholds",
      "/api/v1/alerts",
      "/api/v1/alerts/ack",
      "/api/v1/alerts/calendar",
      "/api/v1/alerts/history",
      "/api/v1/alerts/top-nodes",
      "/api/v1/alerts/transitions",
      "/api/v1/mutes/bulk",
      "/api/v1/routing-rules",
      "/api/v1/notification-channels/builtin-template",
      "/api/v1/notification-channels/{id}/test",
      "/api/v1/notification-channels/{id}",
    ]) {
      expect(paths).toContain(p);
    }
  });

  it("lists a success and error envelopes for every operation; secured ones list 401", async () => {
    expect(responseProblems((await k.http.get("/api/v1/openapi.json")).body)).toEqual([]);
  });
});
