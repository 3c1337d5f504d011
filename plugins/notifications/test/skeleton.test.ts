import { expectError } from "../../../test/support/assertions.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { notificationsPlugin } from "../index.js";

let k: TestKernel;
beforeAll(async () => {
  k = await startTestKernel({ skeleton: true, plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin] });
});
afterAll(() => k?.stop());

describe("notifications in skeleton mode (no store)", () => {
  it("answers 503 store_unavailable to writes and store reads, and the built-in templates still", async () => {
    const auth = { Authorization: `Bearer ${k.adminToken}` };
    const id = "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10";
    expectError(
      await k.http
        .post("/api/v1/routing-rules")
        .set(auth)
        .send({ name: "r", severity: null, channel_ids: [id] }),
      503,
      "store_unavailable",
    );
    expectError(
      await k.http
        .post("/api/v1/notification-channels")
        .set(auth)
        .send({ name: "c", kind: "webhook", config: { url: "http://127.0.0.1:9/" } }),
      503,
      "store_unavailable",
    );
    expectError(await k.http.put(`/api/v1/notification-channels/${id}`).set(auth).send({ enabled: true }), 503, "store_unavailable");
    expectError(await k.http.post(`/api/v1/notification-channels/${id}/test`).set(auth), 503, "store_unavailable");
    expectError(await k.http.get("/api/v1/notification-deliveries").set(auth), 503, "store_unavailable");
    const builtin = await k.http.get("/api/v1/notification-channels/builtin-template?kind=servicedesk").set(auth);
    expect(builtin.status).toBe(200);
    expect(builtin.body).toHaveLength(3);
    expect((await k.http.get("/api/v1/notification-channels/kinds").set(auth)).body.map((x: { kind: string }) => x.kind)).toEqual([
      "email",
      "pager",
      "servicedesk",
      "webhook",
    ]);
  });
});
